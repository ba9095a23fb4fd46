internal import Glibc
import Synchronization

/// The cancellation of one started call (the C ABI's `na_op_cancel`), seen by the core on the thread running it.
///
/// A started call runs on a worker thread, synchronously, exactly as a blocking call does; the worker makes the call's
/// cancellation `current` for that thread while it runs. The core's waits (a refresh another call or process makes,
/// a flow's wait, a browser redirect) look at it as they look at the client being freed, and the transport registers
/// a waker so that a request on the wire is aborted at once.
///
/// Cancelling and committing are ordered: a call that stores what cannot be taken back (a sign-in's tokens, a
/// sign-out) commits first, under the same lock a cancel takes. So either the cancel came first — the call stores
/// nothing and ends `cancelled` — or the commit did, and the cancel answers that it is too late.
public final class CallCancellation: Sendable {
    private enum Phase { case running, cancelled, committed }
    private struct State {
        var phase = Phase.running
        var wakers: [Int: @Sendable () -> Void] = [:]
        var nextWaker = 0
    }
    private let state = Mutex(State())
    /// Mirrors `phase == .cancelled` for lock-free polling by waits.
    private let flag = Atomic<Bool>(false)
    /// The cancellation of a refresh that finishes in the background (see `BackgroundRefreshes`), not of a call.
    let isBackgroundRefresh: Bool

    public init() { isBackgroundRefresh = false }

    init(backgroundRefresh: Bool) { isBackgroundRefresh = backgroundRefresh }

    /// Whether the call was cancelled.
    public var isCancelled: Bool { flag.load(ordering: .acquiring) }

    /// Cancels the call unless it committed: true when it will end `cancelled`. Registered wakers run on this
    /// thread, under the lock — so once `removeWaker` returned, that waker never runs again.
    public func cancel() -> Bool {
        state.withLock { s -> Bool in
            switch s.phase {
            case .committed: return false
            case .cancelled: return true
            case .running:
                s.phase = .cancelled
                flag.store(true, ordering: .releasing)
                for wake in s.wakers.values { wake() }
                return true
            }
        }
    }

    /// Runs `body` unless the call was cancelled (then `cancelled` is thrown and nothing runs). While `body` runs a
    /// cancel waits; once `body` returned true (it stored what it was given) the call is past cancelling.
    public func commit(_ body: () throws(NativeAuthError) -> Bool) throws(NativeAuthError) -> Bool {
        var failure: NativeAuthError? = nil
        let stored = state.withLock { s -> Bool in
            guard s.phase != .cancelled else {
                failure = .callCancelled("The call was cancelled; nothing of it was kept.")
                return false
            }
            do throws(NativeAuthError) {
                let ok = try body()
                if ok { s.phase = .committed }
                return ok
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return stored
    }

    /// Marks the call past cancelling; false when it was cancelled already.
    public func commitNow() -> Bool {
        state.withLock { s in
            guard s.phase != .cancelled else { return false }
            s.phase = .committed
            return true
        }
    }

    /// Registers `wake` to run when the call is cancelled (at once, when it already was) until `removeWaker` is
    /// called with the answer. A waker must not block, take locks other than leaf locks (a lock under which nothing
    /// else is taken: another cancellation's, a waiting thread's) or call back into the library, and must be safe
    /// to call from any thread (it runs under this cancellation's lock).
    public func addWaker(_ wake: @escaping @Sendable () -> Void) -> Int {
        let id = state.withLock { s -> Int? in
            guard s.phase != .cancelled else { return nil }
            s.nextWaker += 1
            s.wakers[s.nextWaker] = wake
            return s.nextWaker
        }
        guard let id else {
            wake()
            return 0
        }
        return id
    }

    public func removeWaker(_ id: Int) {
        _ = state.withLock { $0.wakers.removeValue(forKey: id) }
    }

    // MARK: - The calling thread's cancellation

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k, nil)
        return k
    }()

    /// The cancellation of the started call this thread is running, if any.
    public static var current: CallCancellation? {
        guard let p = pthread_getspecific(key) else { return nil }
        return Unmanaged<CallCancellation>.fromOpaque(p).takeUnretainedValue()
    }

    /// Runs `body` with `cancellation` current on this thread (restoring what was current before).
    public static func with<T>(_ cancellation: CallCancellation, _ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(key)
        pthread_setspecific(key, Unmanaged.passUnretained(cancellation).toOpaque())
        defer { pthread_setspecific(key, previous) }
        return try withExtendedLifetime(cancellation) { try body() }
    }

    /// Whether the started call this thread is running was cancelled (false outside a started call).
    public static var currentIsCancelled: Bool { current?.isCancelled ?? false }
}
