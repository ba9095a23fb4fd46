internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON

// The standard OAuth 2.0 / OpenID Connect endpoints: discovery, JWKS, the authorization request and response,
// the authorization-code and device-code grants, userinfo and end-session. Wire names of these live here only.

/// The parameters of an authorization request (OIDC Core §3.1.2.1, RFC 7636).
struct AuthorizationParameters: Sendable {
    var scopes: [String]
    var redirectURI: String
    var state: String
    var nonce: String
    var codeChallenge: String
    var responseMode: ResponseMode
    var prompt: Prompt?
    var loginHint: String?
    var domainHint: String?
    var claims: ClaimsRequest?
    var extra: [(String, String)]
}

/// How the provider returns the authorization response.
public enum ResponseMode: String, Sendable, CaseIterable {
    case query
    case formPost = "form_post"
}

/// The `prompt` of an authorization request.
public enum Prompt: String, Sendable, CaseIterable {
    case selectAccount = "select_account"
    case login, consent, none, create
}

/// An authorization response, as the redirect carried it.
enum AuthorizationResponse: Sendable {
    case code(Secret, state: String?, issuer: String?)
    case error(String, state: String?, issuer: String?)

    var state: String? {
        switch self {
        case .code(_, let s, _), .error(_, let s, _): return s
        }
    }

    var issuer: String? {
        switch self {
        case .code(_, _, let i), .error(_, _, let i): return i
        }
    }
}

/// A device-authorization answer (RFC 8628 §3.2).
struct DeviceAuthorization: Sendable {
    var deviceCode: Secret
    var userCode: String
    var verificationURI: String
    var verificationURIComplete: String?
    var expiresIn: Int64
    var interval: Int64
    var message: String?
}

/// One poll of the device-code grant.
enum DeviceCodePoll: Sendable {
    case tokens(TokenResponse)
    case pending
    case slowDown
    case denied
    case expired
}

extension ServerAPI {
    /// The reserved parameters an app's `extra_query_parameters` may not replace.
    static let reservedAuthorizationParameters: Set<String> = [
        "client_id", "response_type", "redirect_uri", "scope", "state", "nonce", "code_challenge",
        "code_challenge_method", "response_mode", "prompt", "login_hint", "domain_hint", "claims", "client_info",
    ]

    /// The discovery document's address: Entra's v2.0 metadata, or `<issuer>/.well-known/openid-configuration`.
    var discoveryURL: String {
        let authority = configuration.authority
        switch configuration.authorityType {
        case .ciam, .aad: return authority.endpoint(Endpoint.discovery.rawValue)
        case .oidc: return authority.endpoint("/.well-known/openid-configuration")
        }
    }

    /// OIDC discovery; nil when it is unavailable (an error status, not JSON, no `token_endpoint`, and — for Entra,
    /// whose endpoints are known without it — no answer). With any other authority a request that got no answer
    /// throws its own error (a proxy's refusal, TLS inspection, a timeout, a cancel): the flows cannot go on without
    /// the document, and that error says why; it is not remembered (`OIDCProvider`), so the next call asks again.
    /// For every provider, a token endpoint on another origin than the authority's (scheme, host and port) is an
    /// error: refresh tokens, authorization codes and device codes are never sent anywhere else (SECURITY.md). For
    /// generic providers, an `issuer` other than the authority (one trailing slash aside) is an error (OIDC
    /// Discovery §4.3). Every endpoint must be https — or http on loopback, and then only when the authority itself
    /// is plain http on loopback (an https authority never hands a token to plain http).
    func discovery() throws(NativeAuthError) -> OIDCMetadata? {
        let authority = configuration.authority
        let response: HTTPResponse
        do { response = try send(HTTPRequest(url: discoveryURL), name: "discovery", resendable: true) } catch {
            if configuration.authorityType.isEntra { return nil }
            throw error
        }
        guard response.status == 200, let doc = try? JSONValue.parse(response.body), case .object = doc,
            let tokenEndpoint = doc["token_endpoint"]?.stringValue
        else { return nil }
        let authorityIsHTTPS = authority.parsed.scheme == "https"
        func endpoint(_ name: String) throws(NativeAuthError) -> String? {
            guard let value = doc[name]?.stringValue else { return nil }
            guard let u = try? HTTPURL(value), u.scheme == "https" || (u.isLoopback && !authorityIsHTTPS) else {
                throw .unexpected("the discovery document's \(name) is not an https URL")
            }
            return value
        }
        guard let token = try endpoint("token_endpoint") else { throw .unexpected("discovery without token_endpoint") }
        let issuer = doc["issuer"]?.stringValue
        guard let u = try? HTTPURL(tokenEndpoint), u.origin == authority.parsed.origin else {
            throw .unexpected("the discovery document's token_endpoint is not on the authority's origin")
        }
        if !configuration.authorityType.isEntra {
            func trimmed(_ s: String) -> String { s.hasSuffix("/") ? String(s.dropLast()) : s }
            guard let issuer, trimmed(issuer) == trimmed(authority.url) else {
                throw .unexpected("the discovery document's issuer is not the configured authority")
            }
        }
        return OIDCMetadata(
            tokenEndpoint: token,
            issuer: issuer,
            authorizationEndpoint: try endpoint("authorization_endpoint"),
            deviceAuthorizationEndpoint: try endpoint("device_authorization_endpoint"),
            endSessionEndpoint: try endpoint("end_session_endpoint"),
            jwksURI: try endpoint("jwks_uri"),
            userinfoEndpoint: try endpoint("userinfo_endpoint"),
            sendsIssuerInResponse: doc["authorization_response_iss_parameter_supported"]?.boolValue ?? false,
            dpopAlgorithms: doc["dpop_signing_alg_values_supported"]?.arrayValue?.compactMap(\.stringValue)
        )
    }

    /// The provider's signing keys (`jwks_uri`): RSA keys by `kid` (keys for encryption only are skipped).
    func signingKeys(_ uri: String) throws(NativeAuthError) -> [(kid: String?, key: RSAPublicKey)] {
        let response = try send(HTTPRequest(url: uri), name: "jwks", resendable: true)
        guard response.status == 200, let doc = try? JSONValue.parse(response.body),
            let keys = doc["keys"]?.arrayValue
        else { throw .unexpected("the jwks_uri did not answer a key set") }
        var out: [(String?, RSAPublicKey)] = []
        for k in keys where k["kty"]?.stringValue == "RSA" && (k["use"]?.stringValue ?? "sig") == "sig" {
            guard let n = k["n"]?.stringValue, let e = k["e"]?.stringValue, let key = try? RSAPublicKey(jwk: n, e)
            else { continue }
            out.append((k["kid"]?.stringValue, key))
        }
        return out
    }

    /// The authorization request URL.
    func authorizationURL(endpoint: String, _ p: AuthorizationParameters) -> String {
        Self.authorizationURL(configuration, endpoint: endpoint, p)
    }

    /// The authorization request URL of a client with `configuration` (a pure function: flows build it themselves).
    static func authorizationURL(
        _ configuration: ClientConfiguration,
        endpoint: String,
        _ p: AuthorizationParameters
    ) -> String {
        var q: [(String, String)] = [
            ("client_id", configuration.clientID), ("response_type", "code"), ("redirect_uri", p.redirectURI),
            ("scope", requestScopes(p.scopes).joined(separator: " ")), ("state", p.state), ("nonce", p.nonce),
            ("code_challenge", p.codeChallenge), ("code_challenge_method", "S256"),
        ]
        if p.responseMode == .formPost { q.append(("response_mode", "form_post")) }
        if let prompt = p.prompt { q.append(("prompt", prompt.rawValue)) }
        if let hint = p.loginHint { q.append(("login_hint", hint)) }
        if let hint = p.domainHint { q.append(("domain_hint", hint)) }
        if let claims = ClaimsRequest.merging(p.claims, capabilities: configuration.clientCapabilities) {
            q.append(("claims", claims.json))
        }
        if configuration.authorityType.isEntra { q.append(("client_info", "1")) }
        q += p.extra
        let separator = endpoint.contains("?") ? "&" : "?"
        return endpoint + separator + FormEncoding.encode(q)
    }

    /// A redirect's `state` parameter, if any.
    static func redirectState(_ parameters: [String: String]) -> String? { parameters["state"] }

    /// Whether a redirect reports an error (`error`) rather than a code.
    static func redirectIsError(_ parameters: [String: String]) -> Bool { parameters["error"] != nil }

    /// Reads an authorization response's parameters (a redirect's query, or a `form_post` body).
    static func authorizationResponse(_ parameters: [String: String]) -> AuthorizationResponse? {
        let state = parameters["state"]
        let issuer = parameters["iss"]
        if let error = parameters["error"], !error.isEmpty {
            return .error(String(error.prefix(64)), state: state, issuer: issuer)
        }
        guard let code = parameters["code"], !code.isEmpty else { return nil }
        return .code(Secret(code), state: state, issuer: issuer)
    }

    /// The authorization-code grant with the PKCE verifier (RFC 7636 §4.5).
    func redeemCode(
        endpoint: String,
        code: Secret,
        verifier: Secret,
        redirectURI: String,
        scopes: [String],
        claims: ClaimsRequest? = nil
    ) throws(NativeAuthError) -> TokenResponse {
        var fields: [FormField] = [
            .text("grant_type", "authorization_code"), .secret("code", code), .text("redirect_uri", redirectURI),
            .secret("code_verifier", verifier), .text("scope", requestScopes(scopes).joined(separator: " ")),
        ]
        if configuration.authorityType.isEntra { fields.append(.text("client_info", "1")) }
        // The claims go with the code as with the authorization request (MSAL for Python sends both).
        if let claims = ClaimsRequest.merging(claims, capabilities: configuration.clientCapabilities) {
            fields.append(.text("claims", claims.json))
        }
        // The sign-in's DPoP key, with "dpop": true: the tokens it answers are bound to it.
        let key = try signInKey()
        switch try post(
            url: endpoint,
            name: "token (authorization_code)",
            fields,
            telemetry: .authorizationCode,
            dpop: key.map { DPoPBinding(key: $0) }
        ) {
        case .ok(let body): return try decodeTokenResponse(body, dpopKey: key)
        case .redirect(let reason): throw .browserRequired(reason)
        case .error(let envelope, _): throw NativeAuthError.from(envelope, context: .codeRedemption)
        }
    }

    /// Starts a device-code sign-in (RFC 8628 §3.1).
    func deviceAuthorization(endpoint: String, scopes: [String]) throws(NativeAuthError) -> DeviceAuthorization {
        var fields: [FormField] = [.text("scope", requestScopes(scopes).joined(separator: " "))]
        // The capabilities, as MSAL for Python's initiate_device_flow sends them.
        if let claims = ClaimsRequest.merging(nil, capabilities: configuration.clientCapabilities) {
            fields.append(.text("claims", claims.json))
        }
        switch try post(url: endpoint, name: "device authorization", fields, telemetry: .deviceCode) {
        case .ok(let body):
            // verification_url: Entra's v1 endpoints' (and some providers') name for it.
            guard let device = body["device_code"]?.stringValue, !device.isEmpty,
                let user = body["user_code"]?.stringValue, !user.isEmpty,
                let uri = body["verification_uri"]?.stringValue ?? body["verification_url"]?.stringValue,
                let expires = Self.seconds(body["expires_in"]), expires > 0
            else { throw .unexpected("a device authorization answer without device_code, user_code or expires_in") }
            let interval = Self.seconds(body["interval"]).map { min(max($0, 1), 60) } ?? 5
            return DeviceAuthorization(
                deviceCode: Secret(device),
                userCode: String(user.prefix(64)),
                verificationURI: uri,
                verificationURIComplete: body["verification_uri_complete"]?.stringValue,
                expiresIn: expires,
                interval: interval,
                message: body["message"]?.stringValue
            )
        case .redirect(let reason): throw .browserRequired(reason)
        case .error(let envelope, _): throw NativeAuthError.from(envelope, context: .codeRedemption)
        }
    }

    /// One poll of the device-code grant (RFC 8628 §3.4–3.5; Entra's `authorization_declined`, `code_expired`).
    func pollDeviceCode(endpoint: String, deviceCode: Secret) throws(NativeAuthError) -> DeviceCodePoll {
        var fields: [FormField] = [
            .text("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), .secret("device_code", deviceCode),
        ]
        if configuration.authorityType.isEntra { fields.append(.text("client_info", "1")) }
        if let claims = ClaimsRequest.merging(nil, capabilities: configuration.clientCapabilities) {
            fields.append(.text("claims", claims.json))
        }
        // With "dpop": true each poll carries a proof of a new key; the key of the poll that is answered with tokens
        // is the sign-in's (a key costs microseconds; polls come seconds apart).
        let key = try signInKey()
        switch try post(
            url: endpoint,
            name: "token (device_code)",
            fields,
            telemetry: .deviceCode,
            dpop: key.map { DPoPBinding(key: $0) }
        ) {
        case .ok(let body): return .tokens(try decodeTokenResponse(body, dpopKey: key))
        case .redirect(let reason): throw .browserRequired(reason)
        case .error(let envelope, _):
            switch envelope.details.error {
            case "authorization_pending": return .pending
            case "slow_down": return .slowDown
            case "authorization_declined", "access_denied": return .denied
            case "expired_token", "code_expired": return .expired
            default: throw NativeAuthError.from(envelope, context: .codeRedemption)
            }
        }
    }

    /// The userinfo endpoint's claims for an access token (OIDC Core §5.3); a DPoP-bound one goes as
    /// `Authorization: DPoP` with a proof (RFC 9449 §7).
    func userinfo(endpoint: String, accessToken: Secret, dpopKey: DPoPKey? = nil) throws(NativeAuthError) -> JSONValue {
        let scheme = dpopKey == nil ? "Bearer " : "DPoP "
        var request = HTTPRequest(url: endpoint, headers: [("Authorization", scheme + accessToken.unsafeExposed)])
        defer { request.headers.removeAll() }
        let response = try send(
            request,
            name: "userinfo",
            resendable: true,
            dpop: dpopKey.map { DPoPBinding(key: $0, accessToken: accessToken) }
        )
        guard response.status == 200, let doc = try? JSONValue.parse(response.body), case .object = doc,
            doc["sub"]?.stringValue != nil
        else { throw .unexpected("the userinfo endpoint did not answer the user's claims") }
        return doc
    }

    /// The end-session URL (OIDC RP-Initiated Logout §2) with `logout_hint` on Entra.
    func endSessionURL(endpoint: String, idTokenHint: String?, logoutHint: String?) -> String {
        var q: [(String, String)] = [("client_id", configuration.clientID)]
        if let hint = idTokenHint { q.append(("id_token_hint", hint)) }
        if let uri = configuration.postLogoutRedirectURI { q.append(("post_logout_redirect_uri", uri)) }
        if configuration.authorityType.isEntra, let hint = logoutHint { q.append(("logout_hint", hint)) }
        return endpoint + (endpoint.contains("?") ? "&" : "?") + FormEncoding.encode(q)
    }
}
