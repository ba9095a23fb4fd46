import NativeAuthCrypto
import NativeAuthJSON

/// The tenant's standard OAuth 2.0 endpoints: `/oauth2/v2.0/token` (its native grants go to native auth; refresh
/// token, authorization code and device code are here) and `/oauth2/v2.0/devicecode`. `token_errors` and
/// `token_answers` rules (`TokenRules`) act on `/token` before and after the grant.
final class TokenEndpoint: Sendable {
    let directory: Directory
    let grants: Grants
    let minter: TokenMinter
    let counters: Counters
    let nativeAuth: NativeAuthService
    let deviceCodes: DeviceCodeService
    let tokenRules: TokenRules

    init(
        directory: Directory,
        grants: Grants,
        minter: TokenMinter,
        counters: Counters,
        nativeAuth: NativeAuthService,
        deviceCodes: DeviceCodeService,
        tokenRules: TokenRules
    ) {
        self.directory = directory
        self.grants = grants
        self.minter = minter
        self.counters = counters
        self.nativeAuth = nativeAuth
        self.deviceCodes = deviceCodes
        self.tokenRules = tokenRules
    }

    func token(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        guard let grant = form["grant_type"], !grant.isEmpty else { throw .missingParameter("grant_type") }
        // An injected error answers before anything is processed: no refresh token is consumed or rotated.
        if let injected = tokenRules.injectedError(form, grant: grant, ctx) { throw injected }
        return tokenRules.tamper(try answer(form, grant: grant, ctx), grant: grant, form, ctx)
    }

    private func answer(
        _ form: [String: String],
        grant: String,
        _ ctx: RequestContext
    ) throws(ServiceError) -> EmulatorResponse {
        if NativeEndpoint.nativeGrants.contains(grant) { return try nativeAuth.token(form, grant: grant, ctx) }
        switch grant {
        case "refresh_token": return try refreshGrant(form, ctx)
        case "authorization_code": return try authorizationCodeGrant(form, ctx)
        case "urn:ietf:params:oauth:grant-type:device_code", "device_code": return try deviceCodeGrant(form, ctx)
        default: throw .unsupportedGrantType(grant)
        }
    }

    /// Rotation with reuse detection (RFC 9700 §4.14.2): a used refresh token presented again revokes its family.
    private func refreshGrant(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse
    {
        let config = directory.config
        let client = try config.publicClient(form)
        guard let rt = form["refresh_token"], !rt.isEmpty else { throw .missingParameter("refresh_token") }
        let body = try grants.withLock { g throws(ServiceError) -> JSONValue in
            guard var rec = g.refreshTokens[rt], rec.idp == .entra else { throw .malformedRefreshToken }
            guard rec.clientID == client.clientID else { throw .refreshTokenOfAnotherClient }
            guard !g.revokedFamilies.contains(rec.family) else {
                let issued = rec.expires - Double(config.lifetimes.refreshToken)
                throw .refreshTokenRevoked(issued: serviceTimestamp(issued), validFrom: serviceTimestamp(ctx.now))
            }
            guard rec.expires > ctx.now else { throw .refreshTokenExpired }
            if rec.used && config.refreshTokenReuseDetection {
                g.revokedFamilies.insert(rec.family)
                counters.add(.refreshTokenReuseDetected)
                throw .refreshTokenReused
            }
            guard let user = directory.user(rec.user) else { throw .userNotFound }
            let scopes = try ScopeGrant(form["scope"], client: client, config)
            rec.used = true
            g.refreshTokens[rt] = rec
            counters.add(.refreshGrants)
            return try minter.issueEntra(
                user: user,
                client: client,
                scopes: scopes,
                nonce: nil,
                family: rec.family,
                &g,
                ctx
            )
        }
        return .json(body)
    }

    /// Authorization code + PKCE (S256). A code is spent by its first redemption, successful or not.
    private func authorizationCodeGrant(
        _ form: [String: String],
        _ ctx: RequestContext
    ) throws(ServiceError) -> EmulatorResponse {
        let config = directory.config
        let client = try config.publicClient(form)
        guard let code = form["code"], !code.isEmpty else { throw .missingParameter("code") }
        let body = try grants.withLock { g throws(ServiceError) -> JSONValue in
            guard let rec = g.takeAuthCode(code, idp: .entra) else { throw .authorizationCodeRedeemed }
            guard rec.expires > ctx.now else { throw .authorizationCodeExpired }
            guard rec.clientID == client.clientID else { throw .authorizationCodeOfAnotherClient }
            guard form["redirect_uri"] == rec.redirectURI else { throw .redirectURIMismatch }
            guard let verifier = form["code_verifier"], !verifier.isEmpty,
                constantTimeStringEquals(PKCE.challenge(for: verifier), rec.challenge)
            else { throw .codeVerifierMismatch }
            guard let user = directory.user(rec.user) else { throw .userNotFound }
            let scopes = try ScopeGrant(form["scope"] ?? rec.scope, client: client, config)
            counters.add(.authorizationCodesRedeemed)
            return try minter.issueEntra(
                user: user,
                client: client,
                scopes: scopes,
                nonce: rec.nonce,
                family: rec.family,
                &g,
                ctx
            )
        }
        return .json(body)
    }

    // MARK: - Device code (RFC 8628)

    /// `/oauth2/v2.0/devicecode`.
    func deviceAuthorization(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        let config = directory.config
        let client = try config.publicClient(form)
        let scope = form["scope"] ?? ""
        _ = try ScopeGrant(scope, client: client, config)
        let user = Ids.userCode()
        let device = deviceCodes.issue(
            idp: .entra,
            client: client.clientID,
            scope: scope,
            deviceCodePrefix: "DC.",
            userCode: user,
            config,
            ctx
        )
        let uri = "\(ctx.baseURL)/devicelogin"
        return .json([
            "device_code": .string(device), "user_code": .string(user), "verification_uri": .string(uri),
            "expires_in": .int(Int64(config.lifetimes.deviceCode)), "interval": .int(Int64(config.deviceCodeInterval)),
            "message": .string(
                "To sign in, use a web browser to open the page \(uri) and enter the code \(user) to authenticate."
            ),
        ])
    }

    private func deviceCodeGrant(
        _ form: [String: String],
        _ ctx: RequestContext
    ) throws(ServiceError) -> EmulatorResponse {
        let config = directory.config
        let client = try config.publicClient(form)
        switch deviceCodes.poll(form["device_code"] ?? form["code"], idp: .entra, client: client.clientID, ctx) {
        case .invalid: throw .invalidDeviceCode
        case .expired: throw .deviceCodeExpired
        case .denied: throw .deviceCodeDeclined
        case .slowDown: throw .slowDown
        case .pending: throw .authorizationPending
        case .approved(let user, let scope):
            let scopes = try ScopeGrant(form["scope"] ?? scope, client: client, config)
            let body = try grants.withLock { g throws(ServiceError) in
                try minter.issueEntra(user: user, client: client, scopes: scopes, nonce: nil, family: nil, &g, ctx)
            }
            return .json(body)
        }
    }
}
