internal import COpenSSL

private let paramN: StaticString = "n"
private let paramE: StaticString = "e"

private func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Owner of one EVP_PKEY reference.
///
/// libcrypto documents EVP_PKEY objects as safe for concurrent read-only use (signing and verification with
/// separate EVP_MD_CTX objects), which is all this module does with a key after creating it.
final class PKeyOwner: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }
}

/// An RSA public key, for RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signature verification.
public struct RSAPublicKey: Sendable {
    let key: PKeyOwner

    /// Builds the key from its big-endian modulus and exponent.
    public init(modulus n: [UInt8], exponent e: [UInt8]) throws(CryptoError) {
        guard n.count >= 128, n.count <= 1024, !e.isEmpty, e.count <= 8 else {
            throw CryptoError("rsa: modulus or exponent has an unsupported size")
        }
        guard let bld = OSSL_PARAM_BLD_new() else { throw CryptoError("rsa: out of memory") }
        defer { OSSL_PARAM_BLD_free(bld) }
        let bnN = n.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let bnE = e.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer {
            BN_free(bnN)
            BN_free(bnE)
        }
        // OSSL_PARAM_BLD keeps the key-name pointers until OSSL_PARAM_BLD_to_param, so they must be static.
        guard let bnN, let bnE, OSSL_PARAM_BLD_push_BN(bld, cString(paramN), bnN) == 1,
            OSSL_PARAM_BLD_push_BN(bld, cString(paramE), bnE) == 1, let params = OSSL_PARAM_BLD_to_param(bld)
        else {
            ERR_clear_error()
            throw CryptoError("rsa: cannot build key parameters")
        }
        defer { OSSL_PARAM_free(params) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw CryptoError("rsa: out of memory") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer? = nil
        guard EVP_PKEY_fromdata_init(ctx) == 1,
            EVP_PKEY_fromdata(ctx, &pkey, copenssl_pkey_public_key_selection(), params) == 1, let pkey
        else {
            ERR_clear_error()
            throw CryptoError("rsa: invalid public key")
        }
        self.key = PKeyOwner(pkey)
    }

    /// Builds the key from a JWK (`{"kty":"RSA","n":"…","e":"…"}`, base64url members).
    public init(jwk n: String, _ e: String) throws(CryptoError) {
        guard let nb = Base64.decode(n), let eb = Base64.decode(e) else {
            throw CryptoError("rsa: JWK n or e is not base64url")
        }
        // Leading zero bytes are not significant.
        try self.init(modulus: Array(nb.drop(while: { $0 == 0 })), exponent: Array(eb.drop(while: { $0 == 0 })))
    }

    /// True when `signature` is a valid RS256 signature of `message` by this key.
    public func verifyRS256(message: [UInt8], signature: [UInt8]) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        let rc = message.withUnsafeBufferPointer { m in
            signature.withUnsafeBufferPointer { s in
                EVP_DigestVerify(ctx, s.baseAddress, s.count, m.baseAddress, m.count)
            }
        }
        if rc != 1 { ERR_clear_error() }
        return rc == 1
    }
}
