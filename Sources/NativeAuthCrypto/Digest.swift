internal import COpenSSL

/// Errors from the crypto layer. Messages never contain key material or token contents.
public struct CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// SHA-256 over libcrypto.
public enum SHA256 {
    public static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        let input = Array(data)
        var md = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        let ok = input.withUnsafeBytes { inp in
            md.withUnsafeMutableBufferPointer { out in
                EVP_Digest(inp.baseAddress, inp.count, out.baseAddress, &len, EVP_sha256(), nil)
            }
        }
        // EVP_Digest with SHA-256 fails only if libcrypto cannot allocate. A zero digest would be wrong, so the
        // answer is then an empty array, which never compares equal to a real digest.
        return ok == 1 && len == 32 ? md : []
    }

    public static func hash(_ text: String) -> [UInt8] { hash(Array(text.utf8)) }
}

/// Cryptographically secure random bytes (libcrypto's RAND_bytes, seeded from the OS).
public enum SecureRandom {
    public static func bytes(_ count: Int) throws(CryptoError) -> [UInt8] {
        guard count >= 0, count <= 1 << 20 else { throw CryptoError("random: invalid length") }
        var out = [UInt8](repeating: 0, count: count)
        if count == 0 { return out }
        let rc = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard rc == 1 else {
            ERR_clear_error()
            throw CryptoError("random: the system random generator failed")
        }
        return out
    }

    /// A random (version 4) UUID in lowercase canonical form, as used for `client-request-id`.
    public static func uuid() throws(CryptoError) -> String {
        var b = try bytes(16)
        b[6] = (b[6] & 0x0f) | 0x40
        b[8] = (b[8] & 0x3f) | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, byte) in b.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(byte >> 4)]); out.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// PKCE (RFC 7636) with the S256 method.
public enum PKCE {
    /// A fresh code verifier: 32 random bytes, base64url — 43 characters from the unreserved set.
    public static func makeVerifier() throws(CryptoError) -> String { Base64.urlEncode(try SecureRandom.bytes(32)) }

    /// `BASE64URL(SHA256(ASCII(verifier)))`.
    public static func challenge(for verifier: String) -> String { Base64.urlEncode(SHA256.hash(verifier)) }
}

/// Constant-time comparison of two byte sequences (length is not secret).
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var diff: UInt8 = 0
    for i in 0..<a.count { diff |= a[i] ^ b[i] }
    return diff == 0
}
