internal import COpenSSL

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
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
