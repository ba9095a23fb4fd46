import NativeAuthJSON

// What the controls' JSON documents change: `POST /_emulator/settings` (the tenant's run-time settings) and
// `POST /_emulator/users` (an account). Members are read in a fixed order, so the first refused one is reported.

extension EmulatorConfig {
    /// Applies a settings document (every member optional). Throws on the first refused member, leaving `self`
    /// partly changed: callers apply it to a copy (all or nothing).
    mutating func applySettings(_ f: JSONFields<JSONValue>) throws(JSONFieldError) {
        try applyLifetimeSettings(f)
        otpLength = Int(try f.optionalInt("otp_length", in: 4...10) ?? Int64(otpLength))
        refreshTokenReuseDetection = try f.optionalBool("refresh_token_reuse_detection") ?? refreshTokenReuseDetection
        try applyResetSettings(f)
        signUpCompletionWithoutToken =
            try f.optionalBool("sign_up_completion_without_token") ?? signUpCompletionWithoutToken
        deviceCodeInterval = Int(try f.optionalInt("device_code_interval", in: 1...60) ?? Int64(deviceCodeInterval))
        deviceSlowDownIncrement = Int(
            try f.optionalInt("device_slow_down_increment", in: 0...60) ?? Int64(deviceSlowDownIncrement)
        )
        idTokenLoginHint = try f.optionalBool("id_token_login_hint") ?? idTokenLoginHint
        oidc.idTokenOnRefresh = try f.optionalBool("oidc_id_token_on_refresh") ?? oidc.idTokenOnRefresh
        oidc.deviceMessage = try f.optionalBool("oidc_device_message") ?? oidc.deviceMessage
        oidc.deviceIDToken = try f.optionalBool("oidc_device_id_token") ?? oidc.deviceIDToken
        try oidc.loadDPoP(f, prefix: "oidc_")
    }

    private mutating func applyLifetimeSettings(_ f: JSONFields<JSONValue>) throws(JSONFieldError) {
        let l = lifetimes
        lifetimes.accessToken = Int(
            try f.optionalInt("access_token_lifetime", in: 1...86_400) ?? Int64(l.accessToken)
        )
        lifetimes.refreshToken = Int(
            try f.optionalInt("refresh_token_lifetime", in: 1...86_400 * 365) ?? Int64(l.refreshToken)
        )
        lifetimes.continuationToken = Int(
            try f.optionalInt("continuation_token_lifetime", in: 1...86_400) ?? Int64(l.continuationToken)
        )
        if f.raw("refresh_in")?.isNull == true { lifetimes.refreshIn = nil }
        if let r = try f.optionalInt("refresh_in", in: 1...86_400) { lifetimes.refreshIn = Int(r) }
    }

    /// The password-reset members (`reset_in_progress_polls` … `reset_completion_without_token`).
    private mutating func applyResetSettings(_ f: JSONFields<JSONValue>) throws(JSONFieldError) {
        resetInProgressPolls = Int(
            try f.optionalInt("reset_in_progress_polls", in: 0...1000) ?? Int64(resetInProgressPolls)
        )
        resetPollInterval = Int(try f.optionalInt("reset_poll_interval", in: 0...60) ?? Int64(resetPollInterval))
        if let r = try f.optionalString("reset_poll_result") {
            guard r == "succeeded" || r == "failed" else {
                throw JSONFieldError(path: "reset_poll_result", problem: .invalid("must be succeeded or failed"))
            }
            resetPollResult = r
        }
        if f.raw("reset_poll_policy_error")?.isNull == true { resetPollPolicyError = nil }
        if let sub = try f.optionalString("reset_poll_policy_error") {
            guard passwordPolicySuberrors[sub] != nil else {
                throw JSONFieldError(
                    path: "reset_poll_policy_error",
                    problem: .invalid(
                        "must be null or one of " + passwordPolicySuberrors.keys.sorted().joined(separator: ", ")
                    )
                )
            }
            resetPollPolicyError = sub
        }
        resetCompletionWithoutToken =
            try f.optionalBool("reset_completion_without_token") ?? resetCompletionWithoutToken
    }
}

extension UserRecord {
    /// A new account for `email` with the defaults of a configuration document's user.
    static func fresh(_ email: String) throws(JSONFieldError) -> UserRecord {
        try EmulatorConfig.user(from: JSONFields(JSONValue.object(["email": .string(email)])), index: 0)
    }

    /// Applies a `POST /_emulator/users` document to the account.
    mutating func apply(_ f: JSONFields<JSONValue>) throws(JSONFieldError) {
        if f.contains("password") { password = try f.optionalString("password") }
        if f.raw("password")?.isNull == true { password = nil }
        if let d = try f.optionalString("display_name") { displayName = d }
        if f.raw("mfa_email") != nil {
            mfaEmail = try f.optionalString("mfa_email")
            mfaRequired = mfaEmail != nil || mfaPhone != nil
        }
        if f.raw("mfa_phone") != nil {
            mfaPhone = try EmulatorConfig.phone(f, "mfa_phone")
            mfaRequired = mfaEmail != nil || mfaPhone != nil
        }
        if f.raw("mfa_default") != nil { mfaDefault = try EmulatorConfig.mfaDefault(f) }
        if let m = try f.optionalBool("mfa_required") { mfaRequired = m }
        if let r = try f.optionalBool("requires_registration"), r {
            mfaRequired = true
            mfaEmail = nil
            mfaPhone = nil
        }
        if let a = try f.optionalObject("attributes") {
            for (k, v) in a.members { attributes[k] = v.stringValue }
        }
        if let b = try f.optionalBool("requires_browser") { requiresBrowser = b }
        if f.raw("access_token_lifetime")?.isNull == true { accessTokenLifetime = nil }
        if let l = try f.optionalInt("access_token_lifetime", in: 1...86_400) { accessTokenLifetime = Int(l) }
        if let o = try f.optionalBool("oidc_preferred_username") { oidcPreferredUsername = o }
        if f.raw("redirect_reason") != nil { redirectReason = try f.optionalString("redirect_reason") }
    }

    /// How `POST /_emulator/users` answers the account.
    var controlJSON: JSONValue {
        [
            "email": .string(email), "kind": .string(kind), "requires_browser": .bool(requiresBrowser),
            "access_token_lifetime": accessTokenLifetime.map { .int(Int64($0)) } ?? .null,
            "oidc_preferred_username": .bool(oidcPreferredUsername),
        ]
    }
}
