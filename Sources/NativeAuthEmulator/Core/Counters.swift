import NativeAuthJSON
import Synchronization

/// The names of the emulator's counters, as `GET /_emulator/counters` reports them (docs/emulator.md, "Test controls").
enum Counter: String, CaseIterable, Sendable {
    /// TCP connections accepted (survives `POST /_emulator/reset`).
    case connections
    /// Requests outside `/_emulator`, whatever they were answered.
    case requests
    case tokensIssued = "tokens_issued"
    case oidcTokensIssued = "oidc_tokens_issued"
    case refreshGrants = "refresh_grants"
    case refreshTokenReuseDetected = "refresh_token_reuse_detected"
    case passwordPresentations = "password_presentations"
    case refreshTokenPresentations = "refresh_token_presentations"
    case refreshTokenPresentedTwice = "refresh_token_presented_twice"
    case authorizeRequests = "authorize_requests"
    case authorizeErrors = "authorize_errors"
    case authorizationCodesIssued = "authorization_codes_issued"
    case authorizationCodesRedeemed = "authorization_codes_redeemed"
    case ssoSignIns = "sso_sign_ins"
    case browserSessionsStarted = "browser_sessions_started"
    case endSessionRequests = "end_session_requests"
    case userinfoRequests = "userinfo_requests"
    case deviceCodesIssued = "device_codes_issued"
    case devicePolls = "device_polls"
    case slowDownAnswers = "slow_down_answers"
    case revocations
    case usersSignedUp = "users_signed_up"
    case codesSent = "codes_sent"
    case browserRequired = "browser_required"
    case tokenAnswersRewritten = "token_answers_rewritten"
    case tokenErrorsInjected = "token_errors_injected"
    case dpopProofsAccepted = "dpop_proofs_accepted"
    case dpopProofsRefused = "dpop_proofs_refused"
    case dpopNonceChallenges = "dpop_nonce_challenges"
    case dpopTokensIssued = "dpop_tokens_issued"
}

/// The counters: one per `Counter`, and one per request path (`path:/…`). A counter is absent until it first counts.
/// A leaf lock: nothing else is locked while it is held.
final class Counters: Sendable {
    private let values = Mutex<[String: Int]>([:])

    func add(_ counter: Counter) { add(counter.rawValue) }

    /// Counts a request to `path` (`path:<path>`).
    func add(path: String) { add("path:" + path) }

    private func add(_ name: String) { values.withLock { $0[name, default: 0] += 1 } }

    /// The current value of `counter` (0 until it first counts).
    func value(_ counter: Counter) -> Int { values.withLock { $0[counter.rawValue] ?? 0 } }

    /// Every counter, as `GET /_emulator/counters` answers.
    var json: JSONValue { .object(values.withLock { $0 }.mapValues { .int(Int64($0)) }) }

    /// Back to nothing counted, except TCP connections (they belong to the server, not to the tenant).
    func reset() {
        values.withLock { v in
            let connections = v[Counter.connections.rawValue]
            v = [:]
            if let connections { v[Counter.connections.rawValue] = connections }
        }
    }
}
