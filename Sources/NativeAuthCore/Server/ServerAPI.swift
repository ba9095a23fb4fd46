internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON

// The server as the library sees it: one method per endpoint, typed answers. ServerAPI.swift and its extensions
// ServerAPI+*.swift (with the error envelope's mapping in ServerErrorMapping.swift) are the only place where wire names
// — form fields, JSON members, grant types, challenge types — are written.

/// The native-auth and OAuth endpoints, as suffixes of the authority.
enum Endpoint: String, Sendable {
    case initiate = "/oauth2/v2.0/initiate"
    case challenge = "/oauth2/v2.0/challenge"
    case introspect = "/oauth2/v2.0/introspect"
    case token = "/oauth2/v2.0/token"
    case signUpStart = "/signup/v1.0/start"
    case signUpChallenge = "/signup/v1.0/challenge"
    case signUpContinue = "/signup/v1.0/continue"
    case resetStart = "/resetpassword/v1.0/start"
    case resetChallenge = "/resetpassword/v1.0/challenge"
    case resetContinue = "/resetpassword/v1.0/continue"
    case resetSubmit = "/resetpassword/v1.0/submit"
    case resetPoll = "/resetpassword/v1.0/poll_completion"
    case registerIntrospect = "/register/v1.0/introspect"
    case registerChallenge = "/register/v1.0/challenge"
    case registerContinue = "/register/v1.0/continue"
    case discovery = "/v2.0/.well-known/openid-configuration"
    case authorize = "/oauth2/v2.0/authorize"
}

/// The protocol client: builds form requests, sends them with the retry policy, decodes answers. Knows nothing of
/// flows. Every request of one `ServerAPI` value carries its `correlationID` as `client-request-id`: a flow keeps
/// one value for all its steps, an independent call makes a fresh one (`with(correlationID:)`).
struct ServerAPI: Sendable {
    let configuration: ClientConfiguration
    let transport: any Transport
    let clock: any Clock
    let logger: Logger
    var correlationID: String = ""
    /// A flow's own `request_headers` (`na_sign_in` …), sent beside the configuration's (replacing one of the same
    /// name) to the authority's origin.
    var flowHeaders: [RequestHeader] = []
    /// The client's last-request telemetry (shared by every copy).
    var telemetry = ServerTelemetry()
    /// The DPoP nonces servers gave, by origin (shared by every copy, and by the client's API calls).
    var dpopNonces = DPoPNonces()
    /// Tokens live at most this long in the cache, whatever the server says.
    static let maxLifetime: Int64 = 365 * 86_400

    /// This API with every request carrying `id` as its `client-request-id`.
    func with(correlationID id: String) -> ServerAPI {
        var copy = self
        copy.correlationID = id
        return copy
    }

    var challengeTypes: String { configuration.challengeTypeNames.joined(separator: " ") }

    func startFields(_ username: String) -> [FormField] {
        var f: [FormField] = [.text("username", username), .text("challenge_type", challengeTypes)]
        if !configuration.capabilities.isEmpty {
            f.append(.text("capabilities", configuration.capabilities.map(\.rawValue).joined(separator: " ")))
        }
        return f
    }
}
