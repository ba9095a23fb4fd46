internal import Glibc

/// Single-flight refreshes. Only one refresh runs per client at a time (so a refresh token is never presented twice
/// concurrently); callers asking for the same key wait and share its result, others wait and then re-check the cache.
/// A refresh that ended `cancelled` (its own call was cancelled before it sent anything) is not shared: its waiters
/// look again.
///
/// A caller on the thread that is itself making the refresh (a log callback that called back into the library)
/// would wait for itself: it is answered `reentrant_call` at once. Waits end at the caller's deadline (`timeout`) or
/// when `isCancelled` says so (`cancelled`, checked at least every 50 ms).
final class RefreshGate: @unchecked Sendable {  // all state is guarded by `mutex`
    typealias Outcome = (token: AccessToken, fromCache: Bool)

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var active: (key: String, id: Int, owner: pthread_t)? = nil
    private var nextID = 0
    private var waiters: [Int: Int] = [:]
    private var results: [Int: Result<Outcome, NativeAuthError>] = [:]

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
    /// on timeout.
    private func wait(until deadline: Double) -> Bool {
        var ts = timespec()
        ts.tv_sec = Int(deadline)
        ts.tv_nsec = Int((deadline - Double(Int(deadline))) * 1e9)
        return pthread_cond_timedwait(cond, mutex, &ts) != ETIMEDOUT
    }

    static func reentrant() -> NativeAuthError {
        NativeAuthError(
            .reentrantCall,
            "This call was made from inside a callback on the thread that is refreshing a token; it would wait for "
                + "itself. Call again after the callback returned."
        )
    }

    /// Returns `refresh`'s outcome, or the shared outcome of another caller's refresh for the same key (`check`
    /// may answer from the cache first). `deadline` bounds the time spent waiting for another caller's refresh
    /// (seconds since the epoch, as `SystemClock` reads it); past it the caller answers `timeout`. `waiting` is
    /// called once (outside the lock) when the caller first finds another caller's refresh under way.
    func run(
        key: String,
        deadline: Double,
        isCancelled: () -> Bool = { false },
        waiting: () -> Void = {},
        check: () -> AccessToken?,
        refresh: () throws(NativeAuthError) -> Outcome
    ) throws(NativeAuthError) -> Outcome {
        var announced = false
        pthread_mutex_lock(mutex)
        while true {
            if let hit = check() {
                pthread_mutex_unlock(mutex)
                return (hit, true)
            }
            if let a = active {
                if pthread_equal(a.owner, pthread_self()) != 0 {
                    pthread_mutex_unlock(mutex)
                    throw Self.reentrant()
                }
                if !announced {
                    announced = true
                    pthread_mutex_unlock(mutex)
                    waiting()
                    pthread_mutex_lock(mutex)
                    continue
                }
                let same = a.key == key
                if same { waiters[a.id, default: 0] += 1 }
                var ended: NativeAuthError? = nil
                while active?.id == a.id && ended == nil {
                    // Short slices, so that a cancel (the client being freed) ends the wait promptly.
                    let now = SystemClock().now()
                    if isCancelled() {
                        ended = NativeAuthError(.cancelled, "The call was cancelled while it waited for a refresh.")
                    } else if now >= deadline {
                        ended = NativeAuthError(
                            .timeout,
                            "Another call's token refresh did not finish within this call's timeout."
                        )
                    } else {
                        _ = wait(until: min(deadline, now + 0.05))
                    }
                }
                if let ended, active?.id == a.id {
                    if same {
                        waiters[a.id, default: 1] -= 1
                        if waiters[a.id] ?? 0 <= 0 { waiters.removeValue(forKey: a.id) }
                    }
                    pthread_mutex_unlock(mutex)
                    throw ended
                }
                if same {
                    let r = results[a.id]
                    waiters[a.id, default: 1] -= 1
                    if waiters[a.id] ?? 0 <= 0 {
                        waiters.removeValue(forKey: a.id)
                        results.removeValue(forKey: a.id)
                    }
                    // A refresh cancelled with the call that made it (before it was sent) is no answer for this
                    // caller: it looks again (the cache, another refresh) or refreshes itself.
                    if case .failure(let e)? = r, e.code == .cancelled, !isCancelled() { continue }
                    pthread_mutex_unlock(mutex)
                    guard let r else { throw NativeAuthError(.internal, "a shared refresh left no result") }
                    return try r.get()
                }
                continue
            }
            nextID += 1
            let id = nextID
            active = (key, id, pthread_self())
            pthread_mutex_unlock(mutex)
            let r: Result<Outcome, NativeAuthError>
            do { r = .success(try refresh()) } catch { r = .failure(error) }
            pthread_mutex_lock(mutex)
            active = nil
            if (waiters[id] ?? 0) > 0 { results[id] = r }
            pthread_cond_broadcast(cond)
            pthread_mutex_unlock(mutex)
            return try r.get()
        }
    }
}
