internal import Glibc

/// Single-flight refreshes. Only one refresh runs per client at a time (so a refresh token is never presented twice
/// concurrently); callers asking for the same key wait and share its result, others wait and then re-check the cache.
final class RefreshGate: @unchecked Sendable {  // all state is guarded by `mutex`
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var active: (key: String, id: Int)? = nil
    private var nextID = 0
    private var waiters: [Int: Int] = [:]
    private var results: [Int: Result<AccessToken, NativeAuthError>] = [:]

    init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Returns `(token, fromCache)`.
    func run(
        key: String,
        check: () -> AccessToken?,
        refresh: () throws(NativeAuthError) -> AccessToken
    ) throws(NativeAuthError) -> (AccessToken, Bool) {
        pthread_mutex_lock(mutex)
        while true {
            if let hit = check() {
                pthread_mutex_unlock(mutex)
                return (hit, true)
            }
            if let a = active {
                let same = a.key == key
                if same { waiters[a.id, default: 0] += 1 }
                while active?.id == a.id { pthread_cond_wait(cond, mutex) }
                if same {
                    let r = results[a.id]
                    waiters[a.id, default: 1] -= 1
                    if waiters[a.id] ?? 0 <= 0 {
                        waiters.removeValue(forKey: a.id)
                        results.removeValue(forKey: a.id)
                    }
                    pthread_mutex_unlock(mutex)
                    guard let r else { throw NativeAuthError(.internal, "a shared refresh left no result") }
                    return (try r.get(), false)
                }
                continue
            }
            nextID += 1
            let id = nextID
            active = (key, id)
            pthread_mutex_unlock(mutex)
            let r: Result<AccessToken, NativeAuthError>
            do { r = .success(try refresh()) } catch { r = .failure(error) }
            pthread_mutex_lock(mutex)
            active = nil
            if (waiters[id] ?? 0) > 0 { results[id] = r }
            pthread_cond_broadcast(cond)
            pthread_mutex_unlock(mutex)
            return (try r.get(), false)
        }
    }
}
