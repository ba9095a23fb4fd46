internal import Glibc
internal import NativeAuthCore
internal import NativeAuthCrypto
import Synchronization

/// The exclusive refresh lock of a cache file (see `FileTokenStore.acquireRefreshLock`): `flock(LOCK_EX)` on a lock
/// file that stays in place, taken by polling so that the wait ends at a deadline or on a cancel.
final class RefreshLock {
    private var fd: Int32

    /// `waiting` is called once, when the lock is found held (before the first wait).
    init(
        _ path: String,
        deadline: Double,
        isCancelled: () -> Bool,
        waiting: () -> Void = {}
    ) throws(NativeAuthError) {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            if e == ELOOP {
                throw NativeAuthError(.cacheInsecure, "The token cache's refresh lock file is a symbolic link.")
            }
            throw NativeAuthError(
                .cacheWriteFailed,
                "The token cache's refresh lock file could not be opened (\(FileTokenStore.Files.errnoText(e)))."
            )
        }
        var delay: UInt32 = 200  // microseconds
        var waited = false
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            guard e == EWOULDBLOCK || e == EINTR else {
                close(fd)
                throw NativeAuthError(
                    .cacheWriteFailed,
                    "The token cache's refresh lock could not be taken (\(FileTokenStore.Files.errnoText(e)))."
                )
            }
            if isCancelled() {
                close(fd)
                throw NativeAuthError(.cancelled, "The call was cancelled while it waited for another refresh.")
            }
            guard SystemClock().now() < deadline else {
                close(fd)
                throw NativeAuthError(
                    .timeout,
                    "Another process's token refresh did not finish within this call's timeout."
                )
            }
            if !waited {
                waited = true
                waiting()
            }
            usleep(delay)
            delay = min(delay * 2, 5000)
        }
        self.fd = fd
    }

    func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }

    deinit { release() }
}

/// A held refresh lock (`FileTokenStore.acquireRefreshLock`): the file lock, if one could be taken, and this thread's
/// note that it holds it. `release()` unlocks once; a hold dropped unreleased unlocks on deinit.
final class RefreshLockHeld: RefreshLockHold, @unchecked Sendable {  // released once: the `released` exchange
    private let lock: RefreshLock?
    private let note: HeldRefreshLocks.Note
    private let released = Atomic(false)

    init(_ path: String, _ lock: RefreshLock?) {
        self.lock = lock
        note = HeldRefreshLocks.insert(path)
    }

    func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        note.remove()
        lock?.release()
    }

    deinit { release() }
}

/// The refresh locks each thread holds (by lock file path): a call from a callback on that thread that needs one of
/// them again is answered at once (`reentrant_call`) instead of waiting for itself.
enum HeldRefreshLocks {
    fileprivate final class Paths: Sendable {
        let set = Mutex<Set<String>>([])
    }

    /// One thread's note that it holds a path's lock; `remove()` takes it out of that thread's set (from any thread).
    struct Note: Sendable {
        fileprivate let paths: Paths
        let path: String
        func remove() { _ = paths.set.withLock { $0.remove(path) } }
    }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { p in
            if let p { Unmanaged<Paths>.fromOpaque(p).release() }
        }
        return k
    }()

    private static var current: Paths {
        if let p = pthread_getspecific(key) { return Unmanaged<Paths>.fromOpaque(p).takeUnretainedValue() }
        let paths = Paths()
        pthread_setspecific(key, Unmanaged.passRetained(paths).toOpaque())
        return paths
    }

    static func holds(_ path: String) -> Bool { current.set.withLock { $0.contains(path) } }
    static func insert(_ path: String) -> Note {
        let paths = current
        paths.set.withLock { _ = $0.insert(path) }
        return Note(paths: paths, path: path)
    }
}

/// An advisory lock on the sidecar `<path>.lockfile` (the name msal-extensions uses): `flock(LOCK_EX)`, released when
/// the holder ends however it ends. The holder removes the file before unlocking, as msal-extensions does; a process
/// that then finds it locked a removed file tries again.
final class CacheLock {
    private let fd: Int32
    private let path: String

    /// Why the lock was not taken.
    enum Failure: Error {
        /// Another process held it for the whole wait (a writer that stopped or hung: live writers hold it for
        /// milliseconds).
        case heldElsewhere(Double)
        case failed(NativeAuthError)

        var error: NativeAuthError {
            switch self {
            case .heldElsewhere(let timeout):
                return NativeAuthError(
                    .cacheWriteFailed,
                    "The token cache lock is held by another process (waited \(Int(timeout)) s)."
                )
            case .failed(let e): return e
            }
        }
    }

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    /// Waits up to `timeout` seconds for the lock.
    convenience init(_ path: String, timeout: Double = 10) throws(NativeAuthError) {
        switch Self.take(path, timeout: timeout) {
        case .success(let fd): self.init(fd: fd, path: path)
        case .failure(let why): throw why.error
        }
    }

    /// As `init(_:timeout:)`, answering why the lock was not taken instead of an error.
    static func taken(_ path: String, timeout: Double = 10) -> Result<CacheLock, Failure> {
        Self.take(path, timeout: timeout).map { CacheLock(fd: $0, path: path) }
    }

    /// The descriptor of the locked lock file.
    private static func take(_ path: String, timeout: Double) -> Result<Int32, Failure> {
        var delay: UInt32 = 100  // microseconds
        var waited = 0.0
        while true {
            let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                return .failure(
                    .failed(
                        NativeAuthError(
                            .cacheWriteFailed,
                            "The token cache lock file could not be opened (\(FileTokenStore.Files.errnoText(errno)))."
                        )
                    )
                )
            }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                var mine = stat()
                var current = stat()
                if fstat(fd, &mine) == 0, stat(path, &current) == 0, mine.st_ino == current.st_ino,
                    mine.st_dev == current.st_dev
                {
                    return .success(fd)
                }
                close(fd)  // the previous holder removed it: lock the file that is there now
                continue
            }
            let e = errno
            close(fd)
            guard e == EWOULDBLOCK || e == EINTR else {
                return .failure(
                    .failed(
                        NativeAuthError(
                            .cacheWriteFailed,
                            "The token cache lock could not be taken (\(FileTokenStore.Files.errnoText(e)))."
                        )
                    )
                )
            }
            guard waited < timeout else { return .failure(.heldElsewhere(timeout)) }
            usleep(delay)
            waited += Double(delay) / 1e6
            delay = min(delay * 2, 2000)
        }
    }

    private var held = true

    /// Removes the lock file and unlocks (also done when the lock goes out of scope).
    func release() {
        guard held else { return }
        held = false
        unlink(path)
        flock(fd, LOCK_UN)
        close(fd)
    }

    deinit { release() }
}
