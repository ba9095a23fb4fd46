public import NativeAuthJSON
internal import NativeAuthCrypto
import Synchronization

/// A native-auth flow between two calls: where it stands and the continuation token, which never leaves the library.
struct FlowState: Sendable {
    enum Kind: String { case signIn = "sign_in", signUp = "sign_up", resetPassword = "reset_password" }
    enum Step: String {
        case signInPassword, signInCode, mfaSelect, mfaCode, registrationSelect, registrationCode
        case signUpCode, signUpPassword, signUpAttributes, signUpCompleted
        case resetCode, resetNewPassword, resetCompleted
    }

    var kind: Kind
    var step: Step
    var token: String
    var username: String
    var scopes: [String] = []
    var claims: String? = nil
    var methods: [JSONValue] = []
    var methodID: String? = nil
    var contact: String? = nil
    var challenge: JSONValue = .null
    var requiredAttributes: JSONValue = .array([])
}

/// Live flows by opaque handle ("f_…"). A flow is checked out for the duration of one call, so two calls cannot
/// drive it at once; idle flows are forgotten after `ttl` seconds.
final class FlowRegistry: Sendable {
    private struct Entry {
        var state: FlowState
        var busy: Bool
        var touched: Double
    }

    private let entries = Mutex<[String: Entry]>([:])
    static let ttl = 15.0 * 60
    static let capacity = 256

    func create(_ state: FlowState, now: Double) -> String {
        let id = "f_" + Base64.urlEncode((try? SecureRandom.bytes(18)) ?? Array(String(now).utf8))
        entries.withLock { e in
            e = e.filter { $0.value.busy || now - $0.value.touched < Self.ttl }
            if e.count >= Self.capacity, let oldest = e.filter({ !$0.value.busy }).min(by: { $0.value.touched < $1.value.touched })?.key {
                e.removeValue(forKey: oldest)
            }
            e[id] = Entry(state: state, busy: true, touched: now)
        }
        return id
    }

    func checkout(_ id: String, now: Double) throws(NativeAuthError) -> FlowState {
        try entries.withLock { e throws(NativeAuthError) -> FlowState in
            guard var entry = e[id] else {
                throw NativeAuthError(.flowInvalid, "Unknown flow: it finished, was cancelled, or never existed.", extra: ["flow": .string(id)])
            }
            guard now - entry.touched < Self.ttl else {
                e.removeValue(forKey: id)
                throw NativeAuthError(.flowExpired, "The flow expired; start again.", extra: ["flow": .string(id)])
            }
            guard !entry.busy else {
                throw NativeAuthError(.flowInvalid, "The flow is in use by another call.", extra: ["flow": .string(id)])
            }
            entry.busy = true
            e[id] = entry
            return entry.state
        }
    }

    /// Ends a call: stores the flow's next state, or forgets it (nil).
    func checkin(_ id: String, _ state: FlowState?, now: Double) {
        entries.withLock { e in
            if let state { e[id] = Entry(state: state, busy: false, touched: now) } else { e.removeValue(forKey: id) }
        }
    }

    func removeAll() { entries.withLock { $0.removeAll() } }
}

/// Errors after which the same flow may be tried again (wrong code, weak password, …).
func keepsFlow(_ e: NativeAuthError) -> Bool {
    [.invalidCode, .invalidPassword, .invalidCredentials, .attributesInvalid, .invalidContact, .contactBlocked,
     .authMethodBlocked, .invalidScope, .network, .timeout, .tls, .server, .invalidArgument].contains(e.code)
}
