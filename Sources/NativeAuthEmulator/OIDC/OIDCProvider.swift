import NativeAuthCrypto
import NativeAuthJSON

/// A generic OpenID Connect provider served by the same process under `<base>/oidc`, deliberately unlike Entra:
/// its own issuer (exactly `<base>/oidc`) and signing key; no `client_info`; a pairwise opaque `sub`; no
/// `preferred_username` for some users; ID tokens without `nbf`, refreshed ones without `nonce` (or none at all);
/// opaque access tokens (the sample APIs and userinfo look them up); refresh-token rotation with reuse detection; no
/// widening of scopes on refresh (`invalid_scope`); RFC 6749 error bodies without AADSTS codes, and an empty 401 for
/// an unknown client; the RFC 9207 `iss` authorization-response parameter; device code with
/// `verification_uri_complete` and, by default, no `message`; userinfo; RFC 7009 revocation. It shares users with the
/// tenant; its browser endpoints are `BrowserService`'s, its device codes `DeviceCodeService`'s.
final class OIDCProvider: Sendable {
    let directory: Directory
    let grants: Grants
    let minter: TokenMinter
    let counters: Counters
    let deviceCodes: DeviceCodeService
    let dpop: DPoPVerifier

    init(
        directory: Directory,
        grants: Grants,
        minter: TokenMinter,
        counters: Counters,
        deviceCodes: DeviceCodeService,
        dpop: DPoPVerifier
    ) {
        self.directory = directory
        self.grants = grants
        self.minter = minter
        self.counters = counters
        self.deviceCodes = deviceCodes
        self.dpop = dpop
    }

    func issuer(_ ctx: RequestContext) -> String { minter.issuer(.oidc, baseURL: ctx.baseURL) }

    // MARK: - Token endpoint

    /// The token endpoint. A DPoP proof (when the provider does DPoP) is checked before the grant is looked at, so
    /// a refused proof — a nonce challenge included — spends no code, device code or refresh token; the tokens are
    /// then bound to its key.
    func token(
        _ form: [String: String],
        _ req: EmulatorRequest,
        _ ctx: RequestContext
    ) throws(OIDCError)
        -> EmulatorResponse
    {
        let config = directory.config
        do throws(OIDCError) {
            let client = try config.oidcClient(form)
            let jkt = try tokenProof(req, ctx, config)
            var r: EmulatorResponse
            switch form["grant_type"] ?? "" {
            case "authorization_code": r = try codeGrant(form, client, config, ctx, jkt: jkt)
            case "refresh_token": r = try refreshGrant(form, client, config, ctx, jkt: jkt)
            case "urn:ietf:params:oauth:grant-type:device_code":
                r = try deviceGrant(form, client, config, ctx, jkt: jkt)
            case "": throw OIDCError("invalid_request", "grant_type is required.")
            default: throw OIDCError("unsupported_grant_type", "The grant type is not supported.")
            }
            r.headers += nonceHeaders(.token, config, ctx)
            return r
        } catch {
            var e = error
            if !e.headers.contains(where: { $0.0 == "DPoP-Nonce" }) { e.headers += nonceHeaders(.token, config, ctx) }
            throw e
        }
    }

    private func codeGrant(
        _ form: [String: String],
        _ client: String,
        _ config: EmulatorConfig,
        _ ctx: RequestContext,
        jkt: String?
    ) throws(OIDCError) -> EmulatorResponse {
        try grants.withLock { g throws(OIDCError) -> EmulatorResponse in
            guard let code = form["code"], let rec = g.takeAuthCode(code, idp: .oidc) else {
                throw .invalidGrant("The authorization code is invalid or was already used.")
            }
            guard rec.expires > ctx.now else { throw .invalidGrant("The authorization code has expired.") }
            guard rec.clientID == client else {
                throw .invalidGrant("The authorization code was issued to another client.")
            }
            guard form["redirect_uri"] == rec.redirectURI else { throw .invalidGrant("redirect_uri does not match.") }
            guard let verifier = form["code_verifier"], !verifier.isEmpty,
                constantTimeStringEquals(PKCE.challenge(for: verifier), rec.challenge)
            else { throw .invalidGrant("PKCE verification failed.") }
            guard let user = directory.user(rec.user) else { throw .invalidGrant("The user no longer exists.") }
            let scopes = try OIDCScopes.list(rec.scope, config)
            counters.add(.authorizationCodesRedeemed)
            let issue = OIDCIssue(
                user: user,
                client: client,
                scopes: scopes,
                grant: scopes,
                nonce: rec.nonce,
                family: nil,
                idToken: scopes.contains("openid"),
                authTime: rec.authTime,
                jkt: jkt
            )
            return minter.issueOIDC(issue, &g, ctx)
        }
    }

    /// Rotation with reuse detection; a refresh may narrow the grant's scopes, never widen them.
    private func refreshGrant(
        _ form: [String: String],
        _ client: String,
        _ config: EmulatorConfig,
        _ ctx: RequestContext,
        jkt: String?
    ) throws(OIDCError) -> EmulatorResponse {
        guard let rt = form["refresh_token"], !rt.isEmpty else {
            throw OIDCError("invalid_request", "refresh_token is required.")
        }
        return try grants.withLock { g throws(OIDCError) -> EmulatorResponse in
            guard var rec = g.refreshTokens[rt], rec.idp == .oidc, rec.clientID == client else {
                throw .invalidGrant("The refresh token is invalid.")
            }
            // A bound refresh token is refused, unspent, without a proof of its key (RFC 9449 §5).
            if let bound = rec.jkt, bound != jkt {
                throw OIDCError(
                    "invalid_dpop_proof",
                    jkt == nil
                        ? "The refresh token is DPoP-bound; the request has no proof."
                        : "The refresh token is bound to another key than the proof's."
                )
            }
            guard !g.revokedFamilies.contains(rec.family) else { throw .invalidGrant("The refresh token was revoked.") }
            guard rec.expires > ctx.now else { throw .invalidGrant("The refresh token has expired.") }
            if rec.used && config.refreshTokenReuseDetection {
                g.revokeOIDCFamily(rec.family)
                counters.add(.refreshTokenReuseDetected)
                throw .invalidGrant("The refresh token was already used; the grant is revoked.")
            }
            let scopes = try narrowedScopes(form["scope"], grant: rec.scopes, config)
            guard let user = directory.user(rec.user) else { throw .invalidGrant("The user no longer exists.") }
            rec.used = true
            g.refreshTokens[rt] = rec
            counters.add(.refreshGrants)
            let issue = OIDCIssue(
                user: user,
                client: client,
                scopes: scopes,
                grant: rec.scopes,
                nonce: nil,
                family: rec.family,
                idToken: config.oidc.idTokenOnRefresh && scopes.contains("openid"),
                authTime: rec.authTime,
                jkt: jkt
            )
            return minter.issueOIDC(issue, &g, ctx)
        }
    }

    /// The scopes a refresh asks for: the grant's when none; never beyond them (`invalid_scope`).
    private func narrowedScopes(
        _ raw: String?,
        grant: [String],
        _ config: EmulatorConfig
    ) throws(OIDCError) -> [String] {
        guard let raw, !raw.trimmingCharacters(in: .whitespaces).isEmpty else { return grant }
        let scopes = try OIDCScopes.list(raw, config)
        let beyond = scopes.filter { !grant.contains($0) }
        guard beyond.isEmpty else {
            throw OIDCError(
                "invalid_scope",
                "The requested scope exceeds the original grant: \(beyond.joined(separator: " "))."
            )
        }
        return scopes
    }

    private func deviceGrant(
        _ form: [String: String],
        _ client: String,
        _ config: EmulatorConfig,
        _ ctx: RequestContext,
        jkt: String?
    ) throws(OIDCError) -> EmulatorResponse {
        switch deviceCodes.poll(form["device_code"], idp: .oidc, client: client, ctx) {
        case .invalid: throw .invalidGrant("The device code is invalid.")
        case .expired: throw OIDCError("expired_token", "The device code has expired.")
        case .denied: throw OIDCError("access_denied", "The user denied the request.")
        case .slowDown: throw OIDCError("slow_down", "Polling too fast.")
        case .pending: throw OIDCError("authorization_pending", "The user has not yet approved the request.")
        case .approved(let user, let scope):
            let scopes = try OIDCScopes.list(scope, config)
            let issue = OIDCIssue(
                user: user,
                client: client,
                scopes: scopes,
                grant: scopes,
                nonce: nil,
                family: nil,
                idToken: config.oidc.deviceIDToken && scopes.contains("openid"),
                authTime: ctx.now,
                jkt: jkt
            )
            return grants.withLock { g in minter.issueOIDC(issue, &g, ctx) }
        }
    }

    // MARK: - Device authorization (RFC 8628)

    func deviceAuthorization(_ form: [String: String], _ ctx: RequestContext) throws(OIDCError) -> EmulatorResponse {
        let config = directory.config
        let client = try config.oidcClient(form)
        let scope = form["scope"] ?? ""
        _ = try OIDCScopes.list(scope, config)
        let code = String(Ids.userCode().prefix(8))
        let shown = String(code.prefix(4)) + "-" + String(code.suffix(4))
        let device = deviceCodes.issue(
            idp: .oidc,
            client: client,
            scope: scope,
            deviceCodePrefix: "dc_",
            userCode: code,
            config,
            ctx
        )
        let uri = "\(issuer(ctx))/device"
        var body: [String: JSONValue] = [
            "device_code": .string(device), "user_code": .string(shown), "verification_uri": .string(uri),
            "verification_uri_complete": .string(uri + "?user_code=" + shown),
            "expires_in": .int(Int64(config.lifetimes.deviceCode)),
            "interval": .int(Int64(config.deviceCodeInterval)),
        ]
        if config.oidc.deviceMessage { body["message"] = .string("Open \(uri) and enter the code \(shown).") }
        counters.add(.deviceCodesIssued)
        return .json(.object(body))
    }

    // MARK: - Revocation (RFC 7009), userinfo

    /// A refresh token revokes its grant and its access tokens; an access token only itself. Always 200, no body.
    func revoke(_ form: [String: String], _ ctx: RequestContext) throws(OIDCError) -> EmulatorResponse {
        let client = try directory.config.oidcClient(form)
        guard let token = form["token"], !token.isEmpty else {
            throw OIDCError("invalid_request", "token is required.")
        }
        grants.withLock { g in
            if let rt = g.refreshTokens[token], rt.idp == .oidc, rt.clientID == client {
                g.revokeOIDCFamily(rt.family)
            } else if let at = g.opaqueAccessTokens[token], at.clientID == client {
                g.opaqueAccessTokens.removeValue(forKey: token)
            }
        }
        counters.add(.revocations)
        return EmulatorResponse(status: 200, headers: [("Cache-Control", "no-store")])
    }

    /// `GET|POST /oidc/userinfo` with a bearer access token of the provider: `sub`, `name`, `email`,
    /// `email_verified`, and `preferred_username` when the user has one. Failures are 401 with `WWW-Authenticate` and
    /// no body.
    func userinfo(_ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        var presented = PresentedToken(req)
        if presented == nil, req.method == "POST", let t = req.form?["access_token"] {
            presented = PresentedToken(token: t, dpop: false)
        }
        func refuse(_ challenge: String) -> EmulatorResponse {
            EmulatorResponse(status: 401, headers: [("WWW-Authenticate", challenge), ("Cache-Control", "no-store")])
        }
        guard let presented, !presented.token.isEmpty else { return refuse("Bearer realm=\"oidc\"") }
        counters.add(.userinfoRequests)
        guard let (rec, expired) = grants.opaqueAccessToken(presented.token), rec.expires > ctx.now, !expired,
            let user = directory.user(rec.user)
        else {
            return refuse(
                "\(presented.scheme) realm=\"oidc\", error=\"invalid_token\", "
                    + "error_description=\"The access token is not valid.\""
            )
        }
        let config = directory.config.oidc
        if let refusal = dpop.resourceCheck(jkt: rec.jkt, presented, req, ctx, config, realm: "oidc") {
            return refusal
        }
        var o: [String: JSONValue] = [
            "sub": .string(minter.oidcSubject(user)), "name": .string(user.displayName), "email": .string(user.email),
            "email_verified": true,
        ]
        if let p = minter.oidcPreferredUsername(user) { o["preferred_username"] = .string(p) }
        return .json(.object(o))
    }
}
