import Foundation
import NativeAuthCrypto
import NativeAuthJSON

extension Emulator {
    // MARK: - Sample protected APIs

    /// Verifies a bearer token as a resource server would: RS256 signature with our key, `kid`, issuer, audience,
    /// expiry and not-before, then the permission the method needs (RFC 6750 errors).
    func protectedAPI(_ api: ProtectedAPIConfig, _ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        func unauthorized(_ why: String) -> EmulatorResponse {
            var r = EmulatorResponse.json(["error": "invalid_token", "error_description": .string(why)], status: 401)
            r.headers.append(
                (
                    "WWW-Authenticate",
                    "Bearer realm=\"\(api.name)\", error=\"invalid_token\", error_description=\"\(why)\""
                )
            )
            return r
        }
        let needed: [String]
        switch req.method {
        case "GET": needed = api.readPermissions
        case "POST": needed = api.writePermissions
        default: return .json(["error": "method_not_allowed"], status: 405)
        }
        guard let auth = req.headers["authorization"], auth.lowercased().hasPrefix("bearer ") else {
            return unauthorized("A bearer token is required.")
        }
        let token = String(auth.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let user: String
        let scopes: [String]
        if token.split(separator: ".", omittingEmptySubsequences: false).count != 3 {
            // Not a JWT: an opaque access token of the generic OIDC provider, looked up (as token introspection
            // would). Its scopes are the permissions in lower case, for any number of APIs.
            let found = store.withLock { s in
                s.opaqueAccessTokens[token].map { ($0, s.expiredAccessTokens.contains($0.id)) }
            }
            guard let (rec, forcedExpiry) = found else { return unauthorized("The token is not valid.") }
            guard !forcedExpiry, rec.expires > ctx.now else { return unauthorized("The token is expired.") }
            user = rec.user
            scopes = api.permissions.filter { rec.scopes.contains(oidcScope($0)) }
        } else {
            guard let jwt = try? JWT(decoding: token) else { return unauthorized("The token is malformed.") }
            guard jwt.header["kid"]?.stringValue == kid, let pub = try? signingKey.publicKey(), jwt.verify(with: pub)
            else { return unauthorized("The token signature is invalid.") }
            let c = jwt.claims
            guard c["iss"]?.stringValue == "\(ctx.baseURL)/\(tenantID)/v2.0" else {
                return unauthorized("The token issuer is not trusted.")
            }
            let aud = c["aud"]?.stringValue ?? ""
            guard aud == api.appID || aud == "api://\(api.appID)" else {
                return unauthorized("The token audience is not this API.")
            }
            guard let exp = c["exp"]?.doubleValue, exp > ctx.now else { return unauthorized("The token is expired.") }
            if let nbf = c["nbf"]?.doubleValue, nbf > ctx.now + 300 {
                return unauthorized("The token is not yet valid.")
            }
            let uti = c["uti"]?.stringValue ?? ""
            if store.withLock({ $0.expiredAccessTokens.contains(uti) }) { return unauthorized("The token is expired.") }
            user = c["preferred_username"]?.stringValue ?? ""
            scopes = (c["scp"]?.stringValue ?? "").split(separator: " ").map(String.init)
        }
        guard scopes.contains(where: needed.contains) else {
            var r = EmulatorResponse.json(
                [
                    "error": "insufficient_scope",
                    "error_description": .string("The token lacks one of: \(needed.joined(separator: ", "))."),
                ],
                status: 403
            )
            r.headers.append(
                (
                    "WWW-Authenticate",
                    "Bearer realm=\"\(api.name)\", error=\"insufficient_scope\", "
                        + "scope=\"\(needed.map { api.scope($0) }.joined(separator: " "))\""
                )
            )
            return r
        }
        let key = api.name + "|" + user
        if req.method == "POST" {
            let title =
                (try? JSONValue.parse(req.body))?["title"]?.stringValue
                ?? String(decoding: req.body.prefix(200), as: UTF8.self)
            let item: JSONValue = [
                "id": .string(Ids.token("", bytes: 6)), "title": .string(title), "owner": .string(user),
            ]
            store.withLock { $0.apiItems[key, default: []].append(item) }
            return .json(["api": .string(api.name), "created": item], status: 201)
        }
        let items = store.withLock { s -> [JSONValue] in
            if s.apiItems[key] == nil {
                s.apiItems[key] = [
                    ["id": "1", "title": .string("Welcome to \(api.name), \(user)"), "owner": .string(user)]
                ]
            }
            return s.apiItems[key] ?? []
        }
        return .json([
            "api": .string(api.name), "user": .string(user), "scopes": .array(scopes.map { .string($0) }),
            "items": .array(items),
        ])
    }

    // MARK: - Test controls (/_emulator/…)

    func controls(_ req: EmulatorRequest, _ path: [Substring], _ ctx: RequestContext) throws -> EmulatorResponse {
        // Every control needs the token of the ready document; without it, nothing happens.
        guard let presented = req.headers["x-emulator-token"], constantTimeStringEquals(presented, controlToken) else {
            var r = EmulatorResponse.json(
                [
                    "error": "unauthorized",
                    "error_description": .string(
                        "The emulator's controls need the X-Emulator-Token header with the ready document's "
                            + "control_token."
                    ),
                ],
                status: 401
            )
            r.headers.append(("WWW-Authenticate", "X-Emulator-Token"))
            return r
        }
        let body = req.body.isEmpty ? JSONValue.object([:]) : ((try? JSONValue.parse(req.body)) ?? .null)
        func bad(_ why: String) -> EmulatorResponse {
            .json(["error": "invalid_request", "error_description": .string(why)], status: 400)
        }
        switch (req.method, path.map(String.init)) {
        case ("GET", ["health"]):
            return .json(["ok": true])
        case ("GET", ["info"]):
            return .json(readyDocument(caFile: nil))
        case ("GET", ["outbox"]):
            let to = req.query["to"]?.lowercased()
            let msgs = store.withLock { s in s.outbox.filter { to == nil || $0.to == to }.map(\.json) }
            return .json(["messages": .array(msgs)])
        case ("DELETE", ["outbox"]):
            store.withLock { $0.outbox.removeAll() }
            return .json(["ok": true])
        case ("GET", ["requests"]):
            let suffix = req.query["path"]
            let entries = store.withLock { s in
                s.log.filter { suffix == nil || $0.path.hasSuffix(suffix ?? "") }.map(\.json)
            }
            return .json(["requests": .array(entries)])
        case ("DELETE", ["requests"]):
            store.withLock { $0.log.removeAll() }
            return .json(["ok": true])
        case ("GET", ["counters"]):
            return .json(counters.json)  // a counter appears when it first counts
        case ("POST", ["reset"]):
            reset()
            return .json(["ok": true])
        case ("POST", ["faults"]):
            do throws(JSONFieldError) {
                let fault = try Fault(body)
                store.withLock { $0.faults.append(fault) }
                return .json(["ok": true, "fault": fault.json])
            } catch {
                return bad(error.description)
            }
        case (_, ["token_answers"]), (_, ["token_errors"]):
            return tokenRuleControl(String(path[0]), req.method, body)
        case ("GET", ["faults"]):
            return .json(["faults": .array(store.withLock { $0.faults.map(\.json) })])
        case ("DELETE", ["faults"]):
            store.withLock { $0.faults.removeAll() }
            return .json(["ok": true])
        case ("POST", ["users"]):
            guard let f = try? JSONFields(body), let email = try? f.string("email").lowercased() else {
                return bad("email is required")
            }
            do {
                let updated = try store.withLock { s throws -> UserRecord in
                    let fresh = try EmulatorConfig.user(
                        from: JSONFields(JSONValue.object(["email": .string(email)])),
                        index: 0
                    )
                    var u = s.users[email] ?? fresh
                    if f.contains("password") { u.password = try f.optionalString("password") }
                    if f.raw("password")?.isNull == true { u.password = nil }
                    if let d = try f.optionalString("display_name") { u.displayName = d }
                    if f.raw("mfa_email") != nil {
                        u.mfaEmail = try f.optionalString("mfa_email")
                        u.mfaRequired = u.mfaEmail != nil
                    }
                    if let m = try f.optionalBool("mfa_required") { u.mfaRequired = m }
                    if let r = try f.optionalBool("requires_registration"), r {
                        u.mfaRequired = true
                        u.mfaEmail = nil
                    }
                    if let a = try f.optionalObject("attributes") {
                        for (k, v) in a.members { u.attributes[k] = v.stringValue }
                    }
                    if let b = try f.optionalBool("requires_browser") { u.requiresBrowser = b }
                    if f.raw("access_token_lifetime")?.isNull == true { u.accessTokenLifetime = nil }
                    if let l = try f.optionalInt("access_token_lifetime", in: 1...86_400) {
                        u.accessTokenLifetime = Int(l)
                    }
                    if let o = try f.optionalBool("oidc_preferred_username") { u.oidcPreferredUsername = o }
                    if f.raw("redirect_reason") != nil { u.redirectReason = try f.optionalString("redirect_reason") }
                    s.users[email] = u
                    return u
                }
                return .json([
                    "ok": true,
                    "user": [
                        "email": .string(updated.email), "kind": .string(updated.kind),
                        "requires_browser": .bool(updated.requiresBrowser),
                        "access_token_lifetime": updated.accessTokenLifetime.map { .int(Int64($0)) } ?? .null,
                        "oidc_preferred_username": .bool(updated.oidcPreferredUsername),
                    ],
                ])
            } catch let e as JSONFieldError {
                return bad(e.description)
            }
        case ("DELETE", let p) where p.count == 2 && p[0] == "users":
            let email = p[1].lowercased()
            let removed = store.withLock { s -> Bool in
                s.revokeSessions(of: email)
                return s.users.removeValue(forKey: email) != nil
            }
            return .json(["ok": .bool(removed)], status: removed ? 200 : 404)
        case ("POST", ["users", "revoke"]):
            guard let email = body["email"]?.stringValue?.lowercased() else { return bad("email is required") }
            let refresh = body["refresh_tokens"]?.boolValue ?? true
            let browser = body["sessions"]?.boolValue ?? true
            let (families, sessions) = store.withLock { s in
                (
                    refresh ? s.revokeRefreshTokens(of: email) : 0,
                    browser ? s.endBrowserSessions(of: email, idp: nil) : 0
                )
            }
            return .json([
                "ok": true, "refresh_token_families": .int(Int64(families)), "sessions": .int(Int64(sessions)),
            ])
        case ("POST", ["tokens", "expire"]):
            let email = body["email"]?.stringValue?.lowercased()
            let n = store.withLock { s -> Int in
                let ids = s.accessTokenOwners.filter { email == nil || $0.value == email }.keys
                let before = s.expiredAccessTokens.count
                s.expiredAccessTokens.formUnion(ids)
                return s.expiredAccessTokens.count - before
            }
            return .json(["ok": true, "expired": .int(Int64(n))])
        case ("POST", ["device", "approve"]):
            guard let code = body["user_code"]?.stringValue else { return bad("user_code is required") }
            let deny = body["deny"]?.boolValue ?? false
            let ok = approveDevice(userCode: code, email: body["email"]?.stringValue, deny: deny)
            return .json(["ok": .bool(ok)], status: ok ? 200 : 404)
        case ("POST", ["device", "slow_down"]):
            guard let n = body["count"]?.intValue, n >= 0, n <= 1000 else { return bad("count (0-1000) is required") }
            store.withLock { $0.deviceSlowDowns = Int(n) }
            return .json(["ok": true])
        case ("GET", ["authorize_log"]):
            let idp = req.query["idp"]
            let entries = store.withLock { s in
                s.authorizeLog.filter { idp == nil || $0.idp.rawValue == idp }.map(\.json)
            }
            return .json(["requests": .array(entries)])
        case ("DELETE", ["authorize_log"]):
            store.withLock { $0.authorizeLog.removeAll() }
            return .json(["ok": true])
        case ("GET", ["end_session_log"]):
            let idp = req.query["idp"]
            let entries = store.withLock { s in
                s.endSessionLog.filter { idp == nil || $0.idp.rawValue == idp }.map(\.json)
            }
            return .json(["requests": .array(entries)])
        case ("DELETE", ["end_session_log"]):
            store.withLock { $0.endSessionLog.removeAll() }
            return .json(["ok": true])
        case ("GET", ["sessions"]):
            let list = store.withLock { s in
                s.sessions.sorted { $0.key < $1.key }.map { sid, session -> JSONValue in
                    [
                        "id": .string(sid), "idp": .string(session.idp.rawValue),
                        "users": .array(session.users.map { .string($0) }),
                    ]
                }
            }
            return .json(["sessions": .array(list)])
        case ("DELETE", ["sessions"]):
            store.withLock { $0.sessions.removeAll() }
            return .json(["ok": true])
        case ("POST", ["clock"]):
            guard let secs = body["advance_seconds"]?.doubleValue, secs >= 0, secs < 1e8 else {
                return bad("advance_seconds is required")
            }
            clock.advance(secs)
            return .json(["ok": true, "now": .double(clock.now())])
        case ("POST", ["settings"]):
            guard let f = try? JSONFields(body) else { return bad("a JSON object is required") }
            do {
                try store.withLock { st throws in
                    var s = st  // all or nothing: a refused member changes no setting
                    let l = s.config.lifetimes
                    s.config.lifetimes.accessToken = Int(
                        try f.optionalInt("access_token_lifetime", in: 1...86_400) ?? Int64(l.accessToken)
                    )
                    s.config.lifetimes.refreshToken = Int(
                        try f.optionalInt("refresh_token_lifetime", in: 1...86_400 * 365) ?? Int64(l.refreshToken)
                    )
                    s.config.lifetimes.continuationToken = Int(
                        try f.optionalInt("continuation_token_lifetime", in: 1...86_400) ?? Int64(l.continuationToken)
                    )
                    if f.raw("refresh_in")?.isNull == true { s.config.lifetimes.refreshIn = nil }
                    if let r = try f.optionalInt("refresh_in", in: 1...86_400) { s.config.lifetimes.refreshIn = Int(r) }
                    s.config.otpLength = Int(try f.optionalInt("otp_length", in: 4...10) ?? Int64(s.config.otpLength))
                    s.config.refreshTokenReuseDetection =
                        try f.optionalBool("refresh_token_reuse_detection") ?? s.config.refreshTokenReuseDetection
                    s.config.resetInProgressPolls = Int(
                        try f.optionalInt("reset_in_progress_polls", in: 0...1000)
                            ?? Int64(s.config.resetInProgressPolls)
                    )
                    s.config.resetPollInterval = Int(
                        try f.optionalInt("reset_poll_interval", in: 0...60) ?? Int64(s.config.resetPollInterval)
                    )
                    if let r = try f.optionalString("reset_poll_result") {
                        guard r == "succeeded" || r == "failed" else {
                            throw JSONFieldError(
                                path: "reset_poll_result",
                                problem: .invalid("must be succeeded or failed")
                            )
                        }
                        s.config.resetPollResult = r
                    }
                    if f.raw("reset_poll_policy_error")?.isNull == true { s.config.resetPollPolicyError = nil }
                    if let sub = try f.optionalString("reset_poll_policy_error") {
                        guard passwordPolicySuberrors[sub] != nil else {
                            throw JSONFieldError(
                                path: "reset_poll_policy_error",
                                problem: .invalid(
                                    "must be null or one of "
                                        + passwordPolicySuberrors.keys.sorted().joined(separator: ", ")
                                )
                            )
                        }
                        s.config.resetPollPolicyError = sub
                    }
                    s.config.resetCompletionWithoutToken =
                        try f.optionalBool("reset_completion_without_token") ?? s.config.resetCompletionWithoutToken
                    s.config.signUpCompletionWithoutToken =
                        try f.optionalBool("sign_up_completion_without_token") ?? s.config.signUpCompletionWithoutToken
                    s.config.deviceCodeInterval = Int(
                        try f.optionalInt("device_code_interval", in: 1...60) ?? Int64(s.config.deviceCodeInterval)
                    )
                    s.config.deviceSlowDownIncrement = Int(
                        try f.optionalInt("device_slow_down_increment", in: 0...60)
                            ?? Int64(s.config.deviceSlowDownIncrement)
                    )
                    s.config.idTokenLoginHint = try f.optionalBool("id_token_login_hint") ?? s.config.idTokenLoginHint
                    s.config.oidc.idTokenOnRefresh =
                        try f.optionalBool("oidc_id_token_on_refresh") ?? s.config.oidc.idTokenOnRefresh
                    s.config.oidc.deviceMessage =
                        try f.optionalBool("oidc_device_message") ?? s.config.oidc.deviceMessage
                    s.config.oidc.deviceIDToken =
                        try f.optionalBool("oidc_device_id_token") ?? s.config.oidc.deviceIDToken
                    st.config = s.config
                }
                // The base URL the emulator names itself by (issuer, discovery endpoints, API URLs), e.g. a test's
                // TCP forwarder in front of it.
                if let u = try f.optionalString("public_base_url") { baseURL = u }
                return .json(["ok": true])
            } catch let e as JSONFieldError {
                return bad(e.description)
            }
        default:
            return .json(["error": "not_found", "error_description": "Unknown emulator control."], status: 404)
        }
    }
}
