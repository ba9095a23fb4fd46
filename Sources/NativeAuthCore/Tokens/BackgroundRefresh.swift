internal import Glibc

/// Refreshes that outlive the started call that sent them.
///
/// A refresh-token grant that reached the server has redeemed the refresh token: on a server that rotates refresh
/// tokens the old one is dead from then on, and the answer carries the only live one. Aborting the transfer when the
/// call is cancelled would throw that answer away and sign the user out. So a started call (one with a
/// `CallCancellation`) runs its refresh on a thread of its own, under a cancellation of its own that follows the
/// call's until the request is about to be sent (`sending()`) and refuses it from then on:
/// - cancelled before that, the refresh ends at once (`cancelled`) and nothing was sent;
/// - cancelled after, the refresh finishes — bounded by the request timeout — and its result is stored and shared
///   with the calls waiting for it (it keeps the single-flight gate and the cache file's refresh lock until then),
///   while the cancelled call answers `cancelled` at once.
///
/// A blocking call (no `CallCancellation`) refreshes on its own thread as before: nothing can abort its transfer.
/// Log lines of a background refresh reach the host's log callback from that refresh's thread. `na_client_free`
/// waits for the client's background refreshes (`drain`), so no log line reaches the host after it returned.
final class BackgroundRefreshes: @unchecked Sendable {  // all state is guarded by `mutex`
    typealias Outcome = RefreshGate.Outcome

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let ended: UnsafeMutablePointer<pthread_cond_t>
    /// Refreshes started and not finished.
    private var running = 0
    /// Threads running one of them.
    private var threads: Set<UInt> = []
    /// Those of them inside `na_client_free` (called from a log callback of their refresh): `drain` does not wait for
    /// them — one may be waiting for the caller of `drain` (a started call's callback freeing the client too).
    private var freeing: Set<UInt> = []

    init() {
        mutex = .allocate(capacity: 1)
        ended = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ended, nil)
    }

    deinit {
        pthread_cond_destroy(ended)
        pthread_mutex_destroy(mutex)
        ended.deallocate()
        mutex.deallocate()
    }

    /// The refresh request is about to be sent: past this point a cancel of the call no longer reaches it. Throws
    /// `cancelled` (nothing is sent) when the call was cancelled before. Outside a started call, nothing happens.
    static func sending() throws(NativeAuthError) {
        guard let call = CallCancellation.current, !call.commitNow() else { return }
        throw .callCancelled("The call was cancelled before its token refresh was sent; nothing was sent.")
    }

    /// Runs `body` (a refresh, shared through the gate) for the calling thread: on a thread of its own when the
    /// calling thread runs a started call (see the type's documentation), else right here — also on a background
    /// refresh's own thread (a log callback calling back), where the gate answers `reentrant_call`.
    func run(
        logger: Logger,
        _ body: @escaping @Sendable () throws(NativeAuthError) -> Outcome
    ) throws(NativeAuthError) -> Outcome {
        guard let call = CallCancellation.current, !call.isBackgroundRefresh else { return try body() }
        if call.isCancelled { throw .callCancelled("The call was cancelled before its token refresh began.") }
        let job = Job(body)
        // The call's cancel reaches the refresh (until it is sent) and the waiting caller, at once.
        let waker = call.addWaker {
            _ = job.cancellation.cancel()
            job.wake()
        }
        defer { call.removeWaker(waker) }
        guard start(job, logger: logger) else {
            // No thread to be had: the refresh runs here, and a cancel after it was sent waits for its end.
            return try Self.perform(job).get()
        }
        return try job.wait(for: call)
    }

    /// Waits until every background refresh has finished (each is bounded by the request timeout and the cache
    /// file's lock wait) — except one running on the calling thread (a log callback freeing the client), and those
    /// whose threads are themselves freeing the client (`whileFreeing`).
    func drain() {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let me = UInt(pthread_self())
        while running > (threads.contains(me) ? 1 : 0) + freeing.subtracting([me]).count {
            pthread_cond_wait(ended, mutex)
        }
    }

    /// Runs `body` (`na_client_free`) marking the calling thread, when it runs one of these refreshes, as freeing the
    /// client: another thread's `drain` does not wait for it meanwhile.
    func whileFreeing<R>(_ body: () -> R) -> R {
        let me = UInt(pthread_self())
        pthread_mutex_lock(mutex)
        let marked = threads.contains(me) && freeing.insert(me).inserted
        if marked { pthread_cond_broadcast(ended) }
        pthread_mutex_unlock(mutex)
        defer {
            if marked {
                pthread_mutex_lock(mutex)
                freeing.remove(me)
                pthread_mutex_unlock(mutex)
            }
        }
        return body()
    }

    // MARK: - The refresh's thread

    /// One refresh and its result, shared by the caller and the thread running it.
    private final class Job: @unchecked Sendable {  // `result` and `callerLeft` are guarded by `mutex`
        let body: @Sendable () throws(NativeAuthError) -> Outcome
        let cancellation = CallCancellation(backgroundRefresh: true)
        private let mutex: UnsafeMutablePointer<pthread_mutex_t> = .allocate(capacity: 1)
        private let cond: UnsafeMutablePointer<pthread_cond_t> = .allocate(capacity: 1)
        private var result: Result<Outcome, NativeAuthError>? = nil
        private var callerLeft = false

        init(_ body: @escaping @Sendable () throws(NativeAuthError) -> Outcome) {
            self.body = body
            pthread_mutex_init(mutex, nil)
            pthread_cond_init(cond, nil)
        }

        deinit {
            pthread_cond_destroy(cond)
            pthread_mutex_destroy(mutex)
            cond.deallocate()
            mutex.deallocate()
        }

        /// Wakes the waiting caller (a leaf lock: see `CallCancellation.addWaker`).
        func wake() {
            pthread_mutex_lock(mutex)
            pthread_cond_broadcast(cond)
            pthread_mutex_unlock(mutex)
        }

        /// The caller's wait: the result, or `cancelled` as soon as the call is.
        func wait(for call: CallCancellation) throws(NativeAuthError) -> Outcome {
            pthread_mutex_lock(mutex)
            while result == nil && !call.isCancelled {
                // The waker wakes this at once; the slice only bounds a wake-up lost to a bug.
                var ts = timespec()
                clock_gettime(CLOCK_REALTIME, &ts)
                ts.tv_nsec += 200_000_000
                if ts.tv_nsec >= 1_000_000_000 {
                    ts.tv_sec += 1
                    ts.tv_nsec -= 1_000_000_000
                }
                _ = pthread_cond_timedwait(cond, mutex, &ts)
            }
            let r = result
            if r == nil { callerLeft = true }
            pthread_mutex_unlock(mutex)
            if let r { return try r.get() }
            throw .callCancelled(
                "The call was cancelled. A token refresh it had already sent is finished in the background, and its "
                    + "tokens are kept."
            )
        }

        /// Keeps the result; answers whether the caller had left (cancelled) before it came.
        func finish(_ r: Result<Outcome, NativeAuthError>) -> Bool {
            pthread_mutex_lock(mutex)
            result = r
            let left = callerLeft
            pthread_cond_broadcast(cond)
            pthread_mutex_unlock(mutex)
            return left
        }
    }

    private static func perform(_ job: Job) -> Result<Outcome, NativeAuthError> {
        CallCancellation.with(job.cancellation) { () -> Result<Outcome, NativeAuthError> in
            do throws(NativeAuthError) { return .success(try job.body()) } catch { return .failure(error) }
        }
    }

    /// Starts `job` on a new detached thread; false when the system would not make one.
    private func start(_ job: Job, logger: Logger) -> Bool {
        pthread_mutex_lock(mutex)
        running += 1
        pthread_mutex_unlock(mutex)
        let context = Unmanaged.passRetained(ThreadContext(owner: self, job: job, logger: logger)).toOpaque()
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(
            &thread,
            &attr,
            { p in
                guard let p else { return nil }
                Unmanaged<ThreadContext>.fromOpaque(p).takeRetainedValue().main()
                return nil
            },
            context
        )
        guard rc == 0 else {
            Unmanaged<ThreadContext>.fromOpaque(context).release()
            finished(thread: nil)
            return false
        }
        return true
    }

    private final class ThreadContext {
        let owner: BackgroundRefreshes
        let job: Job
        let logger: Logger
        init(owner: BackgroundRefreshes, job: Job, logger: Logger) {
            self.owner = owner
            self.job = job
            self.logger = logger
        }

        func main() {
            let me = owner.began()
            let r = BackgroundRefreshes.perform(job)
            if job.finish(r) {
                switch r {
                case .success:
                    logger.log(.info, "the token refresh of a cancelled call finished; its tokens are stored")
                case .failure(let e):
                    logger.log(.info, "the token refresh of a cancelled call ended with \(e.code)")
                }
            }
            owner.finished(thread: me)
        }
    }

    private func began() -> UInt {
        let me = UInt(pthread_self())
        pthread_mutex_lock(mutex)
        threads.insert(me)
        pthread_mutex_unlock(mutex)
        return me
    }

    private func finished(thread: UInt?) {
        pthread_mutex_lock(mutex)
        running -= 1
        if let thread { threads.remove(thread) }
        pthread_cond_broadcast(ended)
        pthread_mutex_unlock(mutex)
    }
}
