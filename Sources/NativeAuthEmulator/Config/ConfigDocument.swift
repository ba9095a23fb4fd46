import NativeAuthJSON

/// Reading a configuration document (`nativeauth-emulator --config FILE`, docs/emulator.md "Configuration file").
/// Members are read in a fixed order, so the first refused one is reported.
extension EmulatorConfig {
    /// Reads a configuration document; members not given keep the demo tenant's values.
    public static func load(json: JSONValue) throws(JSONFieldError) -> EmulatorConfig {
        var c = EmulatorConfig.demo
        let f = try JSONFields(json)
        if let t = try f.optionalObject("tenant") {
            c.tenantSubdomain = try t.optionalString("subdomain") ?? c.tenantSubdomain
            c.tenantID = try t.optionalString("id") ?? c.tenantID
        }
        if let clients = try f.optionalArray("clients") {
            c.clients = []
            for (i, v) in clients.enumerated() {
                c.clients.append(try client(from: JSONFields(v, path: "clients[\(i)]")))
            }
        }
        if let users = try f.optionalArray("users") {
            c.users = []
            for (i, v) in users.enumerated() {
                c.users.append(try user(from: JSONFields(v, path: "users[\(i)]"), index: i))
            }
        }
        if let s = try f.optionalObject("sign_up") { try c.loadSignUp(s) }
        if let apis = try f.optionalArray("apis") {
            c.apis = []
            for (i, v) in apis.enumerated() { c.apis.append(try api(from: JSONFields(v, path: "apis[\(i)]"))) }
        }
        if let l = try f.optionalObject("lifetimes") { try c.lifetimes.load(l) }
        c.otpLength = Int(try f.optionalInt("otp_length", in: 4...10) ?? Int64(c.otpLength))
        if let p = try f.optionalObject("password_policy") { try c.passwordPolicy.load(p) }
        c.refreshTokenReuseDetection =
            try f.optionalBool("refresh_token_reuse_detection") ?? c.refreshTokenReuseDetection
        if let r = try f.optionalObject("reset_password") { try c.loadResetPassword(r) }
        c.deviceCodeInterval = Int(try f.optionalInt("device_code_interval", in: 1...60) ?? Int64(c.deviceCodeInterval))
        c.deviceSlowDownIncrement = Int(
            try f.optionalInt("device_slow_down_increment", in: 0...60) ?? Int64(c.deviceSlowDownIncrement)
        )
        c.idTokenLoginHint = try f.optionalBool("id_token_login_hint") ?? c.idTokenLoginHint
        if let o = try f.optionalObject("oidc") { try c.oidc.load(o) }
        c.blockedContacts = try f.optionalStringArray("blocked_contacts") ?? c.blockedContacts
        return c
    }

    private static func client(from o: JSONFields<JSONValue>) throws(JSONFieldError) -> ClientApp {
        ClientApp(
            clientID: try o.string("client_id"),
            name: try o.optionalString("name") ?? "app",
            isPublic: try o.optionalBool("public") ?? true,
            nativeAuthEnabled: try o.optionalBool("native_auth") ?? true,
            redirectURIs: try o.optionalStringArray("redirect_uris") ?? [],
            consentedScopes: try o.optionalStringArray("consented_scopes")
        )
    }

    private static func api(from a: JSONFields<JSONValue>) throws(JSONFieldError) -> ProtectedAPIConfig {
        let perms = try a.stringArray("permissions")
        return ProtectedAPIConfig(
            name: try a.string("name"),
            appID: try a.string("app_id"),
            path: try a.string("path"),
            permissions: perms,
            readPermissions: try a.optionalStringArray("read_permissions") ?? perms,
            writePermissions: try a.optionalStringArray("write_permissions") ?? perms
        )
    }

    private mutating func loadSignUp(_ s: JSONFields<JSONValue>) throws(JSONFieldError) {
        signUpEnabled = try s.optionalBool("enabled") ?? signUpEnabled
        signUpMethod = try s.optionalString("method") ?? signUpMethod
        guard signUpMethod == "email_password" || signUpMethod == "email_otp" else {
            throw JSONFieldError(path: "sign_up.method", problem: .invalid("must be email_password or email_otp"))
        }
        signUpCompletionWithoutToken = try s.optionalBool("completion_without_token") ?? signUpCompletionWithoutToken
        if let attrs = try s.optionalArray("attributes") {
            signUpAttributes = []
            for (i, v) in attrs.enumerated() {
                let a = try JSONFields(v, path: "sign_up.attributes[\(i)]")
                signUpAttributes.append(
                    AttributeDefinition(
                        name: try a.string("name"),
                        type: try a.optionalString("type") ?? "string",
                        required: try a.optionalBool("required") ?? false,
                        regex: try a.optionalString("regex")
                    )
                )
            }
        }
    }

    private mutating func loadResetPassword(_ r: JSONFields<JSONValue>) throws(JSONFieldError) {
        resetPollInterval = Int(try r.optionalInt("poll_interval", in: 0...60) ?? Int64(resetPollInterval))
        resetInProgressPolls = Int(try r.optionalInt("in_progress_polls", in: 0...10) ?? Int64(resetInProgressPolls))
        resetPollResult = try r.optionalString("poll_result") ?? resetPollResult
        guard resetPollResult == "succeeded" || resetPollResult == "failed" else {
            throw JSONFieldError(path: "reset_password.poll_result", problem: .invalid("must be succeeded or failed"))
        }
        resetPollPolicyError = try r.optionalString("poll_policy_error")
        if let sub = resetPollPolicyError, passwordPolicySuberrors[sub] == nil {
            throw JSONFieldError(
                path: "reset_password.poll_policy_error",
                problem: .invalid("must be one of \(passwordPolicySuberrors.keys.sorted().joined(separator: ", "))")
            )
        }
        resetCompletionWithoutToken = try r.optionalBool("completion_without_token") ?? resetCompletionWithoutToken
    }

    /// A user of a configuration document (or of `POST /_emulator/users`).
    static func user(from o: JSONFields<JSONValue>, index: Int) throws(JSONFieldError) -> UserRecord {
        var attributes: [String: String] = [:]
        if let a = try o.optionalObject("attributes") {
            for (k, v) in a.members {
                guard let s = v.stringValue else {
                    throw JSONFieldError(
                        path: a.path(of: k),
                        problem: .wrongType(expected: "string", found: v.typeName)
                    )
                }
                attributes[k] = s
            }
        }
        let email = try o.string("email")
        let mfaEmail = try o.optionalString("mfa_email")
        let mfaPhone = try phone(o, "mfa_phone")
        let registration = try o.optionalBool("requires_registration") ?? false
        let mfaRequired = try o.optionalBool("mfa_required") ?? (mfaEmail != nil || mfaPhone != nil || registration)
        var user = UserRecord(
            email: email.lowercased(),
            password: try o.optionalString("password"),
            displayName: try o.optionalString("display_name") ?? email,
            givenName: try o.optionalString("given_name"),
            surname: try o.optionalString("surname"),
            attributes: attributes,
            objectID: try o.optionalString("object_id") ?? Ids.deterministicGUID(email.lowercased()),
            mfaEmail: mfaEmail,
            mfaRequired: mfaRequired
        )
        user.mfaPhone = mfaPhone
        user.mfaDefault = try mfaDefault(o)
        user.requiresBrowser = try o.optionalBool("requires_browser") ?? false
        user.redirectReason = try o.optionalString("redirect_reason")
        user.accessTokenLifetime = try o.optionalInt("access_token_lifetime", in: 1...86_400).map(Int.init)
        user.oidcPreferredUsername = try o.optionalBool("oidc_preferred_username") ?? true
        return user
    }
}

extension EmulatorConfig {
    /// A phone number member (`mfa_phone`): E.164, `+` and 8 to 15 digits.
    static func phone(_ o: JSONFields<JSONValue>, _ name: String) throws(JSONFieldError) -> String? {
        guard let p = try o.optionalString(name) else { return nil }
        guard isValidPhone(p) else {
            throw JSONFieldError(
                path: o.path(of: name),
                problem: .invalid("must be an E.164 number such as +15555550123")
            )
        }
        return p
    }

    /// `mfa_default`: "email", "sms" or null.
    static func mfaDefault(_ o: JSONFields<JSONValue>) throws(JSONFieldError) -> String? {
        guard let d = try o.optionalString("mfa_default") else { return nil }
        guard d == "email" || d == "sms" else {
            throw JSONFieldError(path: o.path(of: "mfa_default"), problem: .invalid("must be email, sms or null"))
        }
        return d
    }
}

extension Lifetimes {
    mutating func load(_ l: JSONFields<JSONValue>) throws(JSONFieldError) {
        accessToken = Int(try l.optionalInt("access_token", in: 1...86_400 * 30) ?? Int64(accessToken))
        idToken = Int(try l.optionalInt("id_token", in: 1...86_400 * 30) ?? Int64(idToken))
        refreshToken = Int(try l.optionalInt("refresh_token", in: 1...86_400 * 365) ?? Int64(refreshToken))
        continuationToken = Int(try l.optionalInt("continuation_token", in: 1...86_400) ?? Int64(continuationToken))
        otp = Int(try l.optionalInt("otp", in: 1...86_400) ?? Int64(otp))
        authCode = Int(try l.optionalInt("auth_code", in: 1...86_400) ?? Int64(authCode))
        deviceCode = Int(try l.optionalInt("device_code", in: 1...86_400) ?? Int64(deviceCode))
        if let r = try l.optionalInt("refresh_in", in: 1...86_400) { refreshIn = Int(r) }
    }
}

extension PasswordPolicy {
    mutating func load(_ p: JSONFields<JSONValue>) throws(JSONFieldError) {
        minLength = Int(try p.optionalInt("min_length", in: 1...256) ?? Int64(minLength))
        maxLength = Int(try p.optionalInt("max_length", in: 1...1024) ?? Int64(maxLength))
        banned = try p.optionalStringArray("banned") ?? banned
    }
}

extension OIDCProviderConfig {
    mutating func load(_ o: JSONFields<JSONValue>) throws(JSONFieldError) {
        try rejectUnknownMembers(
            o,
            [
                "client_id", "redirect_uris", "id_token_on_refresh", "device_message", "device_id_token", "dpop",
                "dpop_nonce", "api_dpop_nonce", "dpop_iat_window",
            ]
        )
        clientID = try o.optionalString("client_id") ?? clientID
        redirectURIs = try o.optionalStringArray("redirect_uris") ?? redirectURIs
        idTokenOnRefresh = try o.optionalBool("id_token_on_refresh") ?? idTokenOnRefresh
        deviceMessage = try o.optionalBool("device_message") ?? deviceMessage
        deviceIDToken = try o.optionalBool("device_id_token") ?? deviceIDToken
        try loadDPoP(o, prefix: "")
    }

    /// The DPoP members, in a configuration's `oidc` object (`prefix` "") or in settings (`prefix` "oidc_").
    mutating func loadDPoP(_ o: JSONFields<JSONValue>, prefix: String) throws(JSONFieldError) {
        dpop = try o.optionalBool(prefix + "dpop") ?? dpop
        for (name, keyPath) in [
            (prefix + "dpop_nonce", \OIDCProviderConfig.dpopNonce), ("api_dpop_nonce", \.apiDPoPNonce),
        ] {
            guard let mode = try o.optionalString(name) else { continue }
            guard DPoPNonceMode(rawValue: mode) != nil else {
                throw JSONFieldError(path: name, problem: .invalid("must be off, required or always"))
            }
            self[keyPath: keyPath] = mode
        }
        dpopIatWindow = Int(try o.optionalInt(prefix + "dpop_iat_window", in: 1...86_400 * 365) ?? Int64(dpopIatWindow))
    }
}
