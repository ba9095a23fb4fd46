internal import Glibc

/// Single-flight refreshes. Only one refresh runs per client at a time (so a refresh token is never presented twice
/// concurrently); callers asking for the same key wait and share its result, others wait and then re-check the cache.
/// The leader holds the gate from `join` (`.lead`) to `leave`, which `SilentTokenDriver` always calls.
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

    /// The leader's hold on the gate, given back with `leave`.
    struct Lease: Sendable { let id: Int }

    /// How a caller joined: a cached token (`check`), the lead of a refresh (the caller refreshes, then `leave`s
    /// with its result), or the shared result of another caller's refresh for the same key.
    enum Join {
        case hit(AccessToken)
        case lead(Lease)
        case shared(Result<Outcome, NativeAuthError>)
    }

    /// Joins the single-flight for `key`. `check` (under the gate's lock, before each look at the gate) may answer
    /// from the cache. `deadline` bounds the time spent waiting for another caller's refresh (seconds since the epoch,
    /// as `SystemClock` reads it); past it the caller answers `timeout`. `waiting` is called once (outside the lock)
    /// when the caller first finds another caller's refresh under way. A `.lead` must be given back with `leave`.
    func join(
        key: String,
        deadline: Double,
        isCancelled: () -> Bool = { false },
        waiting: () -> Void = {},
        check: () -> AccessToken?
    ) throws(NativeAuthError) -> Join {
        var announced = false
        pthread_mutex_lock(mutex)
        while true {
            if let hit = check() {
                pthread_mutex_unlock(mutex)
                return .hit(hit)
            }
            guard let a = active else { break }
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
            if let ended = waitForEnd(of: a.id, deadline: deadline, isCancelled: isCancelled) {
                if same { dropWaiter(a.id, keepingResult: true) }
                pthread_mutex_unlock(mutex)
                throw ended
            }
            guard same else { continue }
            let r = results[a.id]
            dropWaiter(a.id, keepingResult: false)
            // A refresh cancelled with the call that made it (before it was sent) is no answer for this caller: it
            // looks again (the cache, another refresh) or refreshes itself.
            if case .failure(let e)? = r, e.code == .cancelled, !isCancelled() { continue }
            pthread_mutex_unlock(mutex)
            return .shared(r ?? .failure(NativeAuthError(.internal, "a shared refresh left no result")))
        }
        nextID += 1
        let id = nextID
        active = (key, id, pthread_self())
        pthread_mutex_unlock(mutex)
        return .lead(Lease(id: id))
    }

    /// Ends the lead of a refresh: its waiters share `result`.
    func leave(_ lease: Lease, _ result: Result<Outcome, NativeAuthError>) {
        pthread_mutex_lock(mutex)
        if active?.id == lease.id { active = nil }
        if (waiters[lease.id] ?? 0) > 0 { results[lease.id] = result }
        pthread_cond_broadcast(cond)
        pthread_mutex_unlock(mutex)
    }

    /// Under the lock: waits until refresh `id` ended (nil), or why the wait ended first (`cancelled`, `timeout`).
    private func waitForEnd(of id: Int, deadline: Double, isCancelled: () -> Bool) -> NativeAuthError? {
        while active?.id == id {
            // Short slices, so that a cancel (the client being freed) ends the wait promptly.
            let now = SystemClock().now()
            if isCancelled() {
                return NativeAuthError(.cancelled, "The call was cancelled while it waited for a refresh.")
            }
            if now >= deadline {
                return NativeAuthError(
                    .timeout,
                    "Another call's token refresh did not finish within this call's timeout."
                )
            }
            _ = wait(until: min(deadline, now + 0.05))
        }
        return nil
    }

    /// Under the lock: one waiter of refresh `id` fewer; the last one takes the result away unless `keepingResult`.
    private func dropWaiter(_ id: Int, keepingResult: Bool) {
        waiters[id, default: 1] -= 1
        if waiters[id] ?? 0 <= 0 {
            waiters.removeValue(forKey: id)
            if !keepingResult { results.removeValue(forKey: id) }
        }
    }
}
