/// PKCE (RFC 7636) with the S256 method.
public enum PKCE {
    /// A fresh code verifier: 32 random bytes, base64url — 43 characters from the unreserved set.
    public static func makeVerifier() throws(CryptoError) -> String { Base64.urlEncode(try SecureRandom.bytes(32)) }

    /// `BASE64URL(SHA256(ASCII(verifier)))`.
    public static func challenge(for verifier: String) -> String { Base64.urlEncode(SHA256.hash(verifier)) }
}
