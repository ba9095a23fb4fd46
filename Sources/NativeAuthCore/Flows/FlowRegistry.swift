internal import NativeAuthCrypto
import Synchronization

/// Live flows by opaque handle ("f_…"), each with the correlation id all its requests carry. A flow is checked out
/// for the duration of one call, so two calls cannot drive it at once; idle flows are forgotten after `ttl` seconds,
/// and the oldest idle ones when `capacity` is reached.
///
/// Cancelling a flow that a call is driving marks it: the call sees `isCancelled` (a waiting step stops), and when
/// it checks the flow in, the flow is forgotten instead — a cancel is never undone by a call that finishes after it.
/// A cancel and the step that signs the user in are ordered by the flow's `FlowFence`: either the cancel comes first
/// and nothing of the flow is cached, or the sign-in was stored first and the cancel answers that the flow finished.
final class FlowRegistry: Sendable {
    private struct Entry {
        var flow: Flow
        var correlationID: String
        /// The flow's own `request_headers`.
        var requestHeaders: [RequestHeader]
        var busy: Bool
        var cancelled: Bool
        var touched: Double
        let fence: FlowFence
        /// The cancellation of the call driving the flow (while busy): a cancel fires it, aborting a request on
        /// the wire at once.
        var call: CallCancellation? = nil
    }

    private let entries = Mutex<[FlowID: Entry]>([:])
    /// Flows that ended by signing the user in (for `ttl`, at most `capacity`): a cancel that comes later answers
    /// that the flow finished, not that it was cancelled.
    private let signedIn = Mutex<[(id: FlowID, at: Double)]>([])
    static let ttl = 15.0 * 60
    static let capacity = 256

    /// Stores a new flow (checked in) and returns its id. Fails only when the system random generator does.
    func create(
        _ flow: Flow,
        correlationID: String,
        requestHeaders: [RequestHeader] = [],
        now: Double
    ) throws(NativeAuthError) -> FlowID {
        let bytes: [UInt8]
        do { bytes = try SecureRandom.bytes(18) } catch {
            throw NativeAuthError(.internal, "The system random generator failed; no flow was created.")
        }
        let id = FlowID("f_" + Base64.urlEncode(bytes))
        entries.withLock { e in
            Self.purge(&e, now: now)
            if e.count >= Self.capacity,
                let oldest = e.filter({ !$0.value.busy }).min(by: { $0.value.touched < $1.value.touched })?.key
            {
                e.removeValue(forKey: oldest)
            }
            e[id] = Entry(
                flow: flow,
                correlationID: correlationID,
                requestHeaders: requestHeaders,
                busy: false,
                cancelled: false,
                touched: now,
                fence: FlowFence()
            )
        }
        return id
    }

    /// Forgets idle flows past the idle `ttl` or their own lifetime (a browser sign-in's listening socket closes
    /// with its flow).
    private static func purge(_ e: inout [FlowID: Entry], now: Double) {
        e = e.filter { $0.value.busy || (now - $0.value.touched < ttl && ($0.value.flow.expiresAt ?? now + 1) > now) }
    }

    /// Forgets expired flows now (called on every client call that touches flows).
    func purgeExpired(now: Double) {
        entries.withLock { Self.purge(&$0, now: now) }
    }

    /// Takes a flow for one call (`call`: its cancellation, which a cancel of the flow fires): its value, correlation
    /// id, request headers and fence.
    func checkout(
        _ id: FlowID,
        now: Double,
        call: CallCancellation? = nil
    ) throws(NativeAuthError) -> (Flow, String, [RequestHeader], FlowFence) {
        try entries.withLock { e throws(NativeAuthError) -> (Flow, String, [RequestHeader], FlowFence) in
            // An error names the flow only when the flow stays usable (include/nativeauth.h): a busy one, later.
            guard var entry = e[id] else {
                throw NativeAuthError(.flowInvalid, "Unknown flow: it finished, was cancelled, or never existed.")
            }
            guard now - entry.touched < Self.ttl, (entry.flow.expiresAt ?? now + 1) > now else {
                e.removeValue(forKey: id)
                throw NativeAuthError(.flowExpired, "The flow expired; start again.")
            }
            guard !entry.busy else {
                var busy = NativeAuthError(.flowInvalid, "The flow is in use by another call.")
                busy.flow = id
                throw busy
            }
            entry.busy = true
            entry.call = call
            e[id] = entry
            Self.purge(&e, now: now)
            return (entry.flow, entry.correlationID, entry.requestHeaders, entry.fence)
        }
    }

    /// Ends a call: stores the flow's next value, or forgets it (nil, or cancelled meanwhile). Returns false when the
    /// flow was cancelled during the call.
    @discardableResult
    func checkin(_ id: FlowID, _ flow: Flow?, now: Double) -> Bool {
        entries.withLock { e -> Bool in
            guard var entry = e[id], !entry.cancelled else {
                e.removeValue(forKey: id)
                return false
            }
            guard let flow else {
                e.removeValue(forKey: id)
                return true
            }
            entry.flow = flow
            entry.busy = false
            entry.call = nil
            entry.touched = now
            e[id] = entry
            return true
        }
    }

    /// Cancels a flow: forgotten at once when idle; marked when a call is driving it (see the type's comment).
    /// Throws `flow_invalid` when the flow already signed the user in (then nothing was cancelled).
    func cancel(_ id: FlowID, now: Double) throws(NativeAuthError) {
        let (fence, call) = entries.withLock { e -> (FlowFence?, CallCancellation?) in
            guard var entry = e[id] else { return (nil, nil) }
            if entry.busy {
                entry.cancelled = true
                e[id] = entry
            } else {
                e.removeValue(forKey: id)
            }
            return (entry.fence, entry.busy ? entry.call : nil)
        }
        // The call driving the flow: its request on the wire is aborted now (not when the server answers or the
        // request times out). A call that already stored the flow's sign-in is past cancelling; the fence says so.
        _ = call?.cancel()
        // Waits for a sign-in being stored by the call driving the flow, if one is.
        let cancelled = fence?.cancel() ?? !finishedSigningIn(id, now: now)
        guard cancelled else {
            throw NativeAuthError(.flowInvalid, "The flow had already signed the user in; nothing was cancelled.")
        }
    }

    /// Notes that a flow ended by signing the user in.
    func noteSignedIn(_ id: FlowID, now: Double) {
        signedIn.withLock { list in
            list.removeAll { now - $0.at >= Self.ttl }
            if list.count >= Self.capacity { list.removeFirst() }
            list.append((id, now))
        }
    }

    private func finishedSigningIn(_ id: FlowID, now: Double) -> Bool {
        signedIn.withLock { list in list.contains { $0.id == id && now - $0.at < Self.ttl } }
    }

    /// Whether the flow exists, is not cancelled and has not expired (busy or not).
    func isOpen(_ id: FlowID, now: Double) -> Bool {
        entries.withLock { e in
            e[id].map { !$0.cancelled && now - $0.touched < Self.ttl && ($0.flow.expiresAt ?? now + 1) > now } ?? false
        }
    }

    func isCancelled(_ id: FlowID) -> Bool { entries.withLock { $0[id]?.cancelled ?? true } }

    /// Cancels every flow (sign-out, the client being freed).
    func cancelAll() {
        let fences = entries.withLock { e -> [FlowFence] in
            let all = e.values.map(\.fence)
            e = e.filter { $0.value.busy }.mapValues { entry in
                var x = entry
                x.cancelled = true
                return x
            }
            return all
        }
        for fence in fences { _ = fence.cancel() }
    }
}

/// Orders a flow's cancel and the storing of the sign-in it completes. The step that signs the user in stores the
/// tokens inside `commit`, holding the fence; a cancel marks the fence, waiting for a commit in progress. So after a
/// cancel answered "cancelled", nothing of the flow is stored, and a late answer from the server is discarded.
public final class FlowFence: Sendable {
    private enum Phase { case open, cancelled, committed }
    private let phase = Mutex<Phase>(.open)

    init() {}

    /// Runs `store` unless the flow was cancelled (then `cancelled` is thrown and nothing runs); once `store`
    /// answered true, the flow counts as finished and later cancels answer so. Log lines are delivered after the
    /// fence is released (a log callback may cancel this very flow).
    func commit(_ store: () throws(NativeAuthError) -> Bool) throws(NativeAuthError) -> Bool {
        try Logger.holdingLines { () throws(NativeAuthError) -> Bool in
            try phase.withLock { p throws(NativeAuthError) -> Bool in
                guard p != .cancelled else {
                    throw NativeAuthError(
                        .cancelled,
                        "The flow was cancelled while its step was on the wire; its answer was discarded."
                    )
                }
                let stored = try store()
                if stored { p = .committed }
                return stored
            }
        }
    }

    /// Marks the fence cancelled; false when the flow had already committed its sign-in.
    func cancel() -> Bool {
        phase.withLock { p in
            if p == .committed { return false }
            p = .cancelled
            return true
        }
    }
}
