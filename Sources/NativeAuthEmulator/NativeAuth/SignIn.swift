import NativeAuthJSON

/// Sign-in: `/oauth2/v2.0/initiate`, `/challenge`, `/introspect` (MFA methods) and the native grants of `/token`.
extension NativeAuthService {
    func initiate(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let (types, username) = try startRequest(r)
            guard let user = directory.user(username) else { throw .userNotFound }
            if user.password != nil && !(types.contains("password") && types.contains("oob")) {
                return Self.redirect("The user flow for this account needs the password and oob challenge types.")
            }
            if user.password == nil && !types.contains("oob") {
                return Self.redirect("The user flow for this account needs the oob challenge type.")
            }
            let f = newFlow(.signIn, .initiated, username: username, types: types, r)
            return .json(["continuation_token": .string(table.advance(f, by: .initiate, from: nil, r))])
        }
    }

    func challenge(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let sent = try challengeTypes(form, required: false)
            var (token, f) = try table.take(.signInChallenge, r)
            let types = sent ?? f.challengeTypes
            let user = try user(f)
            switch f.stage {
            case .initiated, .oobChallenge:
                if user.password != nil && types.contains("password") {
                    f.stage = .passwordChallenge
                    return .json([
                        "continuation_token": .string(table.advance(f, by: .signInChallenge, from: token, r)),
                        "challenge_type": "password",
                    ])
                }
                guard types.contains("oob") else {
                    return Self.redirect("The user flow for this account needs the oob challenge type.")
                }
                return codeChallenge(
                    f,
                    .signInChallenge,
                    stage: .oobChallenge,
                    to: user.email,
                    purpose: "sign_in",
                    from: token,
                    &table,
                    r
                )
            default:  // MFA: send a code to the chosen (or the default) strong method
                let method = try mfaMethod(user, id: form["id"], r)
                return codeChallenge(
                    f,
                    .signInChallenge,
                    stage: .mfaChallenge,
                    to: method.target,
                    purpose: "mfa",
                    from: token,
                    &table,
                    r,
                    channel: method.channel
                )
            }
        }
    }

    func introspect(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            var (token, f) = try table.take(.signInIntrospect, r)
            guard let user = directory.user(f.username), !user.strongMethods.isEmpty else {
                throw .invalidContinuationToken
            }
            f.stage = .mfaIntrospected
            token = table.advance(f, by: .signInIntrospect, from: token, r)
            return .json(["continuation_token": .string(token), "methods": .array(user.strongMethods.map(\.json))])
        }
    }

    /// The MFA method `/challenge` sends a code to: the one `id` names, else the user's default. Without an `id` and
    /// with several methods but no default, `introspect_required` (the flow keeps its continuation token: MSAL
    /// Android then calls `/introspect` with it). A blocked address is `access_denied` + `provider_blocked_by_rep`.
    private func mfaMethod(_ user: UserRecord, id: String?, _ r: NativeRequest) throws(ServiceError) -> StrongMethod {
        let methods = user.strongMethods
        guard !methods.isEmpty else { throw .invalidContinuationToken }
        let chosen: StrongMethod
        if let id, !id.isEmpty {
            guard let m = methods.first(where: { $0.id == id }) else { throw .invalidAuthMethodID }
            chosen = m
        } else {
            guard let m = user.defaultStrongMethod else { throw .introspectRequired }
            chosen = m
        }
        if r.config.isBlocked(chosen.target) { throw .authMethodBlocked }
        return chosen
    }

    /// The native grants of `/oauth2/v2.0/token` (`NativeEndpoint.nativeGrants`).
    func token(_ form: [String: String], grant: String, _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse
    {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let scopes = try ScopeGrant(form["scope"], client: r.client, r.config)
            switch grant {
            case "password":
                let (token, f) = try table.take(.passwordGrant, r)
                guard let pw = form["password"], !pw.isEmpty else { throw .missingParameter("password") }
                guard let user = directory.user(f.username), let stored = user.password,
                    constantTimeStringEquals(stored, pw)
                else { throw .wrongPassword }
                return try finishSignIn(f, .passwordGrant, token: token, scopes: scopes, &table, r)
            case "oob", "mfa_oob":
                let step: NativeStep = grant == "oob" ? .oobGrant : .mfaOOBGrant
                var (token, f) = try table.take(step, r)
                try checkCode(f, r)
                if f.stage == .mfaChallenge { f.mfaSatisfied = true }
                f.code = nil
                table.keep(f, by: step, under: token)
                return try finishSignIn(f, step, token: token, scopes: scopes, &table, r)
            default:  // continuation_token: after sign-up, reset or registration
                let (token, f) = try table.take(.continuationTokenGrant, r)
                if let u = form["username"], !u.isEmpty, u.lowercased() != f.username { throw .usernameMismatch }
                return try finishSignIn(f, .continuationTokenGrant, token: token, scopes: scopes, &table, r)
            }
        }
    }

    /// After a first factor: MFA / registration checks, then tokens.
    private func finishSignIn(
        _ flow: Flow,
        _ step: NativeStep,
        token: String,
        scopes: ScopeGrant,
        _ table: inout FlowTable,
        _ r: NativeRequest
    ) throws(ServiceError) -> EmulatorResponse {
        let user = try user(flow)
        var f = flow
        if user.mfaRequired && !f.mfaSatisfied {
            // A registered method → MFA; none → register one first. Either needs the matching capability.
            let (capability, stage, error): (String, Flow.Stage, ServiceError) =
                !user.strongMethods.isEmpty
                ? ("mfa_required", .mfaRequired, .mfaRequired)
                : ("registration_required", .registrationRequired, .registrationRequired)
            guard f.capabilities.contains(capability) else {
                table.forget(token)
                return Self.redirect("Client is missing \(capability) capability.")
            }
            f.kind = .signIn
            f.stage = stage
            let next = table.advance(f, by: step, from: token, r)
            throw error.with(["continuation_token": .string(next)])
        }
        table.forget(token)
        let body = try grants.withLock { g throws(ServiceError) in
            try minter.issueEntra(user: user, client: r.client, scopes: scopes, nonce: nil, family: nil, &g, r.ctx)
        }
        return .json(body)
    }
}
