internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON
import Synchronization

/// What the client knows of its identity provider: OIDC discovery (fetched once per client; an unavailable document
/// is asked for again after a while) and the signing keys, and the checks an ID token passes before its account is
/// cached.
final class OIDCProvider: Sendable {
    let clock: any Clock
    let logger: Logger
    private let discovered = Mutex<(metadata: OIDCMetadata?, at: Double)?>(nil)
    private let keys = Mutex<(keys: [(kid: String?, key: RSAPublicKey)], at: Double)?>(nil)
    static let discoveryRetryAfter = 300.0
    /// Keys are fetched again when a token names an unknown `kid` (key rotation), at most this often.
    static let keysRefetchAfter = 60.0
    /// Clock skew allowed on `exp` and `nbf`.
    static let skew = 300.0

    init(clock: any Clock, logger: Logger) {
        self.clock = clock
        self.logger = logger
    }

    /// OIDC discovery, once per client; nil while it is unavailable. With `"dpop": true`, a document that does not
    /// offer ES256 DPoP proofs is `dpop_unsupported`, whatever the call (never a silent bearer token).
    func metadata(_ server: ServerAPI) throws(NativeAuthError) -> OIDCMetadata? {
        let now = clock.now()
        if let cached = discovered.withLock({ $0 }),
            cached.metadata != nil || now - cached.at < Self.discoveryRetryAfter
        {
            try Self.requireDPoP(cached.metadata, server.configuration)
            return cached.metadata
        }
        let metadata = try server.discovery()
        if metadata == nil {
            logger.log(.warning, "OIDC discovery is unavailable", correlationID: server.correlationID)
        }
        discovered.withLock { $0 = (metadata, now) }
        try Self.requireDPoP(metadata, server.configuration)
        return metadata
    }

    /// `dpop_unsupported` when the client asks for DPoP and the provider's discovery does not offer ES256 in
    /// `dpop_signing_alg_values_supported` (RFC 9449 §5.1).
    static func requireDPoP(_ metadata: OIDCMetadata?, _ configuration: ClientConfiguration) throws(NativeAuthError) {
        guard configuration.dpop, let metadata else { return }
        guard metadata.dpopAlgorithms?.contains("ES256") == true else {
            throw NativeAuthError(
                .dpopUnsupported,
                metadata.dpopAlgorithms == nil
                    ? "The provider's discovery document does not offer DPoP (no dpop_signing_alg_values_supported)."
                    : "The provider's discovery document does not offer ES256 DPoP proofs, the only kind this "
                        + "library makes."
            )
        }
    }

    /// The discovery document fetched so far, if any (no request).
    var cachedMetadata: OIDCMetadata? { discovered.withLock { $0?.metadata } }

    /// Discovery, which the browser and device-code flows cannot do without.
    func requiredMetadata(_ server: ServerAPI) throws(NativeAuthError) -> OIDCMetadata {
        guard let m = try metadata(server) else {
            throw NativeAuthError(.server, "The provider's OpenID Connect discovery document is unavailable.")
        }
        return m
    }

    /// The token endpoint: discovery's; when discovery is unavailable, Entra's `/oauth2/v2.0/token` under the
    /// authority (where MSAL Android and msal-browser's custom-auth client always send it, without discovery).
    func tokenEndpoint(_ server: ServerAPI) throws(NativeAuthError) -> String {
        if server.configuration.authorityType.isEntra {
            return try metadata(server)?.tokenEndpoint
                ?? server.configuration.authority.endpoint(Endpoint.token.rawValue)
        }
        return try requiredMetadata(server).tokenEndpoint
    }

    /// The key an ID token names (`kid`; without one, the provider's only key), nil when the provider has none by
    /// that name: from the cached key set when it has it, else `jwks_uri` fetched again — for a key not seen yet
    /// (rotation) at most once per `keysRefetchAfter`. The browser flow sends this (`ServerCall.signingKey`) before it
    /// stores a sign-in, so the JWKS request is a step of its trace, and hands the key to the store's check: the
    /// token is verified with exactly the key loaded for it, whatever another sign-in loads meanwhile.
    func loadSigningKey(kid: String?, _ server: ServerAPI) throws(NativeAuthError) -> RSAPublicKey? {
        let now = clock.now()
        if let cached = keys.withLock({ $0 }) {
            if let key = Self.pick(kid, cached.keys) { return key }
            guard now - cached.at >= Self.keysRefetchAfter else { return nil }
        }
        guard let uri = try requiredMetadata(server).jwksURI else {
            throw NativeAuthError(.server, "The provider publishes no signing keys (jwks_uri).")
        }
        let fetched = try server.signingKeys(uri)
        keys.withLock { $0 = (fetched, now) }
        return Self.pick(kid, fetched)
    }

    private static func pick(_ kid: String?, _ list: [(kid: String?, key: RSAPublicKey)]) -> RSAPublicKey? {
        if let kid { return list.first(where: { $0.kid == kid })?.key }
        return list.count == 1 ? list[0].key : nil
    }

    /// The checks an ID token passes before its account is cached (OIDC Core §3.1.3.7): no `crit` header; `aud`
    /// holds this client (and `azp`, when present, is it); `iss` is the provider's (Entra: the discovery issuer
    /// with the token's `tid`, or without discovery the authority's host or `<tid>.ciamlogin.com` with the
    /// authority's tenant or `tid`; other providers: exactly the discovery issuer); `exp` is not past and `nbf` not
    /// ahead, with 5 minutes of skew. With `signature`, the token is RS256-signed by a key of the provider's
    /// `jwks_uri` (tokens that passed through a browser): `signingKey`, the one `loadSigningKey` found for it (no
    /// request here); with `nonce`, its `nonce` claim is that value.
    func validate(
        _ jwt: JWT,
        _ server: ServerAPI,
        nonce: String? = nil,
        signature: Bool = false,
        signingKey: RSAPublicKey? = nil
    ) throws(NativeAuthError) {
        func invalid(_ why: String) -> NativeAuthError { NativeAuthError(.idTokenInvalid, "The ID token \(why).") }
        let claims = jwt.claims
        // RFC 7515 §4.1.11: a token naming critical header parameters must be refused unless each is understood;
        // this library understands none.
        if jwt.header["crit"] != nil { throw invalid("names critical header parameters it cannot honour (crit)") }
        if signature {
            guard jwt.header["alg"]?.stringValue == "RS256" else { throw invalid("is not signed with RS256 (alg)") }
            guard let key = signingKey, jwt.verify(with: key) else {
                throw invalid("has no valid signature from the provider's keys")
            }
        }
        let clientID = server.configuration.clientID
        let audiences =
            claims["aud"]?.stringValue.map { [$0] } ?? claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard audiences.contains(clientID) else { throw invalid("is not for this client (aud)") }
        // OIDC Core §3.1.3.7 asks for `azp` with several audiences; when present it must be this client whatever
        // the audience count (a token issued to another party that merely lists this client is refused).
        if let azp = claims["azp"], azp.stringValue != clientID { throw invalid("was issued to another party (azp)") }
        let now = clock.now()
        guard let exp = claims["exp"]?.doubleValue, exp.isFinite else { throw invalid("has no expiry (exp)") }
        guard exp > now - Self.skew else { throw invalid("has expired (exp)") }
        if let nbf = claims["nbf"]?.doubleValue, nbf.isFinite, nbf > now + Self.skew {
            throw invalid("is not valid yet (nbf)")
        }
        if let nonce {
            guard let got = claims["nonce"]?.stringValue, constantTimeEquals(got, nonce) else {
                throw invalid("does not carry this sign-in's nonce")
            }
        }
        guard let iss = claims["iss"]?.stringValue, let issuer = try? HTTPURL(iss) else {
            throw invalid("has no issuer (iss)")
        }
        let configuration = server.configuration
        guard configuration.authorityType.isEntra else {
            let expected = try requiredMetadata(server).issuer ?? configuration.authority.url
            guard iss == expected else { throw invalid("was issued by another issuer (iss)") }
            return
        }
        let tid = claims["tid"]?.stringValue?.lowercased()
        let tenant = issuer.path.split(separator: "/").first.map { $0.lowercased() }
        let authority = configuration.authority
        if let expected = try metadata(server)?.issuer {
            let resolved =
                tid.map { t in
                    expected.split(separator: "{tenantid}", omittingEmptySubsequences: false).joined(separator: t)
                } ?? expected
            guard let e = try? HTTPURL(resolved), e.host == issuer.host,
                e.path.split(separator: "/").first.map({ $0.lowercased() }) == tenant
            else { throw invalid("was issued by another issuer (iss)") }
        } else {
            let authorityTenant = authority.parsed.path.split(separator: "/").first.map { $0.lowercased() }
            let hosts = [authority.parsed.host] + (tid.map { ["\($0).ciamlogin.com"] } ?? [])
            guard hosts.contains(issuer.host), let tenant, tenant == authorityTenant || tenant == tid else {
                throw invalid("was issued by another issuer (iss)")
            }
        }
    }
}
