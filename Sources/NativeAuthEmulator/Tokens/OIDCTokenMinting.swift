import NativeAuthJSON

/// What the generic provider's token answer is for.
struct OIDCIssue {
    var user: UserRecord
    var client: String
    /// The scopes of this answer.
    var scopes: [String]
    /// The scopes of the grant its refresh token carries (a refresh may narrow `scopes`, never this).
    var grant: [String]
    var nonce: String?
    /// The refresh-token family to continue (nil: a new grant).
    var family: String?
    var idToken: Bool
    var authTime: Double
    /// The key the tokens are bound to (a DPoP proof came with the request), or nil: bearer tokens.
    var jkt: String? = nil
}

extension TokenMinter {
    /// The generic provider's token answer: an opaque access token for the scopes, a rotated refresh token for the
    /// grant (with `offline_access`), an ID token when asked (RS256 with the provider's key; no `nbf`; `nonce` when
    /// given).
    func issueOIDC(_ issue: OIDCIssue, _ grants: inout GrantState, _ ctx: RequestContext) -> EmulatorResponse {
        let life = directory.config.lifetimes
        let user = issue.user
        let atLife = user.accessTokenLifetime ?? life.accessToken
        let family = issue.family ?? Ids.token("F.", bytes: 9)
        let at = Ids.token("oat_", bytes: 32)
        let tokenID = Ids.token("", bytes: 12)
        grants.opaqueAccessTokens[at] = OpaqueAccessToken(
            user: user.email,
            clientID: issue.client,
            scopes: issue.scopes,
            expires: ctx.now + Double(atLife),
            family: family,
            id: tokenID,
            jkt: issue.jkt
        )
        grants.accessTokenOwners[tokenID] = user.email
        var body: [String: JSONValue] = [
            "access_token": .string(at), "token_type": issue.jkt == nil ? "Bearer" : "DPoP",
            "expires_in": .int(Int64(atLife)),
            "scope": .string(issue.scopes.joined(separator: " ")),
        ]
        if issue.grant.contains("offline_access") {
            let rt = Ids.token("ort_", bytes: 32)
            grants.refreshTokens[rt] = RefreshTokenRecord(
                family: family,
                user: user.email,
                clientID: issue.client,
                expires: ctx.now + Double(life.refreshToken),
                idp: .oidc,
                scopes: issue.grant,
                authTime: issue.authTime,
                jkt: issue.jkt
            )
            body["refresh_token"] = .string(rt)
        }
        if issue.idToken, let jwt = try? oidcKey.sign(oidcIDTokenClaims(issue, idTokenLife: life.idToken, ctx)) {
            body["id_token"] = .string(jwt)
        }
        counters.add(.tokensIssued)
        counters.add(.oidcTokensIssued)
        if issue.jkt != nil { counters.add(.dpopTokensIssued) }
        return .json(.object(body))
    }

    private func oidcIDTokenClaims(_ issue: OIDCIssue, idTokenLife: Int, _ ctx: RequestContext) -> JSONValue {
        let now = Int64(ctx.now)
        let user = issue.user
        var claims: [String: JSONValue] = [
            "iss": .string(issuer(.oidc, baseURL: ctx.baseURL)), "sub": .string(oidcSubject(user)),
            "aud": .string(issue.client), "iat": .int(now), "exp": .int(now + Int64(idTokenLife)),
            "auth_time": .int(Int64(issue.authTime)), "name": .string(user.displayName),
            "email": .string(user.email), "email_verified": true,
        ]
        if let p = oidcPreferredUsername(user) { claims["preferred_username"] = .string(p) }
        if let nonce = issue.nonce { claims["nonce"] = .string(nonce) }
        return .object(claims)
    }
}
