import Foundation
import NativeAuthCrypto
import NativeAuthJSON

/// What a `scope` parameter asks for, after validation.
struct ScopeGrant {
    var oidc: [String]
    var api: ProtectedAPIConfig?
    var permissions: [String]

    var hasOfflineAccess: Bool { oidc.contains("offline_access") }
    var hasOpenID: Bool { oidc.contains("openid") }

    /// The response's `scope`: the resource scopes, then the OIDC ones.
    var responseScope: String {
        ((api.map { a in permissions.map { a.scope($0) } } ?? []) + oidc).joined(separator: " ")
    }
}

let graphAppID = "00000003-0000-0000-c000-000000000000"
let oidcScopes: Set<String> = ["openid", "profile", "offline_access", "email"]

/// Standard OAuth 2.0 / OIDC: discovery, token grants, authorization code + PKCE, device code.
extension Emulator {
    // MARK: - Scopes and tokens

    func resolveScopes(_ raw: String?, client: ClientApp, _ s: Store) throws(ServiceError) -> ScopeGrant {
        var seen = Set<String>()
        let requested = (raw ?? "").split(whereSeparator: { $0 == " " || $0 == "+" }).map(String.init).filter {
            seen.insert($0).inserted
        }
        var grant = ScopeGrant(oidc: [], api: nil, permissions: [])
        for scope in requested {
            if oidcScopes.contains(scope.lowercased()) {
                grant.oidc.append(scope.lowercased())
                continue
            }
            var resource = ""
            var permission = scope
            if let slash = scope.lastIndex(of: "/") {
                resource = String(scope[..<slash])
                permission = String(scope[scope.index(after: slash)...])
            }
            let appID = resource.hasPrefix("api://") ? String(resource.dropFirst(6)) : resource
            guard let api = s.config.apis.first(where: { $0.appID.lowercased() == appID.lowercased() }) else {
                throw resource.isEmpty ? .invalidScope(scope) : .resourceNotFound(resource, tenant: tenantDomain)
            }
            guard let perm = api.permissions.first(where: { $0.lowercased() == permission.lowercased() }) else {
                throw .scopeNotOnResource(scope)
            }
            if let current = grant.api, current.appID != api.appID {
                throw .moreThanOneResource
            }
            if let consented = client.consentedScopes,
                !consented.contains(where: { $0.lowercased() == api.scope(perm).lowercased() })
            {
                throw .consentRequired(clientID: client.clientID)
            }
            grant.api = api
            if !grant.permissions.contains(perm) { grant.permissions.append(perm) }
        }
        return grant
    }

    /// The opaque `login_hint` optional claim of Entra ID tokens. Clients send it back as `login_hint` or
    /// `logout_hint`; the emulator reads it with `resolveHint`.
    func loginHintClaim(_ user: UserRecord) -> String {
        let doc: JSONValue = [
            "v": 1, "uid": .string(user.objectID), "utid": .string(tenantID), "upn": .string(user.email),
        ]
        return "O." + Base64.urlEncode(doc.serializedBytes() ?? [])
    }

    /// The account a `login_hint` / `logout_hint` names: an email address, an Entra `login_hint` claim, or (generic
    /// OIDC) a subject identifier.
    func resolveHint(_ hint: String?, idp: IdP, _ s: Store) -> String? {
        guard let hint = hint?.trimmingCharacters(in: .whitespaces), !hint.isEmpty else { return nil }
        if s.users[hint.lowercased()] != nil { return hint.lowercased() }
        if idp == .entra, hint.hasPrefix("O."), let bytes = Base64.decode(hint.dropFirst(2)),
            let doc = try? JSONValue.parse(bytes), let upn = doc["upn"]?.stringValue?.lowercased(),
            let user = s.users[upn], doc["uid"]?.stringValue == user.objectID
        {
            return upn
        }
        if idp == .oidc, let user = s.users.values.first(where: { oidcSubject($0) == hint }) { return user.email }
        return nil
    }

    func clientInfo(_ user: UserRecord) -> String {
        let doc: JSONValue = ["uid": .string(user.objectID), "utid": .string(tenantID)]
        return Base64.urlEncode(doc.serializedBytes() ?? [])
    }

    /// Mints a token response: RS256 access token, ID token with `openid`, refresh token with
    /// `offline_access`, and `client_info`.
    func issueTokens(
        user: UserRecord,
        client: ClientApp,
        scopes: ScopeGrant,
        nonce: String?,
        family: String?,
        _ s: inout Store,
        _ ctx: RequestContext
    ) throws(ServiceError) -> JSONValue {
        let now = Int64(ctx.now)
        let life = s.config.lifetimes
        let atLife = Int64(user.accessTokenLifetime ?? life.accessToken)
        let iss = "\(ctx.baseURL)/\(tenantID)/v2.0"
        let uti = Ids.token("", bytes: 12)
        s.accessTokenOwners[uti] = user.email
        var at: [String: JSONValue] = [
            "iss": .string(iss), "iat": .int(now), "nbf": .int(now), "exp": .int(now + atLife),
            "tid": .string(tenantID), "oid": .string(user.objectID), "sub": .string(user.objectID),
            "azp": .string(client.clientID), "ver": "2.0", "preferred_username": .string(user.email),
            "name": .string(user.displayName), "uti": .string(uti),
        ]
        if let api = scopes.api {
            at["aud"] = .string(api.appID)
            at["scp"] = .string(scopes.permissions.joined(separator: " "))
        } else {
            at["aud"] = .string(graphAppID)
            at["scp"] = .string((["User.Read"] + scopes.oidc.filter { $0 != "offline_access" }).joined(separator: " "))
        }
        var body: [String: JSONValue] = [
            "token_type": "Bearer", "scope": .string(scopes.responseScope),
            "expires_in": .int(atLife), "ext_expires_in": .int(atLife),
            "client_info": .string(clientInfo(user)),
        ]
        do {
            body["access_token"] = .string(try JWT.signRS256(claims: .object(at), key: signingKey, kid: kid))
            if scopes.hasOpenID {
                var id: [String: JSONValue] = [
                    "iss": .string(iss), "aud": .string(client.clientID), "iat": .int(now), "nbf": .int(now),
                    "exp": .int(now + Int64(life.idToken)), "tid": .string(tenantID), "oid": .string(user.objectID),
                    "sub": .string(user.objectID), "ver": "2.0", "preferred_username": .string(user.email),
                    "name": .string(user.displayName),
                ]
                if scopes.oidc.contains("email") { id["email"] = .string(user.email) }
                if let g = user.givenName { id["given_name"] = .string(g) }
                if let f = user.surname { id["family_name"] = .string(f) }
                if let nonce { id["nonce"] = .string(nonce) }
                if s.config.idTokenLoginHint { id["login_hint"] = .string(loginHintClaim(user)) }
                body["id_token"] = .string(try JWT.signRS256(claims: .object(id), key: signingKey, kid: kid))
            }
        } catch {
            throw .serverError
        }
        if scopes.hasOfflineAccess {
            let rt = Ids.token("RT.", bytes: 32)
            s.refreshTokens[rt] = RefreshTokenRecord(
                family: family ?? Ids.token("F.", bytes: 9),
                user: user.email,
                clientID: client.clientID,
                expires: ctx.now + Double(life.refreshToken)
            )
            body["refresh_token"] = .string(rt)
            body["refresh_token_expires_in"] = .int(Int64(life.refreshToken))
        }
        if let r = life.refreshIn { body["refresh_in"] = .int(Int64(r)) }
        counters.add(.tokensIssued)
        return .object(body)
    }

    /// Any known public client (standard flows do not need native auth enabled).
    func publicClient(_ form: [String: String], _ s: Store) throws(ServiceError) -> ClientApp {
        let c = try knownClient(form, s)
        guard c.isPublic else {
            throw .clientCredentialsRequired
        }
        return c
    }

    // MARK: - /token

    func token(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        guard let grant = form["grant_type"], !grant.isEmpty else { throw .missingParameter("grant_type") }
        // An injected error answers before anything is processed: no refresh token is consumed or rotated.
        if let injected = injectedTokenError(form, grant: grant, ctx) { throw injected }
        return tamperTokenAnswer(try tokenGrant(form, grant: grant, ctx), grant: grant, form, ctx)
    }

    private func tokenGrant(
        _ form: [String: String],
        grant: String,
        _ ctx: RequestContext
    ) throws(ServiceError) -> EmulatorResponse {
        if let native = try nativeToken(form, grant: grant, ctx) { return native }
        switch grant {
        case "refresh_token": return try refreshGrant(form, ctx)
        case "authorization_code": return try authorizationCodeGrant(form, ctx)
        case "urn:ietf:params:oauth:grant-type:device_code", "device_code": return try deviceCodeGrant(form, ctx)
        default:
            throw .unsupportedGrantType(grant)
        }
    }

    func refreshGrant(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try publicClient(form, s)
            guard let rt = form["refresh_token"], !rt.isEmpty else { throw .missingParameter("refresh_token") }
            guard var rec = s.refreshTokens[rt], rec.idp == .entra else {
                throw .malformedRefreshToken
            }
            guard rec.clientID == client.clientID else {
                throw .refreshTokenOfAnotherClient
            }
            guard !s.revokedFamilies.contains(rec.family) else {
                let issued = rec.expires - Double(s.config.lifetimes.refreshToken)
                throw .refreshTokenRevoked(issued: serviceTimestamp(issued), validFrom: serviceTimestamp(ctx.now))
            }
            guard rec.expires > ctx.now else {
                throw .refreshTokenExpired
            }
            if rec.used && s.config.refreshTokenReuseDetection {
                // RFC 9700 §4.14.2: replay of a rotated refresh token revokes the whole family.
                s.revokedFamilies.insert(rec.family)
                counters.add(.refreshTokenReuseDetected)
                throw .refreshTokenReused
            }
            guard let user = s.users[rec.user] else { throw .userNotFound }
            let scopes = try resolveScopes(form["scope"], client: client, s)
            rec.used = true
            s.refreshTokens[rt] = rec
            counters.add(.refreshGrants)
            return .json(
                try issueTokens(user: user, client: client, scopes: scopes, nonce: nil, family: rec.family, &s, ctx)
            )
        }
    }

    func authorizationCodeGrant(
        _ form: [String: String],
        _ ctx: RequestContext
    ) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try publicClient(form, s)
            guard let code = form["code"], !code.isEmpty else { throw .missingParameter("code") }
            guard s.authCodes[code]?.idp == .entra, let rec = s.authCodes.removeValue(forKey: code) else {
                throw .authorizationCodeRedeemed
            }
            guard rec.expires > ctx.now else {
                throw .authorizationCodeExpired
            }
            guard rec.clientID == client.clientID else {
                throw .authorizationCodeOfAnotherClient
            }
            guard form["redirect_uri"] == rec.redirectURI else {
                throw .redirectURIMismatch
            }
            guard let verifier = form["code_verifier"], !verifier.isEmpty,
                constantTimeStringEquals(PKCE.challenge(for: verifier), rec.challenge)
            else {
                throw .codeVerifierMismatch
            }
            guard let user = s.users[rec.user] else { throw .userNotFound }
            let scopes = try resolveScopes(form["scope"] ?? rec.scope, client: client, s)
            counters.add(.authorizationCodesRedeemed)
            return .json(
                try issueTokens(
                    user: user,
                    client: client,
                    scopes: scopes,
                    nonce: rec.nonce,
                    family: rec.family,
                    &s,
                    ctx
                )
            )
        }
    }

    // MARK: - Device code (RFC 8628)

    func deviceCode(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try publicClient(form, s)
            let scope = form["scope"] ?? ""
            _ = try resolveScopes(scope, client: client, s)
            let device = Ids.token("DC.", bytes: 24)
            let user = Ids.userCode()
            let life = s.config.lifetimes.deviceCode
            s.deviceCodes[device] = DeviceCodeRecord(
                userCode: user,
                clientID: client.clientID,
                scope: scope,
                expires: ctx.now + Double(life),
                interval: Double(s.config.deviceCodeInterval)
            )
            let uri = "\(ctx.baseURL)/devicelogin"
            return .json([
                "device_code": .string(device), "user_code": .string(user), "verification_uri": .string(uri),
                "expires_in": .int(Int64(life)), "interval": .int(Int64(s.config.deviceCodeInterval)),
                "message": .string(
                    "To sign in, use a web browser to open the page \(uri) and enter the code \(user) to authenticate."
                ),
            ])
        }
    }

    func deviceCodeGrant(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try store.withLock { s throws(ServiceError) -> EmulatorResponse in
            let client = try publicClient(form, s)
            guard let code = form["device_code"] ?? form["code"], var rec = s.deviceCodes[code], rec.idp == .entra,
                rec.clientID == client.clientID,
                !rec.redeemed
            else {
                throw .invalidDeviceCode
            }
            guard rec.expires > ctx.now else {
                throw .deviceCodeExpired
            }
            if rec.denied {
                throw .deviceCodeDeclined
            }
            counters.add(.devicePolls)
            if devicePollTooFast(&rec, &s, ctx) {
                s.deviceCodes[code] = rec
                throw .slowDown
            }
            guard let email = rec.approvedUser, let user = s.users[email] else {
                s.deviceCodes[code] = rec
                throw .authorizationPending
            }
            rec.redeemed = true
            s.deviceCodes[code] = rec
            let scopes = try resolveScopes(form["scope"] ?? rec.scope, client: client, s)
            return .json(try issueTokens(user: user, client: client, scopes: scopes, nonce: nil, family: nil, &s, ctx))
        }
    }

    /// A poll sooner than the code's interval after the previous one, or one `device/slow_down` asked for: the
    /// answer is `slow_down`, and the interval grows by the configured increment (RFC 8628 §3.5). Records the poll.
    func devicePollTooFast(_ rec: inout DeviceCodeRecord, _ s: inout Store, _ ctx: RequestContext) -> Bool {
        let tooFast = ctx.now - rec.lastPoll < rec.interval && rec.approvedUser == nil && !rec.denied
        let forced = s.deviceSlowDowns > 0
        rec.lastPoll = ctx.now
        guard tooFast || forced else { return false }
        if forced { s.deviceSlowDowns -= 1 }
        rec.interval += Double(s.config.deviceSlowDownIncrement)
        counters.add(.slowDownAnswers)
        return true
    }

    /// Approves (or denies) a pending device code by its user code on behalf of `email`.
    func approveDevice(userCode: String, email: String?, deny: Bool) -> Bool {
        let wanted = userCode.uppercased().filter { $0 != "-" && $0 != " " }
        return store.withLock { s in
            guard let (key, found) = s.deviceCodes.first(where: { $0.value.userCode == wanted && !$0.value.redeemed })
            else { return false }
            var rec = found
            if deny {
                rec.denied = true
            } else {
                guard let email, s.users[email.lowercased()] != nil else { return false }
                rec.approvedUser = email.lowercased()
            }
            s.deviceCodes[key] = rec
            return true
        }
    }

    // MARK: - Discovery

    func discovery(_ ctx: RequestContext, tenant: String? = nil) -> JSONValue {
        let t = "\(ctx.baseURL)/\(tenant ?? tenantDomain)"
        return [
            "issuer": .string("\(ctx.baseURL)/\(tenantID)/v2.0"),
            "authorization_endpoint": .string("\(t)/oauth2/v2.0/authorize"),
            "token_endpoint": .string("\(t)/oauth2/v2.0/token"),
            "device_authorization_endpoint": .string("\(t)/oauth2/v2.0/devicecode"),
            "end_session_endpoint": .string("\(t)/oauth2/v2.0/logout"),
            "jwks_uri": .string("\(t)/discovery/v2.0/keys"),
            "response_modes_supported": ["query", "fragment", "form_post"],
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "grant_types_supported": [
                "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code",
            ],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": [
                "sub", "iss", "aud", "exp", "iat", "nbf", "nonce", "name", "preferred_username", "oid", "tid", "ver",
                "email",
            ],
            "tenant_region_scope": .null,
            "cloud_instance_name": "ciamlogin.com",
        ]
    }
}
