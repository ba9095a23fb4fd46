public import NativeAuthJSON

/// A compact JWS (JWT) split into its parts. Decoding does not verify: call `verify(with:)` for that.
public struct JWT: Sendable {
    public let header: JSONValue
    public let claims: JSONValue
    /// `base64url(header) + "." + base64url(payload)`, the bytes the signature covers.
    public let signingInput: [UInt8]
    public let signature: [UInt8]

    /// Splits and decodes `token`. Errors never include the token itself.
    public init(decoding token: String) throws(CryptoError) {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw CryptoError("jwt: expected three dot-separated parts") }
        guard let h = Base64.decode(parts[0]), let p = Base64.decode(parts[1]), let s = Base64.decode(parts[2]) else {
            throw CryptoError("jwt: a part is not base64url")
        }
        guard !JSONDepth.exceeds(h), !JSONDepth.exceeds(p) else { throw CryptoError("jwt: nested too deeply") }
        guard let header = try? JSONValue.parse(h), case .object = header else {
            throw CryptoError("jwt: header is not a JSON object")
        }
        guard let claims = try? JSONValue.parse(p), case .object = claims else {
            throw CryptoError("jwt: payload is not a JSON object")
        }
        self.header = header
        self.claims = claims
        self.signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
        self.signature = s
    }

    /// True when the header says RS256 and the signature verifies with `key`.
    public func verify(with key: RSAPublicKey) -> Bool {
        guard header["alg"]?.stringValue == "RS256" else { return false }
        return key.verifyRS256(message: signingInput, signature: signature)
    }
}
