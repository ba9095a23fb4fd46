internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON

/// The OAuth 2.0 token endpoint outside the flows: the refresh-token grant, and the token response every grant
/// answers (the browser and device-code grants are in ServerAPI+OIDC.swift).
extension ServerAPI {
    /// The refresh-token grant.
    func refresh(
        endpoint: String,
        refreshToken: RefreshToken,
        scopes: [String],
        claims: ClaimsRequest?
    )
        throws(NativeAuthError) -> TokenResponse
    {
        var fields: [FormField] = [
            .text("grant_type", "refresh_token"), .secret("refresh_token", refreshToken.secret),
            .text("scope", requestScopes(scopes).joined(separator: " ")),
        ]
        // client_info is Entra's (MSAL sends 1 on the standard grants); other providers may refuse unknown fields.
        if configuration.authorityType.isEntra { fields.append(.text("client_info", "1")) }
        if let claims = ClaimsRequest.merging(claims, capabilities: configuration.clientCapabilities) {
            fields.append(.text("claims", claims.json))
        }
        if let r = configuration.redirectURI { fields.append(.text("redirect_uri", r)) }
        // A refresh token bound to a key is presented with a proof of it (RFC 9449 §5.2, public clients); one that is
        // not bound is never presented by a client that asks for DPoP (it would answer a Bearer token).
        let key = refreshToken.dpopKey
        if key == nil, configuration.dpop { throw Self.signedInWithoutDPoP() }
        switch try post(
            url: endpoint,
            name: "/oauth2/v2.0/token (refresh)",
            fields,
            telemetry: .refreshToken,
            dpop: key.map { DPoPBinding(key: $0) }
        ) {
        case .ok(let body): return try decodeTokenResponse(body, dpopKey: key)
        case .redirect(let reason): throw .browserRequired(reason)
        case .error(let envelope, _): throw NativeAuthError.from(envelope, context: .refresh)
        }
    }

    /// Validates a token response as MSAL does: an access token, type Bearer, a positive lifetime. Lifetimes come
    /// as JSON numbers or numeric strings (MSAL Python: `int(response["expires_in"])`); they are clamped to a year,
    /// and a missing, non-numeric, zero or negative `expires_in` is refused — no value can overflow a conversion.
    func decodeTokenResponse(_ body: JSONValue, dpopKey: DPoPKey? = nil) throws(NativeAuthError) -> TokenResponse {
        guard let at = body["access_token"]?.stringValue, !at.isEmpty else {
            throw .unexpected("token response without access_token")
        }
        // It goes out as `Authorization: Bearer <token>`: a control character in it (a hostile server's ESC, DEL, CR)
        // would make every API call fail, or reach the API as an invalid header. Not quoted back: it is a secret.
        guard at.utf8.allSatisfy(HeaderName.isValueByte) else {
            throw .unexpected("token response with control characters in access_token")
        }
        try Self.checkTokenType(body["token_type"]?.stringValue, dpop: dpopKey != nil)
        guard let expiresIn = Self.seconds(body["expires_in"]) else {
            throw .unexpected("token response without a numeric expires_in")
        }
        guard expiresIn > 0 else { throw .unexpected("token response without a positive expires_in") }
        var clientInfo: (String, String)? = nil
        if let ci = body["client_info"]?.stringValue {
            guard let raw = Base64.decode(ci), let info = try? JSONValue.parse(raw), let uid = info["uid"]?.stringValue,
                let utid = info["utid"]?.stringValue
            else { throw .unexpected("client_info is not base64url JSON with uid and utid") }
            clientInfo = (uid, utid)
        }
        return TokenResponse(
            accessToken: Secret(at),
            expiresIn: expiresIn,
            extExpiresIn: Self.seconds(body["ext_expires_in"]).flatMap { $0 > 0 ? $0 : nil },
            refreshIn: Self.seconds(body["refresh_in"]).flatMap { $0 > 0 ? $0 : nil },
            grantedScopes: body["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) },
            refreshToken: body["refresh_token"]?.stringValue.flatMap {
                $0.isEmpty ? nil : RefreshToken(Secret($0), dpopKey: dpopKey)
            },
            idToken: body["id_token"]?.stringValue,
            clientInfo: clientInfo,
            dpopKey: dpopKey
        )
    }

    /// A number of seconds sent as a JSON number or a numeric string, clamped to `maxLifetime` (a year); nil when
    /// absent or not a number.
    static func seconds(_ v: JSONValue?) -> Int64? {
        let value: Double?
        switch v {
        case .int(let i)?: return min(i, maxLifetime)
        case .double(let d)?: value = d
        case .string(let s)?:
            let t = s.trimmingSpaces
            if let i = Int64(t) { return min(i, maxLifetime) }
            value = t.utf8.count <= 32 ? Double(t) : nil
        default: value = nil
        }
        guard let d = value, d.isFinite else { return nil }
        if d >= Double(maxLifetime) { return maxLifetime }
        if d <= -Double(maxLifetime) { return -maxLifetime }
        return Int64(d.rounded(.down))
    }
}
