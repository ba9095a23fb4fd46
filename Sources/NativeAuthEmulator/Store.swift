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

struct RefreshTokenRecord {
    var family: String
    var user: String
    var clientID: String
    var expires: Double
    var used = false
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
}

struct PendingAuthorization {
    var clientID: String
    var redirectURI: String
    var responseMode: String
    var state: String?
    var nonce: String?
    var scope: String
    var challenge: String
    var loginHint: String?
    var expires: Double
    // progress through the page
    var username: String? = nil
    var code: String? = nil
    var awaitingMFA = false
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
    var counters: [String: Int] = [:]
    var faults: [Fault] = []
    var refreshTokens: [String: RefreshTokenRecord] = [:]
    var revokedFamilies: Set<String> = []
    var authCodes: [String: AuthCodeRecord] = [:]
    var pending: [String: PendingAuthorization] = [:]
    var sessions: [String: String] = [:]  // browser session cookie → user
    var deviceCodes: [String: DeviceCodeRecord] = [:]
    var apiItems: [String: [JSONValue]] = [:]
    var tokenAnswers: [TokenAnswerRule] = []
    var tokenErrors: [TokenErrorRule] = []
    var ruleSeq = 0
    /// Every refresh-token value the token endpoint has received (for `refresh_token_presented_twice`).
    var presentedRefreshTokens: Set<String> = []

    init(config: EmulatorConfig) {
        self.config = config
        for u in config.users { users[u.email.lowercased()] = u }
    }

    mutating func count(_ name: String, _ n: Int = 1) { counters[name, default: 0] += n }

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
    mutating func sendCode(to address: String, purpose: String, now: Double) -> String {
        let code = Ids.otp(length: config.otpLength)
        outbox.append(OutboxMessage(to: address.lowercased(), code: code, purpose: purpose, sentAt: now))
        count("codes_sent")
        return code
    }

    /// Revokes every refresh-token family and browser session of `user`.
    mutating func revokeSessions(of user: String) {
        for (_, rt) in refreshTokens where rt.user == user { revokedFamilies.insert(rt.family) }
        sessions = sessions.filter { $0.value != user }
    }
}
