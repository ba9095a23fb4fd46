import Synchronization

// Server telemetry, as MSAL sends it to Entra with every native-auth and token request: two headers in IdentityCore's
// schema 4 (HTTP_REQUEST_TELEMETRY_SCHEMA_VERSION):
//
//   x-client-current-telemetry  4|<api id>,<operation>|<platform fields>
//                               (MSIDCurrentRequestTelemetrySerializedItem; MSAL iOS's native auth builds it in
//                               MSALNativeAuthCurrentRequestTelemetry with no platform fields)
//   x-client-last-telemetry     4|<silent successes>|<api id>,<correlation id>,…|<error>,…|<platform fields>
//                               (MSIDLastRequestTelemetry / MSIDLastRequestTelemetrySerializedItem: the requests that
//                               failed since the last one that did not, oldest first, at most 350 bytes)
//
// Nothing in either identifies the user: api ids are constants, correlation ids are random per flow or call (or the
// app's own), errors are the server's `error`/`suberror` codes or the library's own error codes.

/// What one request is, for `x-client-current-telemetry`: an api id and an operation type. The api ids and
/// operations of native auth are MSAL iOS's (`MSALNativeAuthTelemetryApiId`, `MSALNativeAuthOperationTypes`, assigned
/// per endpoint by `MSALNativeAuthRequestConfigurator` through `MSALNativeAuthTelemetryProvider`); the header of each
/// is built once.
struct TelemetryOperation: Sendable {
    let apiID: Int
    /// The whole `x-client-current-telemetry` value.
    let currentHeader: String

    init(apiID: Int, operation: Int) {
        self.apiID = apiID
        currentHeader = "\(ServerTelemetry.schema)|\(apiID),\(operation)|"
    }

    // Sign-in: telemetryForSignIn (api id 74002) with MSALNativeAuthSignInType.
    static let signInInitiate = TelemetryOperation(apiID: 74002, operation: 2)
    static let signInChallenge = TelemetryOperation(apiID: 74002, operation: 3)
    static let signInIntrospect = TelemetryOperation(apiID: 74002, operation: 4)
    // Sign-up: telemetryForSignUp (75010) with MSALNativeAuthSignUpType.
    static let signUpStart = TelemetryOperation(apiID: 75010, operation: 3)
    static let signUpChallenge = TelemetryOperation(apiID: 75010, operation: 4)
    static let signUpContinue = TelemetryOperation(apiID: 75010, operation: 5)
    // Password reset: telemetryForResetPassword (75009) with MSALNAtiveAuthResetPasswordType.
    static let resetStart = TelemetryOperation(apiID: 75009, operation: 0)
    static let resetChallenge = TelemetryOperation(apiID: 75009, operation: 1)
    static let resetContinue = TelemetryOperation(apiID: 75009, operation: 2)
    static let resetSubmit = TelemetryOperation(apiID: 75009, operation: 3)
    static let resetPoll = TelemetryOperation(apiID: 75009, operation: 4)
    // Strong-auth registration: telemetryForRegister (75029) with MSALNativeAuthJITType.
    static let registerIntrospect = TelemetryOperation(apiID: 75029, operation: 0)
    static let registerChallenge = TelemetryOperation(apiID: 75029, operation: 1)
    static let registerContinue = TelemetryOperation(apiID: 75029, operation: 2)
    // /token: telemetryForToken (75002) with MSALNativeAuthTokenType — the native grants, and the refresh grant.
    static let nativeToken = TelemetryOperation(apiID: 75002, operation: 0)
    static let refreshToken = TelemetryOperation(apiID: 75002, operation: 1)
    /// The authorization code of a browser sign-in: MSAL iOS's interactive acquireToken
    /// (MSALTelemetryApiIdAcquireWithTokenParameters, 167) with TokenCacheRefreshTypeNoCacheLookupInvolved (0).
    static let authorizationCode = TelemetryOperation(apiID: 167, operation: 0)
    /// The device-code flow (its device authorization request and its polls): MSAL iOS has none; MSAL Python's
    /// ACQUIRE_TOKEN_BY_DEVICE_FLOW_ID (622), no cache lookup (0).
    static let deviceCode = TelemetryOperation(apiID: 622, operation: 0)

    /// A native-auth endpoint's operation.
    static func of(_ endpoint: Endpoint) -> TelemetryOperation? {
        switch endpoint {
        case .initiate: return .signInInitiate
        case .challenge: return .signInChallenge
        case .introspect: return .signInIntrospect
        case .token: return .nativeToken
        case .signUpStart: return .signUpStart
        case .signUpChallenge: return .signUpChallenge
        case .signUpContinue: return .signUpContinue
        case .resetStart: return .resetStart
        case .resetChallenge: return .resetChallenge
        case .resetContinue: return .resetContinue
        case .resetSubmit: return .resetSubmit
        case .resetPoll: return .resetPoll
        case .registerIntrospect: return .registerIntrospect
        case .registerChallenge: return .registerChallenge
        case .registerContinue: return .registerContinue
        case .discovery, .authorize: return nil
        }
    }
}

/// One client's last-request telemetry: the requests that failed since the last one that did not. Shared by every
/// `ServerAPI` copy of the client (flows and calls on any thread); its header is rebuilt only when it changes.
///
/// MSAL iOS keeps this per process (a singleton saved to a file); here each client has its own, in memory. The
/// "silent successes" field counts tokens MSAL served from its cache; the library sends 0 there, keeping its
/// cached-token path free of shared writes (threads sharing a client scale with the cores).
final class ServerTelemetry: Sendable {
    static let schema = 4
    /// MSIDLastRequestTelemetrySerializedItem's limit: older failures that do not fit are dropped.
    static let lastHeaderLimit = 350
    /// The longest error string kept per failure.
    static let maxErrorLength = 64

    struct Failure: Sendable {
        var apiID: Int
        var correlationID: String
        var error: String
    }

    private struct State {
        var failures: [Failure] = []
        var header = ServerTelemetry.serialize([])
    }

    private let state = Mutex(State())

    init() {}

    /// The `x-client-last-telemetry` value to send now.
    var lastHeader: String { state.withLock { $0.header } }

    /// The failures the header holds, oldest first (for tests).
    var failures: [Failure] { state.withLock { $0.failures } }

    /// A request of `operation` failed with `error` (a server's error or suberror code, or the library's own code).
    func failed(_ operation: TelemetryOperation, correlationID: String, error: String) {
        let failure = Failure(
            apiID: operation.apiID,
            correlationID: Self.clean(correlationID, max: 64),
            error: Self.clean(error, max: Self.maxErrorLength).nonEmpty ?? "unknown"
        )
        state.withLock { s in
            s.failures.append(failure)
            // Keep the newest failures that fit; MSAL cuts the oldest off the same way.
            while s.failures.count > 1 && Self.serialize(s.failures).utf8.count > Self.lastHeaderLimit {
                s.failures.removeFirst()
            }
            s.header = Self.serialize(s.failures)
        }
    }

    /// A request got an answer that is not a failure: MSAL starts counting again (`resetTelemetry`).
    func succeeded() {
        state.withLock { s in
            guard !s.failures.isEmpty else { return }
            s.failures = []
            s.header = Self.serialize([])
        }
    }

    static func serialize(_ failures: [Failure]) -> String {
        let requests = failures.map { "\($0.apiID),\($0.correlationID)" }.joined(separator: ",")
        let errors = failures.map(\.error).joined(separator: ",")
        return "\(schema)|0|\(requests)|\(errors)|"
    }

    /// `text` restricted to what the header's separators leave unambiguous (letters, digits, `_`, `-`, `.`),
    /// bounded.
    static func clean(_ text: String, max: Int) -> String {
        var out = ""
        for c in text.unicodeScalars.prefix(max) {
            switch c {
            case "a"..."z", "A"..."Z", "0"..."9", "_", "-", ".": out.unicodeScalars.append(c)
            default: out.unicodeScalars.append("_")
            }
        }
        return out
    }
}

extension ServerAPI {
    /// The two telemetry headers of a request of `operation` (none without one).
    func telemetryHeaders(_ operation: TelemetryOperation?) -> [(name: String, value: String)] {
        guard let operation else { return [] }
        return [
            ("x-client-current-telemetry", operation.currentHeader),
            ("x-client-last-telemetry", telemetry.lastHeader),
        ]
    }

    /// Counts a request that got no answer. A cancel is the app's own doing, not the request's failure.
    func countTelemetry(_ operation: TelemetryOperation?, _ error: NativeAuthError) {
        guard let operation, error.code != .cancelled else { return }
        telemetry.failed(operation, correlationID: correlationID, error: error.code.rawValue)
    }

    /// Counts an answer: an error envelope is a failure (its suberror, else its error, else its HTTP status), as every
    /// non-200 answer is to MSAL — `mfa_required` included; a device code's `authorization_pending` and `slow_down`
    /// are the flow waiting, neither failures nor successes.
    func countTelemetry(_ operation: TelemetryOperation?, _ answer: Answer) {
        guard let operation else { return }
        switch answer {
        case .ok, .redirect:
            telemetry.succeeded()
        case .error(let envelope, _):
            let d = envelope.details
            if d.error == "authorization_pending" || d.error == "slow_down" { return }
            let what = [d.suberror, d.error].compactMap { $0?.nonEmpty }.first ?? "http_\(d.httpStatus ?? 0)"
            telemetry.failed(operation, correlationID: correlationID, error: what)
        }
    }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
