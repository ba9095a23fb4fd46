import NativeAuthCrypto
import NativeAuthJSON

/// Mints and recognises tokens: the tenant's (RS256 access and ID tokens, refresh tokens, `client_info`) and the
/// generic provider's (opaque access tokens, rotated refresh tokens, ID tokens with its own key). What it grants goes
/// into the `GrantState` its caller holds locked.
final class TokenMinter: Sendable {
    let entraKey: SigningKey
    let oidcKey: SigningKey
    let tenantID: String
    /// The generic provider's client as configured at start (pairwise subjects stay stable across settings).
    let oidcClientID: String
    let directory: Directory
    let counters: Counters

    init(config: EmulatorConfig, directory: Directory, counters: Counters) throws {
        entraKey = try SigningKey(kidPrefix: "k")
        oidcKey = try SigningKey(kidPrefix: "ok")
        tenantID = config.tenantID
        oidcClientID = config.oidc.clientID
        self.directory = directory
        self.counters = counters
    }

    func issuer(_ idp: IdP, baseURL: String) -> String {
        idp == .entra ? "\(baseURL)/\(tenantID)/v2.0" : "\(baseURL)/oidc"
    }

    // MARK: - Claims about users

    /// The opaque `login_hint` optional claim of Entra ID tokens. Clients send it back as `login_hint` or
    /// `logout_hint`; `BrowserService.resolveHint` reads it.
    func loginHintClaim(_ user: UserRecord) -> String {
        let doc: JSONValue = [
            "v": 1, "uid": .string(user.objectID), "utid": .string(tenantID), "upn": .string(user.email),
        ]
        return "O." + Base64.urlEncode(doc.serializedBytes() ?? [])
    }

    func clientInfo(_ user: UserRecord) -> String {
        let doc: JSONValue = ["uid": .string(user.objectID), "utid": .string(tenantID)]
        return Base64.urlEncode(doc.serializedBytes() ?? [])
    }

    /// The pairwise subject identifier the generic provider gives `user`: opaque, stable, not an email.
    func oidcSubject(_ user: UserRecord) -> String {
        Base64.urlEncode(SHA256.hash("pairwise|\(oidcClientID)|\(user.objectID)").prefix(18))
    }

    /// The generic provider's `preferred_username`: the email's local part, or none for users without one.
    func oidcPreferredUsername(_ user: UserRecord) -> String? {
        guard user.oidcPreferredUsername else { return nil }
        return user.email.split(separator: "@").first.map(String.init)
    }

    /// What an `id_token_hint` is worth: "absent", "invalid", or "valid" (our signature and issuer) with its claims;
    /// an expired hint is still valid, as OpenID Connect RP-Initiated Logout allows.
    func checkIDTokenHint(_ token: String?, idp: IdP, _ ctx: RequestContext) -> (String, JSONValue?) {
        guard let token, !token.isEmpty else { return ("absent", nil) }
        guard let jwt = try? JWT(decoding: token), (idp == .entra ? entraKey : oidcKey).signed(jwt),
            jwt.claims["iss"]?.stringValue == issuer(idp, baseURL: ctx.baseURL)
        else { return ("invalid", nil) }
        return ("valid", jwt.claims)
    }

    // MARK: - Entra

    /// Mints the tenant's token answer: RS256 access token, ID token with `openid`, refresh token with
    /// `offline_access`, and `client_info`.
    func issueEntra(
        user: UserRecord,
        client: ClientApp,
        scopes: ScopeGrant,
        nonce: String?,
        family: String?,
        _ grants: inout GrantState,
        _ ctx: RequestContext
    ) throws(ServiceError) -> JSONValue {
        let config = directory.config
        let atLife = Int64(user.accessTokenLifetime ?? config.lifetimes.accessToken)
        let uti = Ids.token("", bytes: 12)
        grants.accessTokenOwners[uti] = user.email
        var body: [String: JSONValue] = [
            "token_type": "Bearer", "scope": .string(scopes.responseScope),
            "expires_in": .int(atLife), "ext_expires_in": .int(atLife),
            "client_info": .string(clientInfo(user)),
        ]
        do {
            let at = entraAccessTokenClaims(user, client, scopes, uti: uti, life: atLife, ctx)
            body["access_token"] = .string(try entraKey.sign(at))
            if scopes.hasOpenID {
                let id = entraIDTokenClaims(user, client, scopes, nonce: nonce, config, ctx)
                body["id_token"] = .string(try entraKey.sign(id))
            }
        } catch {
            throw .serverError
        }
        if scopes.hasOfflineAccess {
            let rt = Ids.token("RT.", bytes: 32)
            grants.refreshTokens[rt] = RefreshTokenRecord(
                family: family ?? Ids.token("F.", bytes: 9),
                user: user.email,
                clientID: client.clientID,
                expires: ctx.now + Double(config.lifetimes.refreshToken)
            )
            body["refresh_token"] = .string(rt)
            body["refresh_token_expires_in"] = .int(Int64(config.lifetimes.refreshToken))
        }
        if let r = config.lifetimes.refreshIn { body["refresh_in"] = .int(Int64(r)) }
        counters.add(.tokensIssued)
        return .object(body)
    }

    private func entraAccessTokenClaims(
        _ user: UserRecord,
        _ client: ClientApp,
        _ scopes: ScopeGrant,
        uti: String,
        life: Int64,
        _ ctx: RequestContext
    ) -> JSONValue {
        let now = Int64(ctx.now)
        var at: [String: JSONValue] = [
            "iss": .string(issuer(.entra, baseURL: ctx.baseURL)), "iat": .int(now), "nbf": .int(now),
            "exp": .int(now + life), "tid": .string(tenantID), "oid": .string(user.objectID),
            "sub": .string(user.objectID), "azp": .string(client.clientID), "ver": "2.0",
            "preferred_username": .string(user.email), "name": .string(user.displayName), "uti": .string(uti),
        ]
        if let api = scopes.api {
            at["aud"] = .string(api.appID)
            at["scp"] = .string(scopes.permissions.joined(separator: " "))
        } else {
            at["aud"] = .string(graphAppID)
            at["scp"] = .string((["User.Read"] + scopes.oidc.filter { $0 != "offline_access" }).joined(separator: " "))
        }
        return .object(at)
    }

    private func entraIDTokenClaims(
        _ user: UserRecord,
        _ client: ClientApp,
        _ scopes: ScopeGrant,
        nonce: String?,
        _ config: EmulatorConfig,
        _ ctx: RequestContext
    ) -> JSONValue {
        let now = Int64(ctx.now)
        var id: [String: JSONValue] = [
            "iss": .string(issuer(.entra, baseURL: ctx.baseURL)), "aud": .string(client.clientID), "iat": .int(now),
            "nbf": .int(now), "exp": .int(now + Int64(config.lifetimes.idToken)), "tid": .string(tenantID),
            "oid": .string(user.objectID), "sub": .string(user.objectID), "ver": "2.0",
            "preferred_username": .string(user.email), "name": .string(user.displayName),
        ]
        if scopes.oidc.contains("email") { id["email"] = .string(user.email) }
        if let g = user.givenName { id["given_name"] = .string(g) }
        if let f = user.surname { id["family_name"] = .string(f) }
        if let nonce { id["nonce"] = .string(nonce) }
        if config.idTokenLoginHint { id["login_hint"] = .string(loginHintClaim(user)) }
        return .object(id)
    }
}
