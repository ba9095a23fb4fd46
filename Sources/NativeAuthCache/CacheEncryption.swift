internal import NativeAuthCore
internal import NativeAuthCrypto

/// Encryption at rest with a host-supplied 32-byte key: AES-256-GCM through libcrypto.
///
/// The encrypted file is binary:
///
///     "NACE" | version 0x01 | key id (8 bytes) | nonce (12 random bytes) | ciphertext | tag (16 bytes)
///
/// The first 25 bytes (magic, version, key id, nonce) are authenticated as additional data. The key id is the first
/// 8 bytes of SHA-256("nativeauth cache key id" ‖ key): it tells a file sealed with another key apart from an
/// altered one without revealing anything usable about the key. A fresh nonce is drawn for every write.
struct CacheEncryption: Sendable {
    let key: Secret
    let keyID: [UInt8]

    static let magic: [UInt8] = Array("NACE".utf8)
    static let version: UInt8 = 1
    static let headerBytes = 4 + 1 + 8 + AESGCM.nonceBytes

    init(key: Secret) {
        self.key = key
        var input = Array("nativeauth cache key id".utf8)
        key.withUnsafeBytes { input.append(contentsOf: $0) }
        keyID = Array(SHA256.hash(input).prefix(8))
        input.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } }
    }

    /// Whether `bytes` start like an encrypted cache file.
    static func isSealed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 4 && bytes[0] == magic[0] && bytes[1] == magic[1] && bytes[2] == magic[2] && bytes[3] == magic[3]
    }

    func seal(_ plaintext: [UInt8]) throws(NativeAuthError) -> [UInt8] {
        let nonce: [UInt8]
        do { nonce = try SecureRandom.bytes(AESGCM.nonceBytes) } catch {
            throw NativeAuthError(.internal, "The system random generator failed.")
        }
        let header = Self.magic + [Self.version] + keyID + nonce
        let sealed: Result<[UInt8], CryptoError> = key.withUnsafeBytes { k in
            plaintext.withUnsafeBytes { p in
                Result { () throws(CryptoError) in try AESGCM.seal(key: k, nonce: nonce, plaintext: p, aad: header) }
            }
        }
        guard case .success(let out) = sealed else {
            throw NativeAuthError(.cacheWriteFailed, "The token cache could not be encrypted.")
        }
        return header + out
    }

    /// The plaintext of an encrypted file, decrypted straight into the buffer the cache keeps (wiped when released);
    /// `cache_key_invalid` when it was sealed with another key or altered.
    func open(_ bytes: UnsafeRawBufferPointer) throws(NativeAuthError) -> SourceBytes {
        guard bytes.count >= Self.headerBytes + AESGCM.tagBytes, bytes[4] == Self.version else {
            throw NativeAuthError(
                .cacheKeyInvalid,
                "The encrypted token cache file is truncated or of another version."
            )
        }
        let header = Array(bytes[0..<Self.headerBytes])
        guard Array(header[5..<13]) == keyID else {
            throw NativeAuthError(.cacheKeyInvalid, "The token cache file is encrypted with another key.")
        }
        let nonce = Array(header[13..<Self.headerBytes])
        let body = UnsafeRawBufferPointer(rebasing: bytes[Self.headerBytes...])
        let capacity = max(1, body.count - AESGCM.tagBytes)
        let out = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        let opened: Result<Int, CryptoError> = key.withUnsafeBytes { k in
            Result { () throws(CryptoError) in
                try AESGCM.open(
                    key: k,
                    nonce: nonce,
                    sealed: body,
                    aad: header,
                    into: UnsafeMutableBufferPointer(start: out, count: capacity)
                )
            }
        }
        guard case .success(let count) = opened else {
            out.deallocate()  // (wiped by AESGCM.open)
            throw NativeAuthError(
                .cacheKeyInvalid,
                "The encrypted token cache file was altered (its authentication tag does not verify)."
            )
        }
        return SourceBytes(taking: out, count: count)
    }
}
