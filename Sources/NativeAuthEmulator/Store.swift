import NativeAuthJSON

/// One native-auth flow, keyed by its current continuation token.
struct Flow {
    enum Kind: String {
        case signIn = "sign_in"
        case signUp = "sign_up"
        case reset = "reset_password"
    }
    enum Stage: String {
        // sign-in
        case initiated, passwordChallenge, oobChallenge, mfaRequired, mfaIntrospected, mfaChallenge
        case registrationRequired, registrationIntrospected, registrationChallenge, registrationPreverified
        case readyForToken  // after sign-up, reset or registration: redeemable with grant_type=continuation_token
        // sign-up
        case signUpStarted, signUpCodeSent, signUpCredentialRequired, signUpPasswordChallenge, signUpAttributesRequired
        // reset password
        case resetStarted, resetCodeSent, resetVerified, resetSubmitted
    }

    var kind: Kind
    var stage: Stage
    var clientID: String
    var username: String
    var challengeTypes: Set<String>
    var capabilities: Set<String>
    var expires: Double
    var code: String? = nil
    var codeExpires: Double = 0
    var codeTarget: String? = nil
    var password: String? = nil
    var attributes: [String: String] = [:]
    var verified = false
    var pollsLeft = 0
    var registrationTarget: String? = nil
    /// Skip MFA checks when redeemed (just registered a method).
    var mfaSatisfied = false
    /// The continuation token `/resetpassword/v1.0/submit` was called with (see `reopenForSubmit`).
    var submittedWith: String? = nil
    /// Every token this flow is stored under; using one retires them all.
    var aliases: [String] = []
}

struct OutboxMessage {
    var to: String
    var code: String
    var purpose: String
    var sentAt: Double
    var json: JSONValue {
        ["to": .string(to), "code": .string(code), "purpose": .string(purpose), "sent_at": .double(sentAt)]
    }
}

/// The identity provider a browser request, code, session or token belongs to: the Entra tenant, or the generic
/// OpenID Connect provider served under `/oidc`.
enum IdP: String, Sendable {
    case entra, oidc
}

struct RefreshTokenRecord {
    var family: String
    var user: String
    var clientID: String
    var expires: Double
    var used = false
    var idp: IdP = .entra
    /// The scopes of the grant (generic OIDC: a refresh may narrow them, never widen them).
    var scopes: [String] = []
    var authTime: Double = 0
}

struct AuthCodeRecord {
    var user: String
    var clientID: String
    var redirectURI: String
    var challenge: String
    var scope: String
    var nonce: String?
    var expires: Double
    var family: String
    var idp: IdP = .entra
    var authTime: Double = 0
}

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

struct DeviceCodeRecord {
    var userCode: String
    var clientID: String
    var scope: String
    var expires: Double
    var interval: Double
    var lastPoll: Double = 0
    var approvedUser: String? = nil
    var denied = false
    var redeemed = false
    var idp: IdP = .entra
}

/// A generic-OIDC access token: opaque to clients, looked up by the sample APIs and the userinfo endpoint.
struct OpaqueAccessToken {
    var user: String
    var clientID: String
    var scopes: [String]
    var expires: Double
    var family: String?
    var id: String
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

struct LogEntry {
    var seq: Int
    var time: Double
    var method: String
    var path: String
    var status: Int
    var clientRequestID: String?
    var fields: [String: String]
    var headers: [String: String]
    var fault: String?
    /// With a stage-"after" fault: the status the service answered before the fault spoiled it.
    var handledStatus: Int? = nil

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "time": .double(time), "method": .string(method), "path": .string(path),
            "status": .int(Int64(status)),
            "fields": .object(fields.mapValues { .string($0) }), "headers": .object(headers.mapValues { .string($0) }),
            "client_request_id": clientRequestID.map { .string($0) } ?? .null,
        ]
        if let fault { o["fault"] = .string(fault) }
        if let handledStatus { o["handled_status"] = .int(Int64(handledStatus)) }
        return .object(o)
    }
}

/// Everything mutable, behind one lock.
struct Store {
    var config: EmulatorConfig
    var users: [String: UserRecord] = [:]
    var flows: [String: Flow] = [:]
    var outbox: [OutboxMessage] = []
    var log: [LogEntry] = []
    var seq = 0
    var faults: [Fault] = []
    var refreshTokens: [String: RefreshTokenRecord] = [:]
    var revokedFamilies: Set<String> = []
    var authCodes: [String: AuthCodeRecord] = [:]
    var pending: [String: PendingAuthorization] = [:]
    /// Browser sessions by cookie value.
    var sessions: [String: BrowserSession] = [:]
    var deviceCodes: [String: DeviceCodeRecord] = [:]
    var apiItems: [String: [JSONValue]] = [:]
    var tokenAnswers: [TokenAnswerRule] = []
    var tokenErrors: [TokenErrorRule] = []
    var ruleSeq = 0
    /// Every refresh-token value the token endpoint has received (for `refresh_token_presented_twice`).
    var presentedRefreshTokens: Set<String> = []
    /// Generic-OIDC access tokens.
    var opaqueAccessTokens: [String: OpaqueAccessToken] = [:]
    /// Every access token's id (JWT `uti`, or the opaque token's id) → its user, for `tokens/expire`.
    var accessTokenOwners: [String: String] = [:]
    /// Access tokens the sample APIs and userinfo treat as expired (`POST /_emulator/tokens/expire`).
    var expiredAccessTokens: Set<String> = []
    var authorizeLog: [AuthorizeLogEntry] = []
    var endSessionLog: [EndSessionLogEntry] = []
    /// The next polls of a device code answered `slow_down` (`POST /_emulator/device/slow_down`).
    var deviceSlowDowns = 0

    init(config: EmulatorConfig) {
        self.config = config
        for u in config.users { users[u.email.lowercased()] = u }
    }

    func client(_ id: String) -> ClientApp? { config.clients.first { $0.clientID == id } }

    /// Stores `flow` under a fresh continuation token (after removing `old`) and returns the token.
    mutating func advance(_ flow: Flow, from old: String?, now: Double) -> String {
        if let old { forget(old) }
        var f = flow
        f.aliases = []
        f.expires = now + Double(config.lifetimes.continuationToken)
        let token = Ids.token("CT.")
        flows[token] = f
        return token
    }

    /// Retires a continuation token, and every other token its flow is stored under.
    mutating func forget(_ token: String) {
        guard let f = flows.removeValue(forKey: token) else { return }
        for alias in f.aliases { flows.removeValue(forKey: alias) }
    }

    /// Sends a one-time code (into the outbox) and returns it.
    mutating func sendCode(to address: String, purpose: String, now: Double, _ counters: Counters) -> String {
        let code = Ids.otp(length: config.otpLength)
        outbox.append(OutboxMessage(to: address.lowercased(), code: code, purpose: purpose, sentAt: now))
        counters.add(.codesSent)
        return code
    }

    /// Revokes every refresh-token family and browser session of `user`.
    mutating func revokeSessions(of user: String) {
        _ = revokeRefreshTokens(of: user)
        _ = endBrowserSessions(of: user, idp: nil)
    }

    /// Revokes every refresh-token family of `user` (both identity providers); returns how many.
    mutating func revokeRefreshTokens(of user: String) -> Int {
        var families = Set<String>()
        for (_, rt) in refreshTokens where rt.user == user && !revokedFamilies.contains(rt.family) {
            families.insert(rt.family)
        }
        revokedFamilies.formUnion(families)
        return families.count
    }

    /// Signs `user` out of every browser session (of `idp`, or of both); returns how many sessions held them.
    mutating func endBrowserSessions(of user: String, idp: IdP?) -> Int {
        var n = 0
        for (sid, var session) in sessions where idp == nil || session.idp == idp {
            guard session.users.contains(user) else { continue }
            n += 1
            session.users.removeAll { $0 == user }
            session.authTimes.removeValue(forKey: user)
            sessions[sid] = session.users.isEmpty ? nil : session
        }
        return n
    }

    /// The accounts of browser session `sid` with `idp` that still exist.
    func sessionUsers(_ sid: String?, idp: IdP) -> [String] {
        guard let sid, let session = sessions[sid], session.idp == idp else { return [] }
        return session.users.filter { users[$0] != nil }
    }

    /// Records `user` as signed in to browser session `sid` (a new one when nil or gone); returns its id.
    mutating func signInToSession(
        _ sid: String?,
        idp: IdP,
        user: String,
        authTime: Double,
        _ counters: Counters
    ) -> String {
        let id: String
        var session: BrowserSession
        if let sid, let existing = sessions[sid], existing.idp == idp {
            id = sid
            session = existing
        } else {
            id = Ids.token("S.", bytes: 18)
            session = BrowserSession(idp: idp, users: [], authTimes: [:])
            counters.add(.browserSessionsStarted)
        }
        session.users.removeAll { $0 == user }
        session.users.insert(user, at: 0)
        session.authTimes[user] = authTime
        sessions[id] = session
        return id
    }

    mutating func updateAuthorizeLog(_ seq: Int, _ change: (inout AuthorizeLogEntry) -> Void) {
        guard let i = authorizeLog.lastIndex(where: { $0.seq == seq }) else { return }
        change(&authorizeLog[i])
    }
}
