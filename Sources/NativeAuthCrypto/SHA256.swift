internal import COpenSSL

/// SHA-256 over libcrypto.
public enum SHA256 {
    /// libcrypto's SHA-256, fetched once (`EVP_sha256()` makes each digest look its implementation up again); nil
    /// when the fetch failed, and then `EVP_sha256()` is used.
    private nonisolated(unsafe) static let fetched: OpaquePointer? = EVP_MD_fetch(nil, "SHA256", nil)

    public static func hash(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        var md = [UInt8](repeating: 0, count: 32)
        var len: UInt32 = 0
        let ok = md.withUnsafeMutableBufferPointer { out in
            EVP_Digest(data.baseAddress, data.count, out.baseAddress, &len, fetched ?? EVP_sha256(), nil)
        }
        // EVP_Digest with SHA-256 fails only if libcrypto cannot allocate. A zero digest would be wrong, so the
        // answer is then an empty array, which never compares equal to a real digest.
        return ok == 1 && len == 32 ? md : []
    }

    public static func hash(_ data: some Collection<UInt8>) -> [UInt8] {
        if let digest = data.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) { return digest }
        return Array(data).withUnsafeBytes { hash($0) }
    }

    public static func hash(_ text: String) -> [UInt8] { hash(Array(text.utf8)) }
}
