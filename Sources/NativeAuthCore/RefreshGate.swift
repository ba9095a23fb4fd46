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

    /// Waits on the condition until another thread signals or `deadline` (CLOCK_REALTIME seconds) passes; false
    /// on timeout. A caller waiting for someone else's refresh never waits longer than its own request would.
    private func wait(until deadline: Double) -> Bool {
        var ts = timespec()
        ts.tv_sec = Int(deadline)
        ts.tv_nsec = Int((deadline - Double(Int(deadline))) * 1e9)
        return pthread_cond_timedwait(cond, mutex, &ts) != ETIMEDOUT
    }

    /// Returns `(token, fromCache)`. `deadline` bounds the time spent waiting for another caller's refresh
    /// (seconds since the epoch, as `SystemClock` reads it); past it the caller answers `timeout`.
    func run(
        key: String,
        deadline: Double,
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
                var timedOut = false
                while active?.id == a.id && !timedOut { timedOut = !wait(until: deadline) }
                if timedOut && active?.id == a.id {
                    if same {
                        waiters[a.id, default: 1] -= 1
                        if waiters[a.id] ?? 0 <= 0 { waiters.removeValue(forKey: a.id) }
                    }
                    pthread_mutex_unlock(mutex)
                    throw NativeAuthError(
                        .timeout,
                        "Another call's token refresh did not finish within this call's timeout."
                    )
                }
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
