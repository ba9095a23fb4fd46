import Foundation
import NativeAuthCrypto
import NativeAuthJSON

// A generic OpenID Connect provider served by the same process under `<base>/oidc`, deliberately unlike Entra:
// its own issuer (exactly `<base>/oidc`) and signing key; no `client_info`; a pairwise opaque `sub`; no
// `preferred_username` for some users; ID tokens without `nbf`, refreshed ones without `nonce` (or none at all);
// opaque access tokens (the sample APIs and userinfo look them up); refresh-token rotation with reuse detection; no
// widening of scopes on refresh (`invalid_scope`); RFC 6749 error bodies without AADSTS codes, and an empty 401 for an
// unknown client; the RFC 9207 `iss` authorization-response parameter; device code with `verification_uri_complete`
// and, by default, no `message`; userinfo; RFC 7009 revocation. It shares users with the tenant.

/// An error of the generic provider: `{"error","error_description"}` (RFC 6749 §5.2), or no body at all.
struct OIDCError: Error {
    var status = 400
    var error: String
    var description: String
    var emptyBody = false
    var headers: [(String, String)] = []

    init(_ error: String, _ description: String, status: Int = 400) {
        self.error = error
        self.description = description
        self.status = status
    }

    /// An unknown `client_id`: 401 with an empty body.
    static func invalidClient() -> OIDCError {
        var e = OIDCError("invalid_client", "", status: 401)
        e.emptyBody = true
        return e
    }

    static func invalidGrant(_ why: String) -> OIDCError { OIDCError("invalid_grant", why) }

    var response: EmulatorResponse {
        if emptyBody { return EmulatorResponse(status: status, headers: [("Cache-Control", "no-store")] + headers) }
        var r = EmulatorResponse.json(
            ["error": .string(error), "error_description": .string(description)],
            status: status
        )
        r.headers += headers
        return r
    }
}

extension Emulator {
    func oidcIssuer(_ ctx: RequestContext) -> String { "\(ctx.baseURL)/oidc" }

    /// The pairwise subject identifier the generic provider gives `user`: opaque, stable, not an email.
    func oidcSubject(_ user: UserRecord) -> String {
        Base64.urlEncode(SHA256.hash("pairwise|\(initialConfig.oidc.clientID)|\(user.objectID)").prefix(18))
    }

    /// The generic provider's `preferred_username`: the email's local part, or none for users without one.
    func oidcPreferredUsername(_ user: UserRecord) -> String? {
        guard user.oidcPreferredUsername else { return nil }
        return user.email.split(separator: "@").first.map(String.init)
    }

    /// The generic provider's scope for an API permission: the permission in lower case ("todolist.read").
    func oidcScope(_ permission: String) -> String { permission.lowercased() }

    /// The scopes of a `scope` parameter, de-duplicated, in order; unknown ones are `invalid_scope`.
    func oidcScopeList(_ raw: String?, _ s: Store) throws(OIDCError) -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        for scope in (raw ?? "").split(separator: " ").map(String.init) where seen.insert(scope).inserted {
            let known =
                oidcScopes.contains(scope)
                || s.config.apis.contains { $0.permissions.contains { oidcScope($0) == scope } }
            guard known else { throw OIDCError("invalid_scope", "The scope '\(scope)' is not supported.") }
            out.append(scope)
        }
        return out
    }

    /// What is wrong with an authorize request's `scope` at `idp`, if anything.
    func browserScopeProblem(
        _ idp: IdP,
        _ scope: String,
        _ client: ClientApp,
        _ s: Store
    ) -> BrowserError? {
        switch idp {
        case .entra:
            do throws(ServiceError) { _ = try resolveScopes(scope, client: client, s) } catch {
                return BrowserError(error: error.error, entra: error.text, generic: error.text)
            }
        case .oidc:
            do throws(OIDCError) { _ = try oidcScopeList(scope, s) } catch {
                return BrowserError(error: error.error, entra: error.description, generic: error.description)
            }
        }
        return nil
    }

    // MARK: - Routes

    func oidcRoute(_ req: EmulatorRequest, _ rest: String, _ ctx: RequestContext) throws -> EmulatorResponse {
        switch (req.method, rest) {
        case ("GET", ".well-known/openid-configuration"): return .json(oidcDiscovery(ctx))
        case ("GET", "jwks"): return .json(["keys": [oidcJWK]])
        case ("GET", "authorize"), ("POST", "authorize"): return authorize(req, ctx, idp: .oidc)
        case ("GET", "logout"), ("POST", "logout"): return endSession(req, ctx, idp: .oidc)
        case ("GET", "device"), ("POST", "device"): return devicePage(req, ctx, idp: .oidc)
        case ("GET", "userinfo"), ("POST", "userinfo"): return userinfo(req, ctx)
        case ("POST", "token"), ("POST", "device_authorization"), ("POST", "revoke"): break
        default:
            return .json(["error": "not_found", "error_description": "No such endpoint."], status: 404)
        }
        guard req.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") ?? true,
            let form = req.form
        else {
            return OIDCError("invalid_request", "The body must be application/x-www-form-urlencoded.").response
        }
        do throws(OIDCError) {
            switch rest {
            case "token":
                countPresentedSecrets("oidc/token", form)
                return try oidcToken(form, ctx)
            case "device_authorization": return try oidcDeviceAuthorization(form, ctx)
            default: return try oidcRevoke(form, ctx)
            }
        } catch {
            return error.response
        }
    }

    func oidcDiscovery(_ ctx: RequestContext) -> JSONValue {
        let i = oidcIssuer(ctx)
        let apiScopes = config.apis.flatMap { $0.permissions.map { JSONValue.string(oidcScope($0)) } }
        return [
            "issuer": .string(i),
            "authorization_endpoint": .string("\(i)/authorize"),
            "token_endpoint": .string("\(i)/token"),
            "device_authorization_endpoint": .string("\(i)/device_authorization"),
            "userinfo_endpoint": .string("\(i)/userinfo"),
            "end_session_endpoint": .string("\(i)/logout"),
            "revocation_endpoint": .string("\(i)/revoke"),
            "jwks_uri": .string("\(i)/jwks"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "form_post"],
            "grant_types_supported": [
                "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code",
            ],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": .array(["openid", "profile", "email", "offline_access"] + apiScopes),
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "prompt_values_supported": ["none", "login", "consent", "select_account", "create"],
            "claims_supported": [
                "iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "name", "email", "email_verified",
                "preferred_username",
            ],
            "authorization_response_iss_parameter_supported": true,
        ]
    }

    /// The ready document's `oidc` member.
    func oidcReadyDocument(_ c: EmulatorConfig) -> JSONValue {
        let i = "\(baseURL)/oidc"
        let users: [JSONValue] = c.users.map { u in
            [
                "email": .string(u.email), "sub": .string(oidcSubject(u)),
                "preferred_username": oidcPreferredUsername(u).map { .string($0) } ?? .null,
            ]
        }
        return [
            "issuer": .string(i), "authority": .string(i),
            "discovery_url": .string("\(i)/.well-known/openid-configuration"), "client_id": .string(c.oidc.clientID),
            "device_verification_uri": .string("\(i)/device"),
            "apis": .array(
                c.apis.map { api in
                    [
                        "name": .string(api.name), "url": .string(baseURL + api.path),
                        "scopes": .array(api.permissions.map { .string(oidcScope($0)) }),
                    ]
                }
            ),
            "users": .array(users),
        ]
    }

    /// `client_id` must be the provider's client; anything else is a 401 with an empty body.
    private func oidcClient(_ form: [String: String], _ s: Store) throws(OIDCError) -> String {
        guard let id = form["client_id"], id == s.config.oidc.clientID else { throw .invalidClient() }
        return id
    }

    // MARK: - Token endpoint

    func oidcToken(_ form: [String: String], _ ctx: RequestContext) throws(OIDCError) -> EmulatorResponse {
        try store.withLock { s throws(OIDCError) -> EmulatorResponse in
            let client = try oidcClient(form, s)
            switch form["grant_type"] ?? "" {
            case "authorization_code": return try oidcCodeGrant(form, client, &s, ctx)
            case "refresh_token": return try oidcRefreshGrant(form, client, &s, ctx)
            case "urn:ietf:params:oauth:grant-type:device_code": return try oidcDeviceGrant(form, client, &s, ctx)
            case "": throw OIDCError("invalid_request", "grant_type is required.")
            default: throw OIDCError("unsupported_grant_type", "The grant type is not supported.")
            }
        }
    }

    private func oidcCodeGrant(
        _ form: [String: String],
        _ client: String,
        _ s: inout Store,
        _ ctx: RequestContext
    ) throws(OIDCError) -> EmulatorResponse {
        guard let code = form["code"], s.authCodes[code]?.idp == .oidc, let rec = s.authCodes.removeValue(forKey: code)
        else { throw .invalidGrant("The authorization code is invalid or was already used.") }
        guard rec.expires > ctx.now else { throw .invalidGrant("The authorization code has expired.") }
        guard rec.clientID == client else {
            throw .invalidGrant("The authorization code was issued to another client.")
        }
        guard form["redirect_uri"] == rec.redirectURI else { throw .invalidGrant("redirect_uri does not match.") }
        guard let verifier = form["code_verifier"], !verifier.isEmpty,
            constantTimeStringEquals(PKCE.challenge(for: verifier), rec.challenge)
        else { throw .invalidGrant("PKCE verification failed.") }
        guard let user = s.users[rec.user] else { throw .invalidGrant("The user no longer exists.") }
        let scopes = try oidcScopeList(rec.scope, s)
        counters.add(.authorizationCodesRedeemed)
        return oidcIssue(
            user,
            client,
            scopes: scopes,
            grant: scopes,
            nonce: rec.nonce,
            family: nil,
            idToken: scopes.contains("openid"),
            authTime: rec.authTime,
            &s,
            ctx
        )
    }

    private func oidcRefreshGrant(
        _ form: [String: String],
        _ client: String,
        _ s: inout Store,
        _ ctx: RequestContext
    ) throws(OIDCError) -> EmulatorResponse {
        guard let rt = form["refresh_token"], !rt.isEmpty else {
            throw OIDCError("invalid_request", "refresh_token is required.")
        }
        guard var rec = s.refreshTokens[rt], rec.idp == .oidc, rec.clientID == client else {
            throw .invalidGrant("The refresh token is invalid.")
        }
        guard !s.revokedFamilies.contains(rec.family) else { throw .invalidGrant("The refresh token was revoked.") }
        guard rec.expires > ctx.now else { throw .invalidGrant("The refresh token has expired.") }
        if rec.used && s.config.refreshTokenReuseDetection {
            s.revokedFamilies.insert(rec.family)
            s.opaqueAccessTokens = s.opaqueAccessTokens.filter { $0.value.family != rec.family }
            counters.add(.refreshTokenReuseDetected)
            throw .invalidGrant("The refresh token was already used; the grant is revoked.")
        }
        var scopes = rec.scopes
        if let raw = form["scope"], !raw.trimmingCharacters(in: .whitespaces).isEmpty {
            scopes = try oidcScopeList(raw, s)
            let beyond = scopes.filter { !rec.scopes.contains($0) }
            guard beyond.isEmpty else {
                throw OIDCError(
                    "invalid_scope",
                    "The requested scope exceeds the original grant: \(beyond.joined(separator: " "))."
                )
            }
        }
        guard let user = s.users[rec.user] else { throw .invalidGrant("The user no longer exists.") }
        rec.used = true
        s.refreshTokens[rt] = rec
        counters.add(.refreshGrants)
        return oidcIssue(
            user,
            client,
            scopes: scopes,
            grant: rec.scopes,
            nonce: nil,
            family: rec.family,
            idToken: s.config.oidc.idTokenOnRefresh && scopes.contains("openid"),
            authTime: rec.authTime,
            &s,
            ctx
        )
    }

    private func oidcDeviceGrant(
        _ form: [String: String],
        _ client: String,
        _ s: inout Store,
        _ ctx: RequestContext
    ) throws(OIDCError) -> EmulatorResponse {
        guard let code = form["device_code"], var rec = s.deviceCodes[code], rec.idp == .oidc, rec.clientID == client,
            !rec.redeemed
        else { throw .invalidGrant("The device code is invalid.") }
        guard rec.expires > ctx.now else { throw OIDCError("expired_token", "The device code has expired.") }
        if rec.denied { throw OIDCError("access_denied", "The user denied the request.") }
        counters.add(.devicePolls)
        if devicePollTooFast(&rec, &s, ctx) {
            s.deviceCodes[code] = rec
            throw OIDCError("slow_down", "Polling too fast.")
        }
        guard let email = rec.approvedUser, let user = s.users[email] else {
            s.deviceCodes[code] = rec
            throw OIDCError("authorization_pending", "The user has not yet approved the request.")
        }
        rec.redeemed = true
        s.deviceCodes[code] = rec
        let scopes = try oidcScopeList(rec.scope, s)
        return oidcIssue(
            user,
            client,
            scopes: scopes,
            grant: scopes,
            nonce: nil,
            family: nil,
            idToken: s.config.oidc.deviceIDToken && scopes.contains("openid"),
            authTime: ctx.now,
            &s,
            ctx
        )
    }

    /// A token answer: an opaque access token for `scopes`, a rotated refresh token for the `grant` (with
    /// `offline_access`), an ID token when asked (RS256 with the provider's key; no `nbf`; `nonce` when given).
    private func oidcIssue(
        _ user: UserRecord,
        _ client: String,
        scopes: [String],
        grant: [String],
        nonce: String?,
        family: String?,
        idToken: Bool,
        authTime: Double,
        _ s: inout Store,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        let now = Int64(ctx.now)
        let life = s.config.lifetimes
        let atLife = user.accessTokenLifetime ?? life.accessToken
        let family = family ?? Ids.token("F.", bytes: 9)
        let at = Ids.token("oat_", bytes: 32)
        let tokenID = Ids.token("", bytes: 12)
        s.opaqueAccessTokens[at] = OpaqueAccessToken(
            user: user.email,
            clientID: client,
            scopes: scopes,
            expires: ctx.now + Double(atLife),
            family: family,
            id: tokenID
        )
        s.accessTokenOwners[tokenID] = user.email
        var body: [String: JSONValue] = [
            "access_token": .string(at), "token_type": "Bearer", "expires_in": .int(Int64(atLife)),
            "scope": .string(scopes.joined(separator: " ")),
        ]
        if grant.contains("offline_access") {
            let rt = Ids.token("ort_", bytes: 32)
            s.refreshTokens[rt] = RefreshTokenRecord(
                family: family,
                user: user.email,
                clientID: client,
                expires: ctx.now + Double(life.refreshToken),
                idp: .oidc,
                scopes: grant,
                authTime: authTime
            )
            body["refresh_token"] = .string(rt)
        }
        if idToken {
            var claims: [String: JSONValue] = [
                "iss": .string(oidcIssuer(ctx)), "sub": .string(oidcSubject(user)), "aud": .string(client),
                "iat": .int(now), "exp": .int(now + Int64(life.idToken)), "auth_time": .int(Int64(authTime)),
                "name": .string(user.displayName), "email": .string(user.email), "email_verified": true,
            ]
            if let p = oidcPreferredUsername(user) { claims["preferred_username"] = .string(p) }
            if let nonce { claims["nonce"] = .string(nonce) }
            if let jwt = try? JWT.signRS256(claims: .object(claims), key: oidcSigningKey, kid: oidcKid) {
                body["id_token"] = .string(jwt)
            }
        }
        counters.add(.tokensIssued)
        counters.add(.oidcTokensIssued)
        return .json(.object(body))
    }

    // MARK: - Device authorization (RFC 8628)

    func oidcDeviceAuthorization(_ form: [String: String], _ ctx: RequestContext) throws(OIDCError) -> EmulatorResponse
    {
        try store.withLock { s throws(OIDCError) -> EmulatorResponse in
            let client = try oidcClient(form, s)
            let scope = form["scope"] ?? ""
            _ = try oidcScopeList(scope, s)
            let device = Ids.token("dc_", bytes: 24)
            let code = String(Ids.userCode().prefix(8))
            let shown = String(code.prefix(4)) + "-" + String(code.suffix(4))
            let life = s.config.lifetimes.deviceCode
            s.deviceCodes[device] = DeviceCodeRecord(
                userCode: code,
                clientID: client,
                scope: scope,
                expires: ctx.now + Double(life),
                interval: Double(s.config.deviceCodeInterval),
                idp: .oidc
            )
            let uri = "\(oidcIssuer(ctx))/device"
            var body: [String: JSONValue] = [
                "device_code": .string(device), "user_code": .string(shown), "verification_uri": .string(uri),
                "verification_uri_complete": .string(uri + "?user_code=" + shown), "expires_in": .int(Int64(life)),
                "interval": .int(Int64(s.config.deviceCodeInterval)),
            ]
            if s.config.oidc.deviceMessage { body["message"] = .string("Open \(uri) and enter the code \(shown).") }
            counters.add(.deviceCodesIssued)
            return .json(.object(body))
        }
    }

    // MARK: - Revocation (RFC 7009), userinfo

    func oidcRevoke(_ form: [String: String], _ ctx: RequestContext) throws(OIDCError) -> EmulatorResponse {
        try store.withLock { s throws(OIDCError) -> EmulatorResponse in
            let client = try oidcClient(form, s)
            guard let token = form["token"], !token.isEmpty else {
                throw OIDCError("invalid_request", "token is required.")
            }
            if let rt = s.refreshTokens[token], rt.idp == .oidc, rt.clientID == client {
                s.revokedFamilies.insert(rt.family)
                s.opaqueAccessTokens = s.opaqueAccessTokens.filter { $0.value.family != rt.family }
            } else if let at = s.opaqueAccessTokens[token], at.clientID == client {
                s.opaqueAccessTokens.removeValue(forKey: token)
            }
            counters.add(.revocations)
            return EmulatorResponse(status: 200, headers: [("Cache-Control", "no-store")])
        }
    }

    /// `GET|POST /oidc/userinfo` with a bearer access token of the provider: `sub`, `name`, `email`,
    /// `email_verified`, and `preferred_username` when the user has one. Failures are 401 with `WWW-Authenticate` and
    /// no body.
    func userinfo(_ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        var token: String? = nil
        if let auth = req.headers["authorization"], auth.lowercased().hasPrefix("bearer ") {
            token = String(auth.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        } else if req.method == "POST" {
            token = req.form?["access_token"]
        }
        func refuse(_ challenge: String) -> EmulatorResponse {
            EmulatorResponse(status: 401, headers: [("WWW-Authenticate", challenge), ("Cache-Control", "no-store")])
        }
        guard let token, !token.isEmpty else { return refuse("Bearer realm=\"oidc\"") }
        return store.withLock { s -> EmulatorResponse in
            counters.add(.userinfoRequests)
            guard let rec = s.opaqueAccessTokens[token], rec.expires > ctx.now,
                !s.expiredAccessTokens.contains(rec.id), let user = s.users[rec.user]
            else {
                return refuse(
                    "Bearer realm=\"oidc\", error=\"invalid_token\", "
                        + "error_description=\"The access token is not valid.\""
                )
            }
            var o: [String: JSONValue] = [
                "sub": .string(oidcSubject(user)), "name": .string(user.displayName), "email": .string(user.email),
                "email_verified": true,
            ]
            if let p = oidcPreferredUsername(user) { o["preferred_username"] = .string(p) }
            return .json(.object(o))
        }
    }
}
