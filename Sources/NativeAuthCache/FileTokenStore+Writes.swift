internal import Glibc
public import NativeAuthCore

/// Writing the file: the document serialised (and sealed) into a temporary file renamed into place — and reserve
/// before you redeem (see `CacheReservation`): the room for the write that stores a refresh's answer is made before
/// the refresh is sent, by the thread that will write it.
extension FileTokenStore {
    /// The calling thread, as reservations are kept.
    static var thisThread: UInt { UInt(pthread_self()) }

    /// Creates and pre-allocates the temporary file of this thread's next write, with room for the file's current
    /// content and `CacheReservation.margin`; `cache_write_failed` when the disk has no room for it, or when another
    /// process holds the cache's write lock for the whole wait (it stopped or hung: the write would wait as long, and
    /// fail, after the server had rotated the refresh token). When the file system cannot reserve (a read-only or
    /// unwritable directory, no fallocate), nothing is reserved: the write reports its own failure then, as before.
    public func reserveWrite() throws(NativeAuthError) {
        let me = Self.thisThread
        try state.withLock { s throws(NativeAuthError) in
            s.reserved.removeValue(forKey: me)?.discard()
            do { try FileTokenStore.Files.makeDirectories(FileTokenStore.Files.directory(of: path)) } catch { return }
            let lock: CacheLock
            switch CacheLock.taken(lockPath) {
            case .success(let l): lock = l
            case .failure(.heldElsewhere(let waited)): throw Self.lockedByAnother(waited)
            case .failure(.failed): return
            }
            defer { lock.release() }
            FileTokenStore.Files.removeStaleTemporaries(path)
            var st = stat()
            let current = stat(path, &st) == 0 ? max(Int(st.st_size), 0) : 0
            s.reserved[me] = try CacheReservation.make(for: path, bytes: current + CacheReservation.margin)
        }
    }

    static func lockedByAnother(_ waited: Double) -> NativeAuthError {
        NativeAuthError(
            .cacheWriteFailed,
            "The token cache file is locked by another process that has not let go of it for \(Int(waited)) s "
                + "(stopped or hung): the refresh was not sent, and the sign-in is unchanged. Try again once that "
                + "process has ended or resumed."
        )
    }

    /// Gives back this thread's reservation if no write used it.
    public func releaseReservedWrite() {
        let me = Self.thisThread
        state.withLock { s in s.reserved.removeValue(forKey: me)?.discard() }
    }

    /// Serialises (and seals) `document` and replaces the file with it (through the reserved file, when there is one).
    func write(
        _ document: MSALCacheFormat.Document,
        into reservation: CacheReservation? = nil
    ) throws(NativeAuthError) -> FileSignature? {
        if let encryption {
            var bytes = document.serialized()
            defer { bytes.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } } }
            var sealed = try encryption.seal(bytes)
            defer { sealed.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } } }
            return try FileTokenStore.Files.replace(path, with: sealed, into: reservation)
        }
        // Unchanged runs of the file are written from where they are; only new bytes are held apart.
        let pieces = document.pieces()
        var owned: [UnsafeMutableRawBufferPointer] = []
        defer {
            for b in owned {
                if let p = b.baseAddress { wipeMemory(p, b.count) }
                b.deallocate()
            }
        }
        var parts: [UnsafeRawBufferPointer] = []
        parts.reserveCapacity(pieces.count)
        for piece in pieces {
            switch piece {
            case .range(let r): parts.append(document.source.slice(r))
            case .bytes(let b):
                let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, b.count), alignment: 1)
                b.withUnsafeBytes {
                    if let src = $0.baseAddress, let dst = copy.baseAddress {
                        dst.copyMemory(from: src, byteCount: b.count)
                    }
                }
                owned.append(copy)
                parts.append(UnsafeRawBufferPointer(rebasing: copy[0..<b.count]))
            }
        }
        return try FileTokenStore.Files.replace(path, with: parts, into: reservation)
    }
}
