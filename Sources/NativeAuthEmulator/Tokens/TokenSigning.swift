internal import COpenSSL
import NativeAuthCrypto
import NativeAuthJSON

// Token signing for the emulator. It lives here, not in NativeAuthCrypto, so that libnativeauth.so links no private-key
// code: the library only ever verifies.

/// Owner of one EVP_PKEY reference (libcrypto allows concurrent signing with separate EVP_MD_CTX objects).
final class PrivateKeyOwner: @unchecked Sendable {
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }
}

private func bignumBytes(_ key: OpaquePointer, _ name: String) throws(CryptoError) -> [UInt8] {
    var bn: OpaquePointer? = nil
    guard EVP_PKEY_get_bn_param(key, name, &bn) == 1, let bn else {
        ERR_clear_error()
        throw CryptoError("rsa: cannot read key parameter")
    }
    defer { BN_free(bn) }
    let n = (Int(BN_num_bits(bn)) + 7) / 8
    var out = [UInt8](repeating: 0, count: n)
    _ = out.withUnsafeMutableBufferPointer { BN_bn2bin(bn, $0.baseAddress) }
    return out
}

/// An RSA private key for RS256 signing (used by the emulator to mint tokens).
public struct RSAPrivateKey: Sendable {
    let key: PrivateKeyOwner

    /// Generates a fresh key (2048 bits by default).
    public static func generate(bits: Int = 2048) throws(CryptoError) -> RSAPrivateKey {
        guard bits >= 2048, bits <= 8192 else { throw CryptoError("rsa: unsupported key size") }
        guard let ctx = EVP_PKEY_CTX_new_id(copenssl_pkey_rsa_id(), nil) else {
            throw CryptoError("rsa: out of memory")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) == 1,
            EVP_PKEY_generate(ctx, &pkey) == 1, let pkey
        else {
            ERR_clear_error()
            throw CryptoError("rsa: key generation failed")
        }
        return RSAPrivateKey(key: PrivateKeyOwner(pkey))
    }

    /// The public half, as modulus and exponent (big-endian bytes).
    public func publicComponents() throws(CryptoError) -> (modulus: [UInt8], exponent: [UInt8]) {
        (try bignumBytes(key.pointer, "n"), try bignumBytes(key.pointer, "e"))
    }

    /// The public key, for verification.
    public func publicKey() throws(CryptoError) -> RSAPublicKey {
        let (n, e) = try publicComponents()
        return try RSAPublicKey(modulus: n, exponent: e)
    }

    /// RS256 signature of `message`.
    public func signRS256(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw CryptoError("rsa: out of memory") }
        defer { EVP_MD_CTX_free(ctx) }
        var len = 0
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, key.pointer) == 1,
            message.withUnsafeBufferPointer({ EVP_DigestSign(ctx, nil, &len, $0.baseAddress, $0.count) }) == 1
        else {
            ERR_clear_error()
            throw CryptoError("rsa: signing failed")
        }
        var sig = [UInt8](repeating: 0, count: len)
        let rc = message.withUnsafeBufferPointer { m in
            sig.withUnsafeMutableBufferPointer { s in EVP_DigestSign(ctx, s.baseAddress, &len, m.baseAddress, m.count) }
        }
        guard rc == 1 else {
            ERR_clear_error()
            throw CryptoError("rsa: signing failed")
        }
        return Array(sig.prefix(len))
    }
}

extension JWT {
    /// Signs `claims` with RS256 under `key`, with header `{"alg":"RS256","typ":"JWT","kid":kid}` (and the members
    /// of `extraHeader`, for tests of header checks such as `crit`).
    public static func signRS256(
        claims: JSONValue,
        key: RSAPrivateKey,
        kid: String?,
        extraHeader: [String: JSONValue] = [:]
    ) throws(CryptoError) -> String {
        var header: [String: JSONValue] = ["alg": "RS256", "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        for (k, v) in extraHeader { header[k] = v }
        guard let h = JSONValue.object(header).serializedBytes(), let c = claims.serializedBytes() else {
            throw CryptoError("jwt: out of memory")
        }
        let input = Base64.urlEncode(h) + "." + Base64.urlEncode(c)
        let sig = try key.signRS256(Array(input.utf8))
        return input + "." + Base64.urlEncode(sig)
    }
}
