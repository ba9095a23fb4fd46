internal import NativeAuthCrypto
import Synchronization

/// Live flows by opaque handle ("f_…"). A flow is checked out for the duration of one call, so two calls cannot
/// drive it at once; idle flows are forgotten after `ttl` seconds, and the oldest idle ones when `capacity` is reached.
final class FlowRegistry: Sendable {
    private struct Entry {
        var flow: Flow
        var busy: Bool
        var touched: Double
    }

    private let entries = Mutex<[FlowID: Entry]>([:])
    static let ttl = 15.0 * 60
    static let capacity = 256

    /// Stores a new flow (checked in) and returns its id. Fails only when the system random generator does.
    func create(_ flow: Flow, now: Double) throws(NativeAuthError) -> FlowID {
        let bytes: [UInt8]
        do { bytes = try SecureRandom.bytes(18) } catch {
            throw NativeAuthError(.internal, "The system random generator failed; no flow was created.")
        }
        let id = FlowID("f_" + Base64.urlEncode(bytes))
        entries.withLock { e in
            e = e.filter { $0.value.busy || now - $0.value.touched < Self.ttl }
            if e.count >= Self.capacity,
                let oldest = e.filter({ !$0.value.busy }).min(by: { $0.value.touched < $1.value.touched })?.key
            {
                e.removeValue(forKey: oldest)
            }
            e[id] = Entry(flow: flow, busy: false, touched: now)
        }
        return id
    }

    func checkout(_ id: FlowID, now: Double) throws(NativeAuthError) -> Flow {
        try entries.withLock { e throws(NativeAuthError) -> Flow in
            // An error names the flow only when the flow stays usable (include/nativeauth.h): not for these two.
            guard var entry = e[id] else {
                throw NativeAuthError(.flowInvalid, "Unknown flow: it finished, was cancelled, or never existed.")
            }
            guard now - entry.touched < Self.ttl else {
                e.removeValue(forKey: id)
                throw NativeAuthError(.flowExpired, "The flow expired; start again.")
            }
            guard !entry.busy else {
                var err = NativeAuthError(.flowInvalid, "The flow is in use by another call.")
                err.flow = id
                throw err
            }
            entry.busy = true
            e[id] = entry
            return entry.flow
        }
    }

    /// Ends a call: stores the flow's next value, or forgets it (nil).
    func checkin(_ id: FlowID, _ flow: Flow?, now: Double) {
        entries.withLock { e in
            if let flow { e[id] = Entry(flow: flow, busy: false, touched: now) } else { e.removeValue(forKey: id) }
        }
    }

    /// Whether the flow exists and has not expired (busy or not).
    func isOpen(_ id: FlowID, now: Double) -> Bool {
        entries.withLock { e in e[id].map { now - $0.touched < Self.ttl } ?? false }
    }

    func remove(_ id: FlowID) { _ = entries.withLock { $0.removeValue(forKey: id) } }

    func removeAll() { entries.withLock { $0.removeAll() } }
}
