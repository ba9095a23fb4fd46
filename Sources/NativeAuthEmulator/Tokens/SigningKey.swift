import NativeAuthCrypto
import NativeAuthJSON

/// An RS256 signing key with its `kid` and public JWK (the tenant's, or the generic provider's).
struct SigningKey: Sendable {
    let key: RSAPrivateKey
    let kid: String
    let jwk: JSONValue

    /// A fresh 2048-bit key whose `kid` starts with `kidPrefix`.
    init(kidPrefix: String) throws {
        key = try RSAPrivateKey.generate()
        let (n, e) = try key.publicComponents()
        kid = Ids.token(kidPrefix, bytes: 6)
        jwk = [
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": .string(kid), "n": .string(Base64.urlEncode(n)),
            "e": .string(Base64.urlEncode(e)),
        ]
    }

    /// The JWKS document (`{"keys":[jwk]}`).
    var jwks: JSONValue { ["keys": [jwk]] }

    func sign(_ claims: JSONValue, extraHeader: [String: JSONValue] = [:]) throws(CryptoError) -> String {
        try JWT.signRS256(claims: claims, key: key, kid: kid, extraHeader: extraHeader)
    }

    /// `jwt` names this key and its signature checks out.
    func signed(_ jwt: JWT) -> Bool {
        guard jwt.header["kid"]?.stringValue == kid, let pub = try? key.publicKey() else { return false }
        return jwt.verify(with: pub)
    }
}
