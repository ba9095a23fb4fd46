internal import Glibc
internal import NativeAuthCore
internal import NativeAuthCrypto

/// Writing the cache file: atomic replacement (a temporary file in the same directory, written, fsync'd and renamed
/// over the file), into room reserved beforehand when there is a reservation (`CacheReservation`), and the sweep of
/// temporary files that killed writers left behind.
extension FileTokenStore.Files {
    /// Replaces the file at `path` with `bytes` atomically: a temporary file (0600) in the same directory, written and
    /// fsync'd, then renamed over the file. Answers the new file's signature. (The directory is not fsync'd: a machine
    /// that loses power right after may come back with the previous file — never with a partial one.)
    static func replace(
        _ path: String,
        with bytes: [UInt8],
        into reservation: CacheReservation? = nil
    ) throws(NativeAuthError) -> FileSignature? {
        try bytes.withUnsafeBytes { b in
            Result { () throws(NativeAuthError) in try replace(path, with: [b], into: reservation) }
        }.get()
    }

    /// `replace(_:with:)` with the contents given as consecutive buffers (written with `writev`, not copied). With a
    /// reservation, its temporary file is the one written (truncated to the real size first: the room allocated
    /// before it stays allocated), and it is used up whatever happens.
    static func replace(
        _ path: String,
        with parts: [UnsafeRawBufferPointer],
        into reservation: CacheReservation? = nil
    ) throws(NativeAuthError) -> FileSignature? {
        if let reservation { return try reservation.replace(path, with: parts) }
        let random = (try? SecureRandom.bytes(6)) ?? []
        let suffix = random.isEmpty ? String(time(nil), radix: 16) : Base64.urlEncode(random)
        let temp = "\(path).tmp-\(getpid())-\(suffix)"
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw writeFailed(errno) }
        return try finish(fd, temp, path, parts)
    }

    static func writeFailed(_ e: Int32) -> NativeAuthError {
        NativeAuthError(.cacheWriteFailed, "The token cache file could not be written (\(errnoText(e))).")
    }

    /// Writes `parts` to the temporary file `temp` (open on `fd`, at its start), fsyncs it, closes it and renames it
    /// over `path`; on any failure the temporary file is removed.
    static func finish(
        _ fd: Int32,
        _ temp: String,
        _ path: String,
        _ parts: [UnsafeRawBufferPointer]
    ) throws(NativeAuthError) -> FileSignature? {
        var ok = false
        defer { if !ok { unlink(temp) } }
        if let e = writeAll(fd, parts) {
            close(fd)
            throw writeFailed(e)
        }
        if fsync(fd) != 0 {
            let e = errno
            close(fd)
            throw writeFailed(e)
        }
        if close(fd) != 0 { throw writeFailed(errno) }
        if rename(temp, path) != 0 { throw writeFailed(errno) }
        ok = true
        return FileSignature.of(path)
    }

    /// Writes every byte of `parts` with `writev` (short writes resumed); the errno of a failure, nil on success.
    private static func writeAll(_ fd: Int32, _ parts: [UnsafeRawBufferPointer]) -> Int32? {
        var vectors = parts.filter { $0.count > 0 }.map {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
        }
        var next = 0
        while next < vectors.count {
            let batch = min(vectors.count - next, 1024)
            let n = vectors.withUnsafeMutableBufferPointer { v -> Int in
                guard let base = v.baseAddress else { return 0 }
                return writev(fd, base + next, Int32(batch))
            }
            if n <= 0 {
                if n < 0 && errno == EINTR { continue }
                return n < 0 ? errno : EIO
            }
            // Skip what was written (a short write leaves part of a buffer).
            var left = n
            while left > 0 && next < vectors.count {
                if left >= vectors[next].iov_len {
                    left -= vectors[next].iov_len
                    next += 1
                } else {
                    vectors[next].iov_base = vectors[next].iov_base.map { $0 + left }
                    vectors[next].iov_len -= left
                    left = 0
                }
            }
        }
        return nil
    }

    /// Removes temporary files that writers killed before their rename left behind. Called under the lock: every
    /// cooperating writer creates its temporary file only while it holds the lock, so any that exists then is stale —
    /// except a reservation (`CacheReservation`), which outlives the lock: one is stale only when no process holds
    /// its `flock` (its owner's ended).
    static func removeStaleTemporaries(_ path: String) {
        let dir = directory(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let prefix = name + ".tmp-"
        let reserved = name + CacheReservation.infix
        guard let d = opendir(dir) else { return }
        defer { closedir(d) }
        while let e = readdir(d) {
            let entry = withUnsafeBytes(of: e.pointee.d_name) { raw -> String in
                guard let base = raw.baseAddress else { return "" }
                return String(cString: base.assumingMemoryBound(to: CChar.self))
            }
            if entry.hasPrefix(prefix) {
                unlinkat(dirfd(d), entry, 0)
            } else if entry.hasPrefix(reserved) {
                let fd = openat(dirfd(d), entry, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
                guard fd >= 0 else {
                    if errno == ELOOP { unlinkat(dirfd(d), entry, 0) }  // a symbolic link: never a reservation
                    continue
                }
                if flock(fd, LOCK_EX | LOCK_NB) == 0 { unlinkat(dirfd(d), entry, 0) }
                close(fd)
            }
        }
    }
}
