import NativeAuthCrypto
import NativeAuthJSON

/// The native-authentication endpoints: sign-in, sign-up, password reset, strong-auth registration.
extension Emulator {
    // MARK: - Shared checks

    /// `client_id` must name a public client with native auth enabled.
    func nativeClient(_ form: [String: String], _ s: Store) throws(ServiceError) -> ClientApp {
        let c = try knownClient(form, s)
        guard c.isPublic else {
            throw ServiceError(
                "invalid_client",
                [550022],
                "AADSTS550022: Confidential Client is not supported in Native Authentication API flow.",
                suberror: "nativeauthapi_disabled"
            )
        }
        guard c.nativeAuthEnabled else {
            throw ServiceError(
                "invalid_client",
                [550021],
                "AADSTS550021: The application is not enabled for native authentication.",
                suberror: "nativeauthapi_disabled"
            )
        }
        return c
    }

    /// `client_id` must name an application of the tenant.
    func knownClient(_ form: [String: String], _ s: Store) throws(ServiceError) -> ClientApp {
        guard let id = form["client_id"], !id.isEmpty else { throw .missingParameter("client_id") }
        guard let c = s.client(id) else {
            throw ServiceError(
                "unauthorized_client",
                [700016],
                "AADSTS700016: Application with identifier '\(id)' was not found in the directory '\(tenantDomain)'."
            )
        }
        return c
    }

    /// The checks every start endpoint makes: client, challenge types, username syntax.
    func startRequest(_ form: [String: String], _ s: Store) throws(ServiceError) -> (ClientApp, Set<String>, String) {
        let client = try nativeClient(form, s)
        let types = try challengeTypes(form) ?? []
        guard let raw = form["username"], isValidEmail(raw) else { throw .invalidUsername() }
        return (client, types, raw.lowercased())
    }

    /// Parses `challenge_type`: known values only, `redirect` mandatory.
    func challengeTypes(_ form: [String: String], required: Bool = true) throws(ServiceError) -> Set<String>? {
        guard let raw = form["challenge_type"], !raw.trimmingCharacters(in: .whitespaces).isEmpty else {
            if required { throw .missingParameter("challenge_type") }
            return nil
        }
        let types = Set(raw.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init))
        for t in types where !["oob", "password", "redirect"].contains(t) {
            throw ServiceError(
                "invalid_request",
                [901007],
                "AADSTS901007: The challenge_type list parameter contains an unsupported challenge type."
            )
        }
        guard types.contains("redirect") else {
            throw ServiceError(
                "invalid_request",
                [901007],
                "AADSTS901007: The challenge_type list parameter does not include the 'redirect' type."
            )
        }
        return types
    }

    /// `capabilities` (SDKs) or `capability` (docs), space- or comma-separated.
    func capabilities(_ form: [String: String]) -> Set<String> {
        let raw = (form["capabilities"] ?? "") + " " + (form["capability"] ?? "")
        return Set(raw.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init))
    }

    static let nativeEndpoints: Set<String> = [
        "oauth2/v2.0/initiate", "oauth2/v2.0/challenge", "oauth2/v2.0/introspect", "oauth2/v2.0/token",
        "signup/v1.0/start", "signup/v1.0/challenge", "signup/v1.0/continue", "resetpassword/v1.0/start",
        "resetpassword/v1.0/challenge", "resetpassword/v1.0/continue", "resetpassword/v1.0/submit",
        "resetpassword/v1.0/poll_completion", "register/v1.0/introspect", "register/v1.0/challenge",
        "register/v1.0/continue",
    ]
    static let nativeGrants: Set<String> = ["password", "oob", "mfa_oob", "continuation_token"]

    /// The `redirect_reason` when a native-auth request concerns a user who must use the browser (`requires_browser`):
    /// by `username` at the start endpoints, by the flow behind `continuation_token` afterwards. Standard grants at
    /// /token (refresh token, authorization code, device code) are not native auth and go on.
    func browserRequired(_ endpoint: String, _ form: [String: String]) -> String? {
        guard Self.nativeEndpoints.contains(endpoint) else { return nil }
        if endpoint == "oauth2/v2.0/token", !Self.nativeGrants.contains(form["grant_type"] ?? "") { return nil }
        return store.withLock { s -> String? in
            guard (try? nativeClient(form, s)) != nil else { return nil }  // client errors come first
            var email = form["username"]?.lowercased()
            if let ct = form["continuation_token"], let f = s.flows[ct] { email = f.username }
            guard let email, let user = s.users[email], user.requiresBrowser else { return nil }
            s.count("browser_required")
            return user.redirectReason ?? "This account must sign in through the browser."
        }
    }

    func redirect(_ reason: String) -> EmulatorResponse {
        .json(["challenge_type": "redirect", "redirect_reason": .string(reason)])
    }

    /// Looks up the flow behind `continuation_token`, checking kind, stage, client and expiry.
    func flow(
        _ form: [String: String],
        _ s: inout Store,
        kinds: Set<Flow.Kind>,
        stages: Set<Flow.Stage>,
        clientID: String,
        now: Double
    ) throws(ServiceError) -> (String, Flow) {
        guard let token = form["continuation_token"], !token.isEmpty else {
            throw .missingParameter("continuation_token")
        }
        guard let f = s.flows[token] else { throw .invalidContinuationToken() }
        guard f.expires > now else {
            s.flows.removeValue(forKey: token)
            throw .expiredContinuationToken()
        }
        guard kinds.contains(f.kind), stages.contains(f.stage), f.clientID == clientID else {
            throw ServiceError(
                "invalid_request",
                [55200],
                "AADSTS55200: The continuation_token is invalid: it is not valid for this endpoint or step."
            )
        }
        return (token, f)
    }

    func oobChallengeBody(
        token: String,
        target: String,
        s: Store,
        labelKey: String = "challenge_target_label",
        interval: Int? = nil
    ) -> JSONValue {
        var o: [String: JSONValue] = [
            "continuation_token": .string(token), "challenge_type": "oob", "binding_method": "prompt",
            "challenge_channel": "email",
            labelKey: .string(labelKey == "challenge_target" ? target : maskEmail(target)),
            "code_length": .int(Int64(s.config.otpLength)),
        ]
        if let interval { o["interval"] = .int(Int64(interval)) }
        return .object(o)
    }

    /// Sends a fresh one-time code for `f` (the previous one stops working), moves `f` to `stage` under a new
    /// continuation token and answers with the oob challenge.
    func codeChallenge(
        _ f: inout Flow,
        stage: Flow.Stage,
        to target: String,
        purpose: String,
        from token: String,
        _ s: inout Store,
        now: Double,
        labelKey: String = "challenge_target_label",
        interval: Int? = nil
    ) -> EmulatorResponse {
        f.stage = stage
        f.code = s.sendCode(to: target, purpose: purpose, now: now)
        f.codeExpires = now + Double(s.config.lifetimes.otp)
        let next = s.advance(f, from: token, now: now)
        return .json(oobChallengeBody(token: next, target: target, s: s, labelKey: labelKey, interval: interval))
    }

    /// Checks a one-time code; a wrong or expired code keeps the flow usable (spec: retry allowed).
    func checkCode(_ form: [String: String], _ f: Flow, now: Double) throws(ServiceError) {
        guard let oob = form["oob"], !oob.isEmpty else { throw .missingParameter("oob") }
        guard let code = f.code, f.codeExpires > now, constantTimeStringEquals(code, oob) else { throw .invalidOOB() }
    }

    /// The tenant's password policy (its suberrors).
    func passwordProblem(_ pw: String, user: UserRecord?, _ s: Store) -> ServiceError? {
        let p = s.config.passwordPolicy
        func fail(_ sub: String) -> ServiceError { passwordPolicyError(sub) }
        if pw.count < p.minLength { return fail("password_too_short") }
        if pw.count > p.maxLength { return fail("password_too_long") }
        if p.banned.contains(where: { $0.lowercased() == pw.lowercased() }) { return fail("password_banned") }
        if pw.contains(where: { $0.isNewline || $0 == "\u{0}" }) { return fail("password_is_invalid") }
        var classes = 0
        if pw.contains(where: \.isLowercase) { classes += 1 }
        if pw.contains(where: \.isUppercase) { classes += 1 }
        if pw.contains(where: \.isNumber) { classes += 1 }
        if pw.contains(where: { !$0.isLetter && !$0.isNumber }) { classes += 1 }
        if classes < 3 { return fail("password_too_weak") }
        if let user, user.password == pw || user.previousPasswords.contains(pw) {
            return fail("password_recently_used")
        }
        return nil
    }

    func passwordPolicyError(_ suberror: String) -> ServiceError {
        let text = passwordPolicySuberrors[suberror] ?? "The new password does not meet the policy."
        return ServiceError("invalid_grant", [399246], "AADSTS399246: \(text)", suberror: suberror)
    }

    // MARK: - Sign-in

    func signInInitiate(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let (client, types, username) = try startRequest(form, s)
            guard let user = s.users[username] else { throw .userNotFound() }
            if user.password != nil && !(types.contains("password") && types.contains("oob")) {
                return redirect("The user flow for this account needs the password and oob challenge types.")
            }
            if user.password == nil && !types.contains("oob") {
                return redirect("The user flow for this account needs the oob challenge type.")
            }
            let f = Flow(
                kind: .signIn,
                stage: .initiated,
                clientID: client.clientID,
                username: username,
                challengeTypes: types,
                capabilities: capabilities(form),
                expires: 0
            )
            return .json(["continuation_token": .string(s.advance(f, from: nil, now: ctx.now))])
        }
    }

    func mfaMethodID(_ user: UserRecord) -> String { Ids.deterministicGUID("mfa:" + (user.mfaEmail ?? user.email)) }

    func signInChallenge(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            let sent = try challengeTypes(form, required: false)
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.signIn],
                stages: [.initiated, .oobChallenge, .mfaRequired, .mfaIntrospected, .mfaChallenge],
                clientID: client.clientID,
                now: ctx.now
            )
            let types = sent ?? f.challengeTypes
            guard let user = s.users[f.username] else { throw .userNotFound() }
            switch f.stage {
            case .initiated, .oobChallenge:
                if user.password != nil && types.contains("password") {
                    f.stage = .passwordChallenge
                    return .json([
                        "continuation_token": .string(s.advance(f, from: token, now: ctx.now)),
                        "challenge_type": "password",
                    ])
                }
                guard types.contains("oob") else {
                    return redirect("The user flow for this account needs the oob challenge type.")
                }
                return codeChallenge(
                    &f,
                    stage: .oobChallenge,
                    to: user.email,
                    purpose: "sign_in",
                    from: token,
                    &s,
                    now: ctx.now
                )
            default:  // MFA: send a code to the chosen (or only) strong method
                guard let target = user.mfaEmail else { throw .invalidContinuationToken() }
                if let id = form["id"], !id.isEmpty, id != mfaMethodID(user) {
                    throw ServiceError(
                        "invalid_request",
                        [50226],
                        "AADSTS50226: The authentication method id is not valid for this user."
                    )
                }
                return codeChallenge(
                    &f,
                    stage: .mfaChallenge,
                    to: target,
                    purpose: "mfa",
                    from: token,
                    &s,
                    now: ctx.now
                )
            }
        }
    }

    func signInIntrospect(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.signIn],
                stages: [.mfaRequired],
                clientID: client.clientID,
                now: ctx.now
            )
            guard let user = s.users[f.username], let target = user.mfaEmail else { throw .invalidContinuationToken() }
            f.stage = .mfaIntrospected
            token = s.advance(f, from: token, now: ctx.now)
            return .json([
                "continuation_token": .string(token),
                "methods": [
                    [
                        "id": .string(mfaMethodID(user)), "challenge_type": "oob", "challenge_channel": "email",
                        "login_hint": .string(maskEmail(target)),
                    ]
                ],
            ])
        }
    }

    /// Native grants at `/oauth2/v2.0/token`. Returns nil for grants handled elsewhere.
    func nativeToken(
        _ form: [String: String],
        grant: String,
        _ ctx: RequestContext
    ) throws(ServiceError) -> EmulatorResponse? {
        guard ["password", "oob", "mfa_oob", "continuation_token"].contains(grant) else { return nil }
        return try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            let scopes = try resolveScopes(form["scope"], client: client, s)
            switch grant {
            case "password":
                let (token, f) = try flow(
                    form,
                    &s,
                    kinds: [.signIn],
                    stages: [.passwordChallenge],
                    clientID: client.clientID,
                    now: ctx.now
                )
                guard let pw = form["password"], !pw.isEmpty else { throw .missingParameter("password") }
                guard let user = s.users[f.username], let stored = user.password, constantTimeStringEquals(stored, pw)
                else {
                    throw .wrongPassword()
                }
                return try finishSignIn(f, token: token, client: client, scopes: scopes, &s, ctx)
            case "oob", "mfa_oob":
                let stages: Set<Flow.Stage> = grant == "oob" ? [.oobChallenge, .mfaChallenge] : [.mfaChallenge]
                var (token, f) = try flow(
                    form,
                    &s,
                    kinds: [.signIn],
                    stages: stages,
                    clientID: client.clientID,
                    now: ctx.now
                )
                try checkCode(form, f, now: ctx.now)
                if f.stage == .mfaChallenge { f.mfaSatisfied = true }
                f.code = nil
                s.flows[token] = f
                return try finishSignIn(f, token: token, client: client, scopes: scopes, &s, ctx)
            default:  // continuation_token: after sign-up, reset or registration
                let (token, f) = try flow(
                    form,
                    &s,
                    kinds: [.signIn, .signUp, .reset],
                    stages: [.readyForToken],
                    clientID: client.clientID,
                    now: ctx.now
                )
                if let u = form["username"], !u.isEmpty, u.lowercased() != f.username {
                    throw ServiceError(
                        "invalid_grant",
                        [55200],
                        "AADSTS55200: The username does not match the continuation_token."
                    )
                }
                return try finishSignIn(f, token: token, client: client, scopes: scopes, &s, ctx)
            }
        }
    }

    /// After a first factor: MFA / registration checks, then tokens.
    func finishSignIn(
        _ flow: Flow,
        token: String,
        client: ClientApp,
        scopes: ScopeGrant,
        _ s: inout Store,
        _ ctx: RequestContext
    ) throws(ServiceError) -> EmulatorResponse {
        guard let user = s.users[flow.username] else { throw .userNotFound() }
        var f = flow
        if user.mfaRequired && !f.mfaSatisfied {
            // A registered method → MFA; none → register one first. Either needs the matching capability.
            let (capability, stage, code, text): (String, Flow.Stage, Int, String) =
                user.mfaEmail != nil
                ? (
                    "mfa_required", .mfaRequired, 50076,
                    "AADSTS50076: Due to a configuration change made by your administrator, or because you moved to "
                        + "a new location, you must use multi-factor authentication."
                )
                : (
                    "registration_required", .registrationRequired, 50079,
                    "AADSTS50079: Due to a configuration change made by your administrator, you must enroll in "
                        + "multi-factor authentication."
                )
            guard f.capabilities.contains(capability) else {
                s.flows.removeValue(forKey: token)
                return redirect("Client is missing \(capability) capability.")
            }
            f.kind = .signIn
            f.stage = stage
            let next = s.advance(f, from: token, now: ctx.now)
            throw ServiceError(
                "invalid_grant",
                [code],
                text,
                suberror: capability,
                extra: ["continuation_token": .string(next)]
            )
        }
        s.flows.removeValue(forKey: token)
        return .json(try issueTokens(user: user, client: client, scopes: scopes, nonce: nil, family: nil, &s, ctx))
    }

    // MARK: - Strong-auth registration

    func registerIntrospect(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.signIn],
                stages: [.registrationRequired],
                clientID: client.clientID,
                now: ctx.now
            )
            f.stage = .registrationIntrospected
            token = s.advance(f, from: token, now: ctx.now)
            return .json([
                "continuation_token": .string(token),
                "methods": [
                    [
                        "id": "email", "challenge_type": "oob", "challenge_channel": "email",
                        "login_hint": .string(maskEmail(f.username)),
                    ]
                ],
            ])
        }
    }

    func registerChallenge(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.signIn],
                stages: [.registrationIntrospected, .registrationChallenge],
                clientID: client.clientID,
                now: ctx.now
            )
            if let t = form["challenge_type"], !t.split(separator: " ").contains("oob") {
                throw ServiceError(
                    "unsupported_challenge_type",
                    [50227],
                    "AADSTS50227: The challenge type is not supported for registration."
                )
            }
            if let ch = form["challenge_channel"], !ch.isEmpty, ch != "email" {
                throw ServiceError(
                    "invalid_request",
                    [901001],
                    "AADSTS901001: The verification contact is invalid for channel \(ch)."
                )
            }
            guard let rawTarget = form["challenge_target"], isValidEmail(rawTarget) else {
                throw ServiceError("invalid_request", [901001], "AADSTS901001: The verification contact is invalid.")
            }
            let target = rawTarget.lowercased()
            if s.config.blockedContacts.contains(where: { $0.lowercased() == target }) {
                throw ServiceError(
                    "access_denied",
                    [550024],
                    "AADSTS550024: Configuring multi-factor authentication method is blocked.",
                    suberror: "provider_blocked_by_rep"
                )
            }
            f.registrationTarget = target
            if target == f.username {  // already verified when the user signed in with it
                f.stage = .registrationPreverified
                return .json([
                    "continuation_token": .string(s.advance(f, from: token, now: ctx.now)),
                    "challenge_type": "preverified",
                ])
            }
            return codeChallenge(
                &f,
                stage: .registrationChallenge,
                to: target,
                purpose: "register",
                from: token,
                &s,
                now: ctx.now,
                labelKey: "challenge_target"
            )
        }
    }

    func registerContinue(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            let grant = form["grant_type"] ?? ""
            let stages: Set<Flow.Stage> =
                grant == "continuation_token" ? [.registrationPreverified] : [.registrationChallenge]
            guard grant == "oob" || grant == "continuation_token" else {
                throw ServiceError(
                    "unsupported_grant_type",
                    [70003],
                    "AADSTS70003: The app requested an unsupported grant type."
                )
            }
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.signIn],
                stages: stages,
                clientID: client.clientID,
                now: ctx.now
            )
            if grant == "oob" { try checkCode(form, f, now: ctx.now) }
            guard let target = f.registrationTarget, var user = s.users[f.username] else {
                throw .invalidContinuationToken()
            }
            user.mfaEmail = target
            s.users[f.username] = user
            f.stage = .readyForToken
            f.mfaSatisfied = true
            f.code = nil
            token = s.advance(f, from: token, now: ctx.now)
            return .json(["continuation_token": .string(token)])
        }
    }

    // MARK: - Sign-up

    /// Parses the `attributes` form field (a JSON object; values stringified).
    func parseAttributes(_ raw: String?) throws(ServiceError) -> [String: String] {
        guard let raw, !raw.isEmpty else { return [:] }
        guard let doc = try? JSONValue.parse(raw), case .object(let members) = doc else {
            throw ServiceError("invalid_request", [90100], "AADSTS90100: attributes parameter is empty or not valid.")
        }
        var out: [String: String] = [:]
        for (k, v) in members {
            switch v {
            case .string(let s): out[k] = s
            case .bool(let b): out[k] = b ? "true" : "false"
            case .int(let i): out[k] = String(i)
            case .double(let d): out[k] = String(d)
            case .array(let items): out[k] = items.compactMap(\.stringValue).joined(separator: ",")
            default: break
            }
        }
        return out
    }

    /// Names of attributes whose values break their definition's type or regex.
    func invalidAttributes(_ attrs: [String: String], _ s: Store) -> [String] {
        var bad: [String] = []
        for def in s.config.signUpAttributes {
            guard let v = attrs[def.name] else { continue }
            var ok = true
            switch def.type {
            case "boolean": ok = v == "true" || v == "false"
            case "int": ok = Int(v) != nil
            default: ok = !v.isEmpty && v.count <= 1024
            }
            if ok, let pattern = def.regex, (try? Regex(pattern).wholeMatch(in: v)) == nil { ok = false }
            if !ok { bad.append(def.name) }
        }
        return bad.sorted()
    }

    func attributeValidationFailed(_ names: [String], token: String?) -> ServiceError {
        var extra: [String: JSONValue] = ["invalid_attributes": .array(names.map { ["name": .string($0)] })]
        if let token { extra["continuation_token"] = .string(token) }
        return ServiceError(
            "invalid_grant",
            [1003036],
            "AADSTS1003036: One or more user attributes failed validation.",
            suberror: "attribute_validation_failed",
            extra: extra
        )
    }

    func signUpStart(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let (client, types, username) = try startRequest(form, s)
            guard s.config.signUpEnabled else {
                throw ServiceError(
                    "unsupported_auth_method",
                    [1003035],
                    "AADSTS1003035: Sign-up is not enabled for this application."
                )
            }
            guard s.users[username] == nil else {
                throw ServiceError(
                    "user_already_exists",
                    [1003037],
                    "AADSTS1003037: It looks like you may already have an account. Please sign in instead."
                )
            }
            let needsPassword = s.config.signUpMethod == "email_password"
            if needsPassword && !(types.contains("password") && types.contains("oob")) {
                return redirect("The sign-up user flow needs the password and oob challenge types.")
            }
            if !types.contains("oob") { return redirect("The sign-up user flow needs the oob challenge type.") }
            var f = Flow(
                kind: .signUp,
                stage: .signUpStarted,
                clientID: client.clientID,
                username: username,
                challengeTypes: types,
                capabilities: capabilities(form),
                expires: 0
            )
            if let pw = form["password"], !pw.isEmpty, needsPassword {
                if let problem = passwordProblem(pw, user: nil, s) { throw problem }
                f.password = pw
            }
            let attrs = try parseAttributes(form["attributes"])
            let bad = invalidAttributes(attrs, s)
            if !bad.isEmpty { throw attributeValidationFailed(bad, token: nil) }
            f.attributes = attrs
            return .json(["continuation_token": .string(s.advance(f, from: nil, now: ctx.now))])
        }
    }

    func signUpChallenge(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            let sent = try challengeTypes(form, required: false)
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.signUp],
                stages: [.signUpStarted, .signUpCodeSent, .signUpCredentialRequired],
                clientID: client.clientID,
                now: ctx.now
            )
            let types = sent ?? f.challengeTypes
            if f.stage == .signUpCredentialRequired {
                guard types.contains("password") else {
                    return redirect("The sign-up user flow needs the password challenge type.")
                }
                f.stage = .signUpPasswordChallenge
                return .json([
                    "continuation_token": .string(s.advance(f, from: token, now: ctx.now)),
                    "challenge_type": "password",
                ])
            }
            guard types.contains("oob") else { return redirect("The sign-up user flow needs the oob challenge type.") }
            return codeChallenge(
                &f,
                stage: .signUpCodeSent,
                to: f.username,
                purpose: "sign_up",
                from: token,
                &s,
                now: ctx.now,
                interval: 300
            )
        }
    }

    func signUpContinue(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            let grant = form["grant_type"] ?? ""
            let stages: Set<Flow.Stage>
            switch grant {
            case "oob": stages = [.signUpCodeSent]
            case "password": stages = [.signUpPasswordChallenge, .signUpCredentialRequired]
            case "attributes": stages = [.signUpAttributesRequired]
            case "": throw .missingParameter("grant_type")
            default:
                throw ServiceError(
                    "unsupported_grant_type",
                    [70003],
                    "AADSTS70003: The app requested an unsupported grant type."
                )
            }
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.signUp],
                stages: stages,
                clientID: client.clientID,
                now: ctx.now
            )
            switch grant {
            case "oob":
                try checkCode(form, f, now: ctx.now)
                f.verified = true
                f.code = nil
            case "password":
                guard let pw = form["password"], !pw.isEmpty else { throw .missingParameter("password") }
                if let problem = passwordProblem(pw, user: nil, s) { throw problem }
                f.password = pw
            default:
                let attrs = try parseAttributes(form["attributes"])
                let bad = invalidAttributes(attrs, s)
                if !bad.isEmpty { throw attributeValidationFailed(bad, token: token) }  // same token stays usable
                f.attributes.merge(attrs) { _, new in new }
            }
            // What is still missing?
            if s.config.signUpMethod == "email_password" && f.password == nil {
                f.stage = .signUpCredentialRequired
                token = s.advance(f, from: token, now: ctx.now)
                throw ServiceError(
                    "credential_required",
                    [55103],
                    "AADSTS55103: Credential required.",
                    extra: ["continuation_token": .string(token)]
                )
            }
            let missing = s.config.signUpAttributes.filter { $0.required && (f.attributes[$0.name] ?? "").isEmpty }
            if !missing.isEmpty {
                f.stage = .signUpAttributesRequired
                token = s.advance(f, from: token, now: ctx.now)
                let list: [JSONValue] = missing.map { d in
                    var o: [String: JSONValue] = ["name": .string(d.name), "type": .string(d.type), "required": true]
                    if let r = d.regex { o["options"] = ["regex": .string(r)] }
                    return .object(o)
                }
                throw ServiceError(
                    "attributes_required",
                    [55106],
                    "AADSTS55106: User attributes are required.",
                    extra: ["continuation_token": .string(token), "required_attributes": .array(list)]
                )
            }
            // Create the account.
            let display = f.attributes["displayName"] ?? f.username
            s.users[f.username] = UserRecord(
                email: f.username,
                password: f.password,
                displayName: display,
                givenName: f.attributes["givenName"],
                surname: f.attributes["surname"],
                attributes: f.attributes,
                objectID: Ids.uuid(),
                mfaEmail: nil,
                mfaRequired: false
            )
            s.count("users_signed_up")
            if s.config.signUpCompletionWithoutToken {  // spec §2.2.3: completed, no automatic sign-in
                s.forget(token)
                return .json([:])
            }
            f.stage = .readyForToken
            f.password = nil
            token = s.advance(f, from: token, now: ctx.now)
            return .json([
                "continuation_token": .string(token), "expires_in": .int(Int64(s.config.lifetimes.continuationToken)),
            ])
        }
    }

    // MARK: - Password reset

    func resetStart(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let (client, types, username) = try startRequest(form, s)
            guard let user = s.users[username] else { throw .userNotFound() }
            guard user.password != nil else {
                throw ServiceError("invalid_request", [500222], "AADSTS500222: The user does not have a password.")
            }
            guard types.contains("oob") else { return redirect("Password reset needs the oob challenge type.") }
            let f = Flow(
                kind: .reset,
                stage: .resetStarted,
                clientID: client.clientID,
                username: username,
                challengeTypes: types,
                capabilities: capabilities(form),
                expires: 0
            )
            return .json(["continuation_token": .string(s.advance(f, from: nil, now: ctx.now))])
        }
    }

    func resetChallenge(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            let sent = try challengeTypes(form, required: false)
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.reset],
                stages: [.resetStarted, .resetCodeSent],
                clientID: client.clientID,
                now: ctx.now
            )
            guard (sent ?? f.challengeTypes).contains("oob") else {
                return redirect("Password reset needs the oob challenge type.")
            }
            return codeChallenge(
                &f,
                stage: .resetCodeSent,
                to: f.username,
                purpose: "reset_password",
                from: token,
                &s,
                now: ctx.now
            )
        }
    }

    func resetContinue(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            guard form["grant_type"] == "oob" else {
                throw ServiceError(
                    "unsupported_grant_type",
                    [70003],
                    "AADSTS70003: The app requested an unsupported grant type."
                )
            }
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.reset],
                stages: [.resetCodeSent],
                clientID: client.clientID,
                now: ctx.now
            )
            try checkCode(form, f, now: ctx.now)
            f.stage = .resetVerified
            f.code = nil
            token = s.advance(f, from: token, now: ctx.now)
            return .json(["continuation_token": .string(token), "expires_in": 600])
        }
    }

    func resetSubmit(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.reset],
                stages: [.resetVerified],
                clientID: client.clientID,
                now: ctx.now
            )
            guard let pw = form["new_password"], !pw.isEmpty else { throw .missingParameter("new_password") }
            if let problem = passwordProblem(pw, user: s.users[f.username], s) { throw problem }
            f.password = pw
            f.stage = .resetSubmitted
            f.pollsLeft = s.config.resetInProgressPolls
            f.submittedWith = token
            token = s.advance(f, from: token, now: ctx.now)
            return .json([
                "continuation_token": .string(token), "poll_interval": .int(Int64(s.config.resetPollInterval)),
            ])
        }
    }

    func resetPoll(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try nativeClient(form, s)
            var (token, f) = try flow(
                form,
                &s,
                kinds: [.reset],
                stages: [.resetSubmitted],
                clientID: client.clientID,
                now: ctx.now
            )
            if f.pollsLeft > 0 {  // the same submit token is polled again
                f.pollsLeft -= 1
                s.flows[token] = f
                return .json(["status": "in_progress"])
            }
            if let suberror = s.config.resetPollPolicyError {
                // Spec §2.3: MSAL iOS handles invalid_grant + password suberrors here (the policy may be evaluated
                // asynchronously) and goes back to "new password required" with the submit's continuation token.
                // UNCONFIRMED which token the service then accepts at /submit: both the token submit answered (what
                // MSAL iOS presents) and the one submit was called with stay usable, for one submission.
                reopenForSubmit(f, pollToken: token, &s, now: ctx.now)
                throw passwordPolicyError(suberror)
            }
            if s.config.resetPollResult == "failed" {
                // Spec §2.3: after "failed" the app may submit the new password again (UNCONFIRMED: with which
                // token, and whether the answer carries one; the same tokens as above are accepted).
                reopenForSubmit(f, pollToken: token, &s, now: ctx.now)
                return .json(["status": "failed"])
            }
            guard var user = s.users[f.username], let pw = f.password else { throw .userNotFound() }
            if let old = user.password { user.previousPasswords.append(old) }
            user.password = pw
            s.users[f.username] = user
            s.revokeSessions(of: f.username)  // a password change ends existing sessions
            f.password = nil
            if s.config.resetCompletionWithoutToken {  // spec §2.3: the token "may be absent"
                s.forget(token)
                return .json(["status": "succeeded"])
            }
            f.stage = .readyForToken
            token = s.advance(f, from: token, now: ctx.now)
            return .json(["status": "succeeded", "continuation_token": .string(token)])
        }
    }

    /// After a failed (or policy-refused) reset: the flow can take a new password again, under the token submit
    /// answered and the one submit was called with (one submission through either retires both).
    func reopenForSubmit(_ flow: Flow, pollToken: String, _ s: inout Store, now: Double) {
        var f = flow
        f.stage = .resetVerified
        f.password = nil
        f.pollsLeft = 0
        f.expires = now + Double(s.config.lifetimes.continuationToken)
        f.aliases = [pollToken] + (f.submittedWith.map { [$0] } ?? [])
        f.submittedWith = nil
        for key in f.aliases { s.flows[key] = f }
    }
}

/// Constant-time string comparison for secrets (NativeAuthCrypto's, the library's own).
func constantTimeStringEquals(_ a: String, _ b: String) -> Bool { constantTimeEquals(a, b) }
