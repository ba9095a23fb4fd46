internal import Glibc
internal import NativeAuthCore
internal import NativeAuthCrypto

/// Room for the next write of the cache file, made before a refresh token is redeemed ("reserve before you redeem").
///
/// A server that rotates refresh tokens has made the cached one worthless once it answered a refresh: if the answer
/// cannot then be written (a full disk), the file keeps the redeemed token and the next process is signed out. So
/// before the refresh is sent, the temporary file of the write that will store its answer is created and
/// pre-allocated (`posix_fallocate`) with room for the file's current content and the new tokens: with the disk
/// full, the refresh is refused (`cache_write_failed`) and nothing is lost. The write then fills that file
/// (truncated to the real size: the room before it stays allocated), fsyncs it and renames it into place.
///
/// The file is `<cache>.reserved-<pid>-<random>`, created under the cache's write lock and held with `flock` until it
/// is renamed or removed: writers sweeping stale temporary files (`FileTokenStore.Files.removeStaleTemporaries`, under
/// the write lock) remove a reservation only when nobody holds it — its process ended. Older writers, which know only
/// `.tmp-` files, leave it alone.
final class CacheReservation: @unchecked Sendable {  // used by one thread at a time, under the store's lock
    /// What the reserved file's name adds to the cache file's.
    static let infix = ".reserved-"

    /// The room reserved beyond the file's current size, for the new tokens (their sizes are unknown until the
    /// answer comes). A refresh adds at most an access token, a refresh token and an ID token to the file (each
    /// replacing an entry of its kind, or the access tokens of overlapping scopes) and rewrites the account: Entra's
    /// are about 1–2 KB (refresh token), 1.5–4 KB (access token) and 1–2 KB (ID token), at most about 10 KB each with
    /// a long list of groups, plus about 1 KB of fields per entry. 64 KiB is twice the largest of those together. A
    /// bigger answer (a provider's oversized tokens) is written past the reservation, without its guarantee.
    static let margin = 64 << 10

    let temp: String
    private var fd: Int32
    let bytes: Int

    private init(fd: Int32, temp: String, bytes: Int) {
        self.fd = fd
        self.temp = temp
        self.bytes = bytes
    }

    deinit { discard() }

    static func noRoom(_ e: Int32) -> Bool { e == ENOSPC || e == EDQUOT || e == EFBIG }

    static func full(_ e: Int32) -> NativeAuthError {
        NativeAuthError(
            .cacheWriteFailed,
            "The token cache file has no room for refreshed tokens (\(FileTokenStore.Files.errnoText(e))): the refresh "
                + "was not sent, and the sign-in is unchanged. Try again once there is space."
        )
    }

    /// Creates and pre-allocates the reserved file for `path` (the caller holds the cache's write lock): `bytes`
    /// of room. Throws `cache_write_failed` when there is no room; nil when the file system cannot reserve (the
    /// directory cannot be written, fallocate is not supported): the write then goes ahead unreserved, and reports
    /// its own failure.
    static func make(for path: String, bytes: Int) throws(NativeAuthError) -> CacheReservation? {
        let random = (try? SecureRandom.bytes(6)) ?? []
        let suffix = random.isEmpty ? String(time(nil), radix: 16) : Base64.urlEncode(random)
        let temp = "\(path)\(infix)\(getpid())-\(suffix)"
        let fd = open(temp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            if noRoom(e) { throw full(e) }
            return nil
        }
        // Held until the file is renamed or removed: the sweep of another writer leaves it alone meanwhile.
        _ = flock(fd, LOCK_EX | LOCK_NB)
        let rc = posix_fallocate(fd, 0, off_t(bytes))
        guard rc == 0 else {
            unlink(temp)
            close(fd)
            if noRoom(rc) { throw full(rc) }
            return nil
        }
        return CacheReservation(fd: fd, temp: temp, bytes: bytes)
    }

    /// Writes `parts` as the new file through the reserved one (see `FileTokenStore.Files.replace`); the reservation is
    /// used up.
    func replace(_ path: String, with parts: [UnsafeRawBufferPointer]) throws(NativeAuthError) -> FileSignature? {
        let fd = self.fd
        self.fd = -1
        guard fd >= 0 else { throw NativeAuthError(.internal, "a cache reservation was used twice") }
        let total = parts.reduce(0) { $0 + $1.count }
        guard ftruncate(fd, off_t(total)) == 0, lseek(fd, 0, SEEK_SET) == 0 else {
            let e = errno
            unlink(temp)
            close(fd)
            throw FileTokenStore.Files.writeFailed(e)
        }
        return try FileTokenStore.Files.finish(fd, temp, path, parts)
    }

    /// Gives the room back (the file is removed).
    func discard() {
        guard fd >= 0 else { return }
        unlink(temp)
        close(fd)
        fd = -1
    }
}
