internal import Glibc

/// A readers–writer lock (pthread_rwlock_t, writers preferred so a stream of readers cannot starve them). Readers do
/// not block each other, which keeps the cached-token path free of contended locks when many threads share a client.
final class ReadWriteLock: @unchecked Sendable {  // the pthread object is the synchronisation
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        var attr = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attr)
        pthread_rwlockattr_setkind_np(&attr, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        pthread_rwlock_init(lock, &attr)
        pthread_rwlockattr_destroy(&attr)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func withReadLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    func withWriteLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}

/// A per-thread value (pthread keys; Swift has no thread-local storage of its own on Linux).
final class ThreadLocal: @unchecked Sendable {  // each thread sees only its own slot
    private var key = pthread_key_t()

    init() { pthread_key_create(&key, nil) }
    deinit { pthread_key_delete(key) }

    var value: UnsafeMutableRawPointer? {
        get { pthread_getspecific(key) }
        set { pthread_setspecific(key, newValue) }
    }
}
