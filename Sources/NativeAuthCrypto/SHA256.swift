internal import COpenSSL

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
