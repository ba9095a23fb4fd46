/// The OIDC discovery document, as far as the library uses it.
struct OIDCMetadata: Sendable {
    var tokenEndpoint: String
    var issuer: String?
    var authorizationEndpoint: String? = nil
    var deviceAuthorizationEndpoint: String? = nil
    var endSessionEndpoint: String? = nil
    var jwksURI: String? = nil
    var userinfoEndpoint: String? = nil
    /// RFC 9207: the provider adds `iss` to authorization responses.
    var sendsIssuerInResponse = false
    /// RFC 9449 §5.1: the JWS algorithms the provider accepts in DPoP proofs (nil: it does not say, no DPoP).
    var dpopAlgorithms: [String]? = nil
}
