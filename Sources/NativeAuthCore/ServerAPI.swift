internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON

// The server as the library sees it: one method per endpoint, typed answers. This file (with the error envelope's
// mapping in ServerErrorMapping.swift) is the only place where wire names — form fields, JSON members, grant types,
// challenge types — are written.

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

/// What `/challenge` (sign-in or sign-up) chose.
enum Challenge: Sendable {
    case password(ContinuationToken)
    case code(ContinuationToken, CodeChallenge)
    /// MFA without a method id: the user has no default method; the methods must be introspected (with the token
    /// the challenge was sent with) and one chosen.
    case introspectRequired
}

/// A native grant on `/oauth2/v2.0/token`.
enum NativeGrant: Sendable {
    case password(ContinuationToken, username: String, password: Secret)
    case oob(ContinuationToken, code: Secret)
    case mfaOOB(ContinuationToken, code: Secret)
    /// Sign-in after sign-up, password reset or registration (`username` where the flow knows it).
    case continuation(ContinuationToken, username: String?)
}

/// What `/oauth2/v2.0/token` answered inside a flow.
enum TokenAnswer: Sendable {
    case tokens(TokenResponse)
    case mfaRequired(ContinuationToken)
    case registrationRequired(ContinuationToken)
}

enum RegisterChallenge: Sendable {
    case code(ContinuationToken, CodeChallenge)
    /// The contact needs no verification (it is the sign-in address).
    case preverified(ContinuationToken)
}

enum SignUpSubmission: Sendable {
    case code(Secret)
    case password(Secret)
    case attributes([String: String])
}

enum SignUpContinueAnswer: Sendable {
    /// Sign-up is complete; without a continuation token there is no automatic sign-in (as MSAL iOS reads it).
    case completed(ContinuationToken?)
    case credentialRequired(ContinuationToken)
    case attributesRequired(ContinuationToken, [RequiredAttribute])
}

enum ResetPollStatus: Sendable {
    case succeeded(ContinuationToken?)
    case failed
    case inProgress
}

/// A successful token response.
struct TokenResponse: Sendable {
    var accessToken: Secret
    var expiresIn: Int64
    var extExpiresIn: Int64?
    var refreshIn: Int64?
    /// The `scope` the server granted, when it said.
    var grantedScopes: [String]?
    var refreshToken: RefreshToken?
    var idToken: String?
    var clientInfo: (uid: String, utid: String)?
    /// The key the tokens are bound to (`token_type` DPoP; the request carried a proof of it), or nil (Bearer).
    var dpopKey: DPoPKey? = nil
}

/// A decoded error answer.
struct ServerErrorEnvelope: Sendable {
    var details: ServerErrorDetails
    var invalidAttributes: [String]
    var claims: String? = nil
    /// Which parameter an AADSTS90100 answer names, read from its description (see `InvalidParameter`).
    var invalidParameter: InvalidParameter? = nil
}

/// The OIDC discovery document, as far as the library uses it.
struct OIDCMetadata: Sendable {
    var tokenEndpoint: String
    var issuer: String?
    var authorizationEndpoint: String? = nil
    var deviceAuthorizationEndpoint: String? = nil
    var endSessionEndpoint: String? = nil
    var jwksURI: String? = nil
    var userinfoEndpoint: String? = nil
    /// RFC 9207: the provider adds `iss` to authorization responses.
    var sendsIssuerInResponse = false
    /// RFC 9449 §5.1: the JWS algorithms the provider accepts in DPoP proofs (nil: it does not say, no DPoP).
    var dpopAlgorithms: [String]? = nil
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

    private var challengeTypes: String { configuration.challengeTypeNames.joined(separator: " ") }

    private func startFields(_ username: String) -> [FormField] {
        var f: [FormField] = [.text("username", username), .text("challenge_type", challengeTypes)]
        if !configuration.capabilities.isEmpty {
            f.append(.text("capabilities", configuration.capabilities.map(\.rawValue).joined(separator: " ")))
        }
        return f
    }

    // MARK: - Sign-in

    func initiate(username: String) throws(NativeAuthError) -> ContinuationToken {
        try continuation(ok(post(.initiate, startFields(username)), .signInStart, .nativeStep), "initiate")
    }

    /// `/oauth2/v2.0/challenge`: the first factor, a resend, or an MFA method (`methodID`).
    func challenge(
        _ ct: ContinuationToken,
        methodID: String? = nil,
        context: ErrorContext = .flowStep
    )
        throws(NativeAuthError) -> Challenge
    {
        var fields: [FormField] = [.secret("continuation_token", ct.secret), .text("challenge_type", challengeTypes)]
        if let methodID { fields.append(.text("id", methodID)) }
        let answer = try post(.challenge, fields)
        // MFA without `id` and no default method: 400 invalid_request + introspect_required, which MSAL Android
        // (SignInChallengeApiResponse, NativeAuthMsalController.signInChallenge) answers by introspecting with the
        // same continuation token. Anywhere else it is an error like any other.
        if context == .mfaChallenge, case .error(let envelope, _) = answer, envelope.details.error == "invalid_request",
            envelope.details.suberror == "introspect_required"
        {
            return .introspectRequired
        }
        return try decodeChallenge(ok(answer, context, context == .mfaChallenge ? .other : .nativeStep), "challenge")
    }

    func token(_ grant: NativeGrant, scopes: [String], claims: ClaimsRequest?) throws(NativeAuthError) -> TokenAnswer {
        var fields: [FormField]
        let ct: ContinuationToken
        switch grant {
        case .password(let c, _, _), .oob(let c, _), .mfaOOB(let c, _), .continuation(let c, _): ct = c
        }
        let grantType: String
        switch grant {
        case .password: grantType = "password"
        case .oob: grantType = "oob"
        case .mfaOOB: grantType = "mfa_oob"
        case .continuation: grantType = "continuation_token"
        }
        // Native-auth token requests send client_info=true, as MSAL iOS (MSALNativeAuthTokenRequestParameters:
        // `clientInfo = true`, sent as its description), MSAL Android (SignInTokenRequest: Boolean true) and
        // msal-browser's custom-auth client do; the standard refresh grant sends 1 (see `refresh`).
        fields = [
            .secret("continuation_token", ct.secret), .text("grant_type", grantType),
            .text("scope", requestScopes(scopes).joined(separator: " ")), .text("client_info", "true"),
        ]
        if let claims = ClaimsRequest.merging(claims, capabilities: configuration.clientCapabilities) {
            fields.append(.text("claims", claims.json))
        }
        switch grant {
        case .password(_, let username, let password):
            fields += [
                .secret("password", password), .text("username", username), .text("challenge_type", challengeTypes),
            ]
        case .oob(_, let code), .mfaOOB(_, let code):
            fields.append(.secret("oob", code))
        case .continuation(_, let username):
            // MSAL iOS's token controller sends challenge_type with continuation-token grants too
            // (createTokenRequest(includeChallengeType: true)); MSAL Android does the same.
            if let username { fields.append(.text("username", username)) }
            fields.append(.text("challenge_type", challengeTypes))
        }
        switch try post(.token, fields) {
        case .ok(let body):
            return .tokens(try decodeTokenResponse(body))
        case .redirect(let reason):
            if case .mfaOOB = grant { throw browserRequired(reason, at: .other) }
            throw browserRequired(reason, at: .firstFactorGrant)
        case .error(let envelope, let body):
            // MFA (a method is registered) or JIT registration (none is): the flow continues.
            if let next = body["continuation_token"]?.stringValue, !next.isEmpty {
                switch envelope.details.suberror {
                case "mfa_required": return .mfaRequired(ContinuationToken(Secret(next)))
                case "registration_required": return .registrationRequired(ContinuationToken(Secret(next)))
                default: break
                }
            }
            throw NativeAuthError.from(envelope, context: .flowStep)
        }
    }

    /// `/oauth2/v2.0/introspect`: the MFA methods.
    func introspect(_ ct: ContinuationToken) throws(NativeAuthError) -> (ContinuationToken, [AuthMethod]) {
        try methods(.introspect, ct)
    }

    // MARK: - Strong-auth registration

    func registerIntrospect(_ ct: ContinuationToken) throws(NativeAuthError) -> (ContinuationToken, [AuthMethod]) {
        try methods(.registerIntrospect, ct)
    }

    func registerChallenge(
        _ ct: ContinuationToken,
        method: AuthMethod,
        target: String
    ) throws(NativeAuthError)
        -> RegisterChallenge
    {
        var fields: [FormField] = [
            .secret("continuation_token", ct.secret), .text("challenge_type", method.challengeType ?? "oob"),
            .text("challenge_target", target),
        ]
        if let channel = method.channel { fields.append(.text("challenge_channel", channel)) }
        let body = try ok(post(.registerChallenge, fields), .registerChallenge)
        let next = try continuation(body, "register challenge")
        if body["challenge_type"]?.stringValue == "preverified" { return .preverified(next) }
        return .code(next, try decodeCode(body, targetKey: "challenge_target"))
    }

    /// `/register/v1.0/continue` with the code, or (after `preverified`) with the continuation token alone.
    func registerContinue(_ ct: ContinuationToken, code: Secret?) throws(NativeAuthError) -> ContinuationToken {
        var fields: [FormField] = [.secret("continuation_token", ct.secret)]
        if let code {
            fields += [.text("grant_type", "oob"), .secret("oob", code)]
        } else {
            fields.append(.text("grant_type", "continuation_token"))
        }
        return try continuation(ok(post(.registerContinue, fields), .flowStep), "register continue")
    }

    // MARK: - Sign-up

    func signUpStart(
        username: String,
        password: Secret?,
        attributes: [String: String]?
    ) throws(NativeAuthError)
        -> ContinuationToken
    {
        var fields = startFields(username)
        if let password { fields.append(.secret("password", password)) }
        if let attributes { fields.append(.text("attributes", Self.attributesJSON(attributes))) }
        return try continuation(ok(post(.signUpStart, fields), .signUpStart, .nativeStep), "sign-up start")
    }

    func signUpChallenge(_ ct: ContinuationToken) throws(NativeAuthError) -> Challenge {
        let fields: [FormField] = [.secret("continuation_token", ct.secret), .text("challenge_type", challengeTypes)]
        return try decodeChallenge(ok(post(.signUpChallenge, fields), .flowStep, .nativeStep), "sign-up challenge")
    }

    func signUpContinue(
        _ ct: ContinuationToken,
        _ submission: SignUpSubmission
    ) throws(NativeAuthError)
        -> SignUpContinueAnswer
    {
        var fields: [FormField] = [.secret("continuation_token", ct.secret)]
        switch submission {
        case .code(let code): fields += [.text("grant_type", "oob"), .secret("oob", code)]
        case .password(let password): fields += [.text("grant_type", "password"), .secret("password", password)]
        case .attributes(let a):
            fields += [.text("grant_type", "attributes"), .text("attributes", Self.attributesJSON(a))]
        }
        switch try post(.signUpContinue, fields) {
        case .ok(let body):
            let next = body["continuation_token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            return .completed(next.map { ContinuationToken(Secret($0)) })
        case .redirect(let reason):
            throw browserRequired(reason, at: .nativeStep)
        case .error(let envelope, let body):
            switch envelope.details.error {
            case "credential_required":
                return .credentialRequired(try continuation(body, "credential_required"))
            case "attributes_required":
                let next = try continuation(body, "attributes_required")
                guard let list = body["required_attributes"]?.arrayValue, !list.isEmpty else {
                    throw .unexpected("attributes_required without required_attributes")
                }
                let attributes = list.map { a in
                    RequiredAttribute(
                        name: a["name"]?.stringValue ?? "",
                        type: a["type"]?.stringValue ?? "string",
                        required: a["required"]?.boolValue ?? true,
                        regex: a["options"]?["regex"]?.stringValue
                    )
                }
                return .attributesRequired(next, attributes)
            default:
                throw NativeAuthError.from(envelope, context: .flowStep)
            }
        }
    }

    // MARK: - Password reset

    func resetStart(username: String) throws(NativeAuthError) -> ContinuationToken {
        try continuation(ok(post(.resetStart, startFields(username)), .resetStart, .nativeStep), "reset start")
    }

    func resetChallenge(_ ct: ContinuationToken) throws(NativeAuthError) -> (ContinuationToken, CodeChallenge) {
        let fields: [FormField] = [.secret("continuation_token", ct.secret), .text("challenge_type", challengeTypes)]
        let body = try ok(post(.resetChallenge, fields), .flowStep, .nativeStep)
        return (try continuation(body, "reset challenge"), try decodeCode(body))
    }

    func resetContinue(_ ct: ContinuationToken, code: Secret) throws(NativeAuthError) -> ContinuationToken {
        let fields: [FormField] = [
            .secret("continuation_token", ct.secret), .text("grant_type", "oob"), .secret("oob", code),
        ]
        return try continuation(ok(post(.resetContinue, fields), .flowStep), "reset continue")
    }

    /// Submits the new password; answers the token to poll with and the server's poll interval (seconds).
    func resetSubmit(
        _ ct: ContinuationToken,
        newPassword: Secret
    ) throws(NativeAuthError)
        -> (ContinuationToken, Int64?)
    {
        let fields: [FormField] = [.secret("continuation_token", ct.secret), .secret("new_password", newPassword)]
        let body = try ok(post(.resetSubmit, fields), .flowStep)
        return (try continuation(body, "reset submit"), body["poll_interval"]?.intValue)
    }

    func resetPoll(_ ct: ContinuationToken) throws(NativeAuthError) -> ResetPollStatus {
        let body = try ok(post(.resetPoll, [.secret("continuation_token", ct.secret)]), .flowStep)
        switch body["status"]?.stringValue {
        case "succeeded":
            let next = body["continuation_token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            return .succeeded(next.map { ContinuationToken(Secret($0)) })
        case "failed": return .failed
        case "in_progress", "not_started": return .inProgress
        default: throw .unexpected("poll_completion status \(body["status"]?.stringValue ?? "missing")")
        }
    }

    // MARK: - OAuth 2.0 / OpenID Connect (the browser and device-code grants are in ServerAPI+OIDC.swift)

    /// The refresh-token grant.
    func refresh(
        endpoint: String,
        refreshToken: RefreshToken,
        scopes: [String],
        claims: ClaimsRequest?
    )
        throws(NativeAuthError) -> TokenResponse
    {
        var fields: [FormField] = [
            .text("grant_type", "refresh_token"), .secret("refresh_token", refreshToken.secret),
            .text("scope", requestScopes(scopes).joined(separator: " ")),
        ]
        // client_info is Entra's (MSAL sends 1 on the standard grants); other providers may refuse unknown fields.
        if configuration.authorityType.isEntra { fields.append(.text("client_info", "1")) }
        if let claims = ClaimsRequest.merging(claims, capabilities: configuration.clientCapabilities) {
            fields.append(.text("claims", claims.json))
        }
        if let r = configuration.redirectURI { fields.append(.text("redirect_uri", r)) }
        // A refresh token bound to a key is presented with a proof of it (RFC 9449 §5.2, public clients); one that is
        // not bound is never presented by a client that asks for DPoP (it would answer a Bearer token).
        let key = refreshToken.dpopKey
        if key == nil, configuration.dpop { throw Self.signedInWithoutDPoP() }
        switch try post(
            url: endpoint,
            name: "/oauth2/v2.0/token (refresh)",
            fields,
            telemetry: .refreshToken,
            dpop: key.map { DPoPBinding(key: $0) }
        ) {
        case .ok(let body): return try decodeTokenResponse(body, dpopKey: key)
        case .redirect(let reason): throw .browserRequired(reason)
        case .error(let envelope, _): throw NativeAuthError.from(envelope, context: .refresh)
        }
    }

    // MARK: - Decoding

    private func continuation(_ body: JSONValue, _ what: String) throws(NativeAuthError) -> ContinuationToken {
        guard let t = body["continuation_token"]?.stringValue, !t.isEmpty else {
            throw .unexpected("\(what) without continuation_token")
        }
        return ContinuationToken(Secret(t))
    }

    private func decodeChallenge(_ body: JSONValue, _ what: String) throws(NativeAuthError) -> Challenge {
        switch body["challenge_type"]?.stringValue {
        case "password": return .password(try continuation(body, what))
        case "oob": return .code(try continuation(body, what), try decodeCode(body))
        default: throw .unexpected("\(what) challenge_type \(body["challenge_type"]?.stringValue ?? "missing")")
        }
    }

    /// An `oob` challenge: MSAL iOS requires the target, channel and code length.
    private func decodeCode(
        _ body: JSONValue,
        targetKey: String = "challenge_target_label"
    ) throws(NativeAuthError)
        -> CodeChallenge
    {
        guard body["challenge_type"]?.stringValue == "oob", let target = body[targetKey]?.stringValue,
            let channel = body["challenge_channel"]?.stringValue, let length = body["code_length"]?.intValue
        else { throw .unexpected("an oob challenge without \(targetKey), challenge_channel or code_length") }
        return CodeChallenge(
            sentTo: target,
            channel: channel,
            codeLength: length,
            resendInterval: body["interval"]?.intValue
        )
    }

    private func methods(
        _ endpoint: Endpoint,
        _ ct: ContinuationToken
    ) throws(NativeAuthError)
        -> (ContinuationToken, [AuthMethod])
    {
        let body = try ok(post(endpoint, [.secret("continuation_token", ct.secret)]), .flowStep)
        guard let list = body["methods"]?.arrayValue, !list.isEmpty else {
            throw .unexpected("\(endpoint.rawValue) without methods")
        }
        let methods = list.map { m in
            AuthMethod(
                id: m["id"]?.stringValue ?? "",
                challengeType: m["challenge_type"]?.stringValue,
                channel: m["challenge_channel"]?.stringValue,
                loginHint: m["login_hint"]?.stringValue
            )
        }
        return (try continuation(body, endpoint.rawValue), methods)
    }

    /// Validates a token response as MSAL does: an access token, type Bearer, a positive lifetime. Lifetimes come
    /// as JSON numbers or numeric strings (MSAL Python: `int(response["expires_in"])`); they are clamped to a year,
    /// and a missing, non-numeric, zero or negative `expires_in` is refused — no value can overflow a conversion.
    func decodeTokenResponse(_ body: JSONValue, dpopKey: DPoPKey? = nil) throws(NativeAuthError) -> TokenResponse {
        guard let at = body["access_token"]?.stringValue, !at.isEmpty else {
            throw .unexpected("token response without access_token")
        }
        try Self.checkTokenType(body["token_type"]?.stringValue, dpop: dpopKey != nil)
        guard let expiresIn = Self.seconds(body["expires_in"]) else {
            throw .unexpected("token response without a numeric expires_in")
        }
        guard expiresIn > 0 else { throw .unexpected("token response without a positive expires_in") }
        var clientInfo: (String, String)? = nil
        if let ci = body["client_info"]?.stringValue {
            guard let raw = Base64.decode(ci), let info = try? JSONValue.parse(raw), let uid = info["uid"]?.stringValue,
                let utid = info["utid"]?.stringValue
            else { throw .unexpected("client_info is not base64url JSON with uid and utid") }
            clientInfo = (uid, utid)
        }
        return TokenResponse(
            accessToken: Secret(at),
            expiresIn: expiresIn,
            extExpiresIn: Self.seconds(body["ext_expires_in"]).flatMap { $0 > 0 ? $0 : nil },
            refreshIn: Self.seconds(body["refresh_in"]).flatMap { $0 > 0 ? $0 : nil },
            grantedScopes: body["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) },
            refreshToken: body["refresh_token"]?.stringValue.flatMap {
                $0.isEmpty ? nil : RefreshToken(Secret($0), dpopKey: dpopKey)
            },
            idToken: body["id_token"]?.stringValue,
            clientInfo: clientInfo,
            dpopKey: dpopKey
        )
    }

    /// A number of seconds sent as a JSON number or a numeric string, clamped to `maxLifetime` (a year); nil when
    /// absent or not a number.
    static func seconds(_ v: JSONValue?) -> Int64? {
        let value: Double?
        switch v {
        case .int(let i)?: return min(i, maxLifetime)
        case .double(let d)?: value = d
        case .string(let s)?:
            let t = s.trimmingSpaces
            if let i = Int64(t) { return min(i, maxLifetime) }
            value = t.utf8.count <= 32 ? Double(t) : nil
        default: value = nil
        }
        guard let d = value, d.isFinite else { return nil }
        if d >= Double(maxLifetime) { return maxLifetime }
        if d <= -Double(maxLifetime) { return -maxLifetime }
        return Int64(d.rounded(.down))
    }

    static func attributesJSON(_ a: [String: String]) -> String {
        JSONValue.object(a.mapValues { .string($0) }).serialized()
    }

    // MARK: - Sending

    /// What the server answered, decoded once.
    enum Answer {
        /// HTTP 200 with a JSON object.
        case ok(JSONValue)
        /// HTTP 200 `{"challenge_type":"redirect"}`: the web fallback.
        case redirect(reason: String?)
        /// An error envelope, with the whole body for flow data such as a continuation token.
        case error(ServerErrorEnvelope, body: JSONValue)
    }

    enum FormField {
        case text(String, String)
        case secret(String, Secret)
    }

    /// The body of a successful answer; a redirect answered at `site` (`nativeStep` where the client's challenge
    /// types decide: the starts and the first factor's challenges) or a mapped error is thrown.
    private func ok(
        _ answer: Answer,
        _ context: ErrorContext,
        _ site: RedirectSite = .other
    ) throws(NativeAuthError) -> JSONValue {
        switch answer {
        case .ok(let body): return body
        case .redirect(let reason): throw browserRequired(reason, at: site)
        case .error(let envelope, _): throw NativeAuthError.from(envelope, context: context)
        }
    }

    private func post(_ endpoint: Endpoint, _ fields: [FormField]) throws(NativeAuthError) -> Answer {
        try post(
            url: configuration.authority.endpoint(endpoint.rawValue),
            name: endpoint.rawValue,
            fields,
            telemetry: TelemetryOperation.of(endpoint)
        )
    }

    /// POSTs `fields` (client_id first) as a form and decodes the answer. Every such request carries a secret (a
    /// continuation token, a password, a code or a refresh token), so it is never sent twice where the server may
    /// have seen it (see `send`). The body is wiped once the exchange is over. With an Entra authority the request
    /// carries the server telemetry of `operation`, and its outcome is counted for the next (ServerTelemetry.swift).
    func post(
        url: String,
        name: String,
        _ fields: [FormField],
        telemetry operation: TelemetryOperation?,
        dpop: DPoPBinding? = nil
    ) throws(NativeAuthError) -> Answer {
        var body: [UInt8] = []
        for (i, field) in ([FormField.text("client_id", configuration.clientID)] + fields).enumerated() {
            if i > 0 { body.append(UInt8(ascii: "&")) }
            switch field {
            case .text(let name, let value):
                FormEncoding.append(name, to: &body)
                body.append(UInt8(ascii: "="))
                FormEncoding.append(value, to: &body)
            case .secret(let name, let secret):
                FormEncoding.append(name, to: &body)
                body.append(UInt8(ascii: "="))
                secret.withUnsafeBytes { FormEncoding.append(bytes: $0, to: &body) }
            }
        }
        let operation = configuration.authorityType.isEntra ? operation : nil
        var request = HTTPRequest(
            method: "POST",
            url: url,
            headers: [("Content-Type", "application/x-www-form-urlencoded")] + telemetryHeaders(operation),
            body: body
        )
        body.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } }
        defer { request.wipeBody() }
        var response: HTTPResponse
        do {
            response = try send(request, name: name, resendable: false, dpop: dpop)
        } catch {
            countTelemetry(operation, error)
            throw error
        }
        defer { response.wipeBody() }
        let answer = decode(response, name: name)
        countTelemetry(operation, answer)
        return answer
    }

    /// Sends with the retry policy:
    /// - nothing reached the server (connect failure, connect timeout): one retry after 0.5 s;
    /// - a 429 or 503 with a `Retry-After` of at most `retry_after_max_s`: wait it out, retry once; a longer one, or
    ///   one still answered after the retry, is the error `throttled` with `retry_after_s`;
    /// - a 5xx: one retry after 0.5 s (a POST was answered, so the server has seen it; one retry at most);
    /// - a timeout or a connection broken after the request went out: a GET is retried once; a POST, which carries
    ///   a secret, is not — presenting a refresh token twice can revoke its whole family on servers with reuse
    ///   detection (the transport does not resend it either: its body cannot be rewound).
    /// - with a DPoP proof (`dpop`): each attempt carries a fresh proof, and a nonce challenge is answered by one
    ///   more attempt with the server's nonce (`wantsNonceRetry`), which counts against none of the retries above.
    func send(
        _ request: HTTPRequest,
        name: String,
        resendable: Bool,
        dpop: DPoPBinding? = nil
    ) throws(NativeAuthError) -> HTTPResponse {
        var request = request
        request.headers.append(("client-request-id", correlationID))
        // The app's own headers go to the authority's origin only (never to another origin a discovery document
        // names, never to APIs: those are sent elsewhere).
        if !configuration.requestHeaders.isEmpty || !flowHeaders.isEmpty,
            (try? HTTPURL(request.url))?.origin == configuration.authority.parsed.origin
        {
            let own = Set(flowHeaders.map { $0.name.lowercased() })
            let headers = configuration.requestHeaders.filter { !own.contains($0.name.lowercased()) } + flowHeaders
            request.headers += headers.map { ($0.name, $0.value) }
        }
        var attempt = 0
        var nonceRetried = false
        while true {
            attempt += 1
            if let dpop { try attachProof(dpop, to: &request) }
            let started = clock.now()
            let response: HTTPResponse
            do {
                response = try transport.send(request)
            } catch {
                logger.log(
                    .warning,
                    "\(request.method) \(name) failed: \(error.kind.rawValue)",
                    correlationID: correlationID
                )
                let nothingSent = error.kind == .connect || error.kind == .connectTimeout
                if attempt == 1 && (nothingSent || (resendable && (error.kind == .network || error.kind == .timeout))) {
                    pause(0.5)
                    continue
                }
                var e = NativeAuthError(error)
                if error.kind != .cancelled { e.server = ServerErrorDetails(correlationID: correlationID) }
                throw e
            }
            let ms = Int((clock.now() - started) * 1000)
            logger.log(
                .verbose,
                "\(request.method) \(name) -> \(response.status) (\(ms) ms)",
                correlationID: correlationID
            )
            if dpop != nil, wantsNonceRetry(response, url: request.url, retried: nonceRetried) {
                nonceRetried = true
                attempt -= 1
                logger.log(.info, "\(name): the server asked for a DPoP nonce; sending once more with it")
                continue
            }
            if response.status == 429 || response.status == 503,
                let header = response.header("retry-after"),
                let wait = RetryAfter.seconds(header, now: clock.now())
            {
                guard attempt == 1, wait <= configuration.retryAfterMaxSeconds else {
                    var e = NativeAuthError(
                        .throttled,
                        "The server asked to wait \(Int(wait.rounded(.up))) s before trying again."
                    )
                    e.server = ServerErrorDetails(
                        correlationID: correlationID,
                        httpStatus: response.status,
                        retryAfter: header
                    )
                    e.retryAfterSeconds = Int(wait.rounded(.up))
                    throw e
                }
                logger.log(
                    .info,
                    "\(name): waiting \(Int(wait.rounded(.up))) s (Retry-After)",
                    correlationID: correlationID
                )
                pause(wait)
                continue
            }
            if attempt == 1 && (response.status >= 500 || (resendable && response.status == 429)) {
                pause(0.5)
                continue
            }
            return response
        }
    }

    /// Waits before a retry, in slices that end early when the started call is cancelled (its retry is then
    /// refused by the transport before anything is sent).
    private func pause(_ seconds: Double) {
        guard let call = CallCancellation.current else { return clock.sleep(seconds) }
        var left = seconds
        while left > 1e-9 && !call.isCancelled {
            let slice = min(left, 0.05)
            clock.sleep(slice)
            left -= slice
        }
    }
}
