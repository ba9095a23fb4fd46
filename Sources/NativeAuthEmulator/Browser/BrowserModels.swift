import NativeAuthJSON

/// The steps of the browser pages (each page's `data-page`).
enum BrowserStep: String {
    case signIn = "sign_in"
    case emailCode = "email_code"
    case mfaCode = "mfa_code"
    case selectAccount = "select_account"
    case consent
    case signUp = "sign_up"
    case verifyEmail = "verify_email"
}

/// An authorization request a browser is working through (keyed by the pages' hidden `request` field).
struct PendingAuthorization {
    var idp: IdP
    /// Where the pages post (the authorize endpoint's path).
    var action: String
    /// The `iss` authorization-response parameter (RFC 9207), generic OIDC only.
    var responseIssuer: String?
    var clientID: String
    var redirectURI: String
    var responseMode: String
    var state: String?
    var nonce: String?
    var scope: String
    var challenge: String
    var loginHint: String?
    var prompt: String
    var expires: Double
    /// The authorize log entry this request updates.
    var logSeq: Int
    /// The browser session the request came with (its cookie), if any.
    var sessionID: String? = nil
    // progress through the pages
    var step: BrowserStep = .signIn
    var username: String? = nil
    var code: String? = nil
    /// The account signed in, while a consent page is open.
    var authenticated: String? = nil
    var authTime: Double = 0
    /// The account the sign-up page is creating (until its email is verified).
    var newUser: UserRecord? = nil
    /// What the sign-up page was given (email and attributes, never the password), to show it again.
    var draft: [String: String] = [:]
}

/// A browser's sign-in session with one identity provider (its cookie's value is the key).
struct BrowserSession {
    var idp: IdP
    /// Signed-in accounts, most recent first.
    var users: [String]
    var authTimes: [String: Double]
}

/// One `/authorize` request as it arrived (`GET /_emulator/authorize_log`), and what became of it.
struct AuthorizeLogEntry {
    var seq: Int
    var time: Double
    var idp: IdP
    var method: String
    var path: String
    var params: [String: String]
    var hadSession: Bool
    /// "rejected" (an error page, no redirect), "page" (a page is open), "code", "error" (an error redirect).
    var outcome = "page"
    var page: String? = nil
    var user: String? = nil
    var error: String? = nil

    var json: JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        return [
            "seq": .int(Int64(seq)), "time": .double(time), "idp": .string(idp.rawValue), "method": .string(method),
            "path": .string(path), "params": .object(params.mapValues { .string($0) }),
            "prompt": opt(params["prompt"]), "login_hint": opt(params["login_hint"]),
            "domain_hint": opt(params["domain_hint"]), "claims": opt(params["claims"]),
            "code_challenge_method": opt(params["code_challenge_method"]), "client_info": opt(params["client_info"]),
            "response_mode": opt(params["response_mode"]), "has_nonce": .bool(params["nonce"] != nil),
            "has_state": .bool(params["state"] != nil), "has_code_challenge": .bool(params["code_challenge"] != nil),
            "had_session": .bool(hadSession), "outcome": .string(outcome), "page": opt(page), "user": opt(user),
            "error": opt(error),
        ]
    }
}

/// One end-session (sign-out) request (`GET /_emulator/end_session_log`).
struct EndSessionLogEntry {
    var seq: Int
    var time: Double
    var idp: IdP
    var method: String
    var path: String
    /// The parameters as sent, `id_token_hint` as "***".
    var params: [String: String]
    /// "absent", "valid" (signature, issuer and audience check out; it may be expired), or "invalid".
    var idTokenHint: String
    var idTokenHintExpired: Bool
    var idTokenHintUser: String?
    var logoutHintUser: String?
    var hadSession: Bool
    var signedOut: [String]
    /// "redirect", "page" (the signed-out page) or "error" (an error page).
    var outcome: String
    var redirect: String?

    var json: JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        return [
            "seq": .int(Int64(seq)), "time": .double(time), "idp": .string(idp.rawValue), "method": .string(method),
            "path": .string(path), "params": .object(params.mapValues { .string($0) }),
            "id_token_hint": .string(idTokenHint), "id_token_hint_present": .bool(idTokenHint != "absent"),
            "id_token_hint_valid": .bool(idTokenHint == "valid"), "id_token_hint_expired": .bool(idTokenHintExpired),
            "id_token_hint_user": opt(idTokenHintUser),
            "post_logout_redirect_uri": opt(params["post_logout_redirect_uri"]),
            "client_id": opt(params["client_id"]), "logout_hint": opt(params["logout_hint"]),
            "logout_hint_user": opt(logoutHintUser), "state": opt(params["state"]), "had_session": .bool(hadSession),
            "signed_out": .array(signedOut.map { .string($0) }), "outcome": .string(outcome), "redirect": opt(redirect),
        ]
    }
}
