internal import COpenSSL

/// AES-256-GCM over libcrypto (EVP_aes_256_gcm): authenticated encryption with a 12-byte nonce and a 16-byte tag.
/// Errors never include key material or plaintext.
public enum AESGCM {
    public static let keyBytes = 32
    public static let nonceBytes = 12
    public static let tagBytes = 16

    /// Encrypts `plaintext` under `key` (32 bytes) and `nonce` (12 bytes, never reused with the same key),
    /// authenticating `aad` too. Answers the ciphertext (as long as the plaintext) followed by the 16-byte tag.
    public static func seal(
        key: UnsafeRawBufferPointer,
        nonce: [UInt8],
        plaintext: UnsafeRawBufferPointer,
        aad: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        guard key.count == keyBytes, nonce.count == nonceBytes else { throw CryptoError("aes-gcm: bad key or nonce") }
        guard plaintext.count < Int(Int32.max) - 64 else { throw CryptoError("aes-gcm: input too large") }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError("aes-gcm: out of memory") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        let ok = out.withUnsafeMutableBytes { o -> Bool in
            guard let obase = o.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            guard EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceBytes), nil) == 1,
                EVP_EncryptInit_ex(ctx, nil, nil, key.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce) == 1
            else { return false }
            var len: Int32 = 0
            if !aad.isEmpty {
                guard EVP_EncryptUpdate(ctx, nil, &len, aad, Int32(aad.count)) == 1 else { return false }
            }
            var written = 0
            if let p = plaintext.baseAddress, plaintext.count > 0 {
                guard
                    EVP_EncryptUpdate(
                        ctx,
                        obase,
                        &len,
                        p.assumingMemoryBound(to: UInt8.self),
                        Int32(plaintext.count)
                    ) == 1
                else { return false }
                written = Int(len)
            }
            guard EVP_EncryptFinal_ex(ctx, obase + written, &len) == 1 else { return false }
            written += Int(len)
            guard written == plaintext.count else { return false }
            return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, Int32(tagBytes), obase + written) == 1
        }
        guard ok else {
            ERR_clear_error()
            throw CryptoError("aes-gcm: encryption failed")
        }
        return out
    }

    /// Decrypts `sealed` (ciphertext followed by the 16-byte tag). Throws when the tag does not verify: a wrong key, a
    /// wrong nonce or `aad`, or altered bytes. The plaintext is written to a buffer the caller owns and must wipe.
    public static func open(
        key: UnsafeRawBufferPointer,
        nonce: [UInt8],
        sealed: UnsafeRawBufferPointer,
        aad: [UInt8]
    ) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(1, sealed.count - tagBytes))
        let n = try out.withUnsafeMutableBufferPointer { o throws(CryptoError) in
            try open(key: key, nonce: nonce, sealed: sealed, aad: aad, into: o)
        }
        if n == 0 { return [] }
        return out
    }

    /// Decrypts `sealed` into `out` (at least `sealed.count - tagBytes` bytes, which the caller owns and must wipe)
    /// and returns the plaintext's length; on failure `out` is wiped. For large plaintexts (a token cache file) that
    /// should land in their final buffer with no copy and no zero-filling first.
    public static func open(
        key: UnsafeRawBufferPointer,
        nonce: [UInt8],
        sealed: UnsafeRawBufferPointer,
        aad: [UInt8],
        into out: UnsafeMutableBufferPointer<UInt8>
    ) throws(CryptoError) -> Int {
        guard key.count == keyBytes, nonce.count == nonceBytes else { throw CryptoError("aes-gcm: bad key or nonce") }
        guard sealed.count >= tagBytes, sealed.count < Int(Int32.max) - 64, let sbase = sealed.baseAddress else {
            throw CryptoError("aes-gcm: truncated")
        }
        let n = sealed.count - tagBytes
        guard out.count >= n, let obase = out.baseAddress else { throw CryptoError("aes-gcm: output too small") }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw CryptoError("aes-gcm: out of memory") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var tag = Array(UnsafeRawBufferPointer(rebasing: sealed[n...]))
        let ok: Bool = {
            guard EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nil, nil, nil) == 1,
                EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, Int32(nonceBytes), nil) == 1,
                EVP_DecryptInit_ex(ctx, nil, nil, key.baseAddress?.assumingMemoryBound(to: UInt8.self), nonce) == 1
            else { return false }
            var len: Int32 = 0
            if !aad.isEmpty {
                guard EVP_DecryptUpdate(ctx, nil, &len, aad, Int32(aad.count)) == 1 else { return false }
            }
            var written = 0
            if n > 0 {
                guard
                    EVP_DecryptUpdate(ctx, obase, &len, sbase.assumingMemoryBound(to: UInt8.self), Int32(n)) == 1
                else { return false }
                written = Int(len)
            }
            guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, Int32(tagBytes), &tag) == 1 else { return false }
            guard EVP_DecryptFinal_ex(ctx, obase + written, &len) == 1 else { return false }
            return written + Int(len) == n
        }()
        guard ok else {
            ERR_clear_error()
            copenssl_cleanse(obase, n)
            throw CryptoError("aes-gcm: authentication failed")
        }
        return n
    }
}
