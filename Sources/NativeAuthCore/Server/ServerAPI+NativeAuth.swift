internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON

/// The native-auth endpoints: sign-in, strong-auth registration, sign-up and password reset.
extension ServerAPI {
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

    // MARK: - Decoding

    func continuation(_ body: JSONValue, _ what: String) throws(NativeAuthError) -> ContinuationToken {
        guard let t = body["continuation_token"]?.stringValue, !t.isEmpty else {
            throw .unexpected("\(what) without continuation_token")
        }
        return ContinuationToken(Secret(t))
    }

    func decodeChallenge(_ body: JSONValue, _ what: String) throws(NativeAuthError) -> Challenge {
        switch body["challenge_type"]?.stringValue {
        case "password": return .password(try continuation(body, what))
        case "oob": return .code(try continuation(body, what), try decodeCode(body))
        default: throw .unexpected("\(what) challenge_type \(body["challenge_type"]?.stringValue ?? "missing")")
        }
    }

    /// An `oob` challenge: MSAL iOS requires the target, channel and code length.
    func decodeCode(
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

    func methods(
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

    static func attributesJSON(_ a: [String: String]) -> String {
        JSONValue.object(a.mapValues { .string($0) }).serialized()
    }
}
