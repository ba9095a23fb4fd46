internal import NativeAuthCrypto

/// The key an account's sender-constrained tokens are bound to (DPoP, RFC 9449): one P-256 key per account, made
/// when a sign-in's token request is built (`ServerAPI`), bound by the provider to the access and refresh tokens that
/// sign-in answers (their `cnf.jkt` is `thumbprint`), and kept with the account in the token cache — in the cache file
/// beside the refresh token, sealed under the cache's key when the cache is encrypted. A sign-out removes it with the
/// account. No call hands out the private key; a proof (`ServerAPI.dpopProof`) is all that leaves the library.
///
/// Immutable: shared by reference between the tokens bound to it.
public final class DPoPKey: Sendable, CustomStringConvertible {
    let key: P256PrivateKey
    /// The RFC 7638 thumbprint of the public key: the `cnf.jkt` of the tokens bound to it.
    public let thumbprint: String
    /// The base64url JOSE header of every proof this key signs (`typ`, `alg`, the public `jwk`): constant, made once.
    let encodedHeader: String

    private init(_ key: P256PrivateKey) {
        self.key = key
        thumbprint = key.thumbprint
        let jwk =
            #"{"kty":"EC","crv":"P-256","x":""# + Base64.urlEncode(key.x) + #"","y":""# + Base64.urlEncode(key.y)
            + #""}"#
        encodedHeader = Base64.urlEncode(Array((#"{"typ":"dpop+jwt","alg":"ES256","jwk":"# + jwk + "}").utf8))
    }

    /// A new key (a sign-in's).
    static func generate() throws(NativeAuthError) -> DPoPKey {
        do { return DPoPKey(try P256PrivateKey.generate()) } catch {
            throw NativeAuthError(.internal, "A DPoP key could not be made (\(error.message)).")
        }
    }

    /// The key whose private scalar a token cache kept (32 bytes); nil when they are not a P-256 private key.
    public static func restore(privateScalar: Secret) -> DPoPKey? {
        guard let key = try? privateScalar.withUnsafeBytes({ try P256PrivateKey(scalar: $0) }) else { return nil }
        return DPoPKey(key)
    }

    /// The private scalar, as a token cache keeps it (base64url of 32 bytes): through here only.
    public func exportForCache() -> Secret? {
        try? key.withPrivateScalar { d in
            var text = Array(Base64.urlEncode(d).utf8)
            defer { text.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } } }
            return text.withUnsafeBytes { Secret(bytes: $0) }
        }
    }

    /// The key a token cache kept as `exportForCache` wrote it; nil when it is not one.
    public static func restore(cacheText: Secret) -> DPoPKey? {
        guard cacheText.count == 43 else { return nil }
        let decoded: [UInt8]? = cacheText.withUnsafeBytes { Base64.decode(String(decoding: $0, as: UTF8.self)) }
        guard var d = decoded, d.count == 32 else { return nil }
        defer { d.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } } }
        return d.withUnsafeBytes { restore(privateScalar: Secret(bytes: $0)) }
    }

    /// Two keys are one when their public keys are (the thumbprint names the key).
    public func same(as other: DPoPKey?) -> Bool {
        guard let other else { return false }
        return self === other || thumbprint == other.thumbprint
    }

    /// An ES256 signature (r ‖ s) of `input`.
    func sign(_ input: [UInt8]) throws(NativeAuthError) -> [UInt8] {
        let signed: Result<[UInt8], CryptoError> = input.withUnsafeBytes { b in
            Result { () throws(CryptoError) in try key.sign(b) }
        }
        switch signed {
        case .success(let signature): return signature
        case .failure(let error):
            throw NativeAuthError(.internal, "A DPoP proof could not be signed (\(error.message)).")
        }
    }

    public var description: String { "DPoPKey(jkt: \(thumbprint))" }
}
