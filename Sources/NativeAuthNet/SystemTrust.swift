internal import CCurl
internal import Glibc
internal import NativeAuthHTTP

/// The system's certificate authorities as this process's libcurl finds them: its built-in CA file and directory
/// (CURLINFO_CAINFO / CURLINFO_CAPATH, libcurl 7.84), and — when the built-in file does not exist on this machine (a
/// libcurl built on Debian, whose default is /etc/ssl/certs/ca-certificates.crt, running on Fedora, as the manylinux
/// wheel's may) — the first of the well-known bundles that does, in the order Go's crypto/x509 tries them.
public enum SystemTrust {
    /// Go's crypto/x509 (root_linux.go) list, in its order.
    public static let wellKnownFiles = [
        "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Gentoo, Arch
        "/etc/pki/tls/certs/ca-bundle.crt",  // Fedora, RHEL 6
        "/etc/ssl/ca-bundle.pem",  // openSUSE
        "/etc/pki/tls/cacert.pem",  // OpenELEC
        "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // CentOS, RHEL 7
        "/etc/ssl/cert.pem",  // Alpine
    ]

    /// What the system's store is made of here.
    public struct Defaults: Sendable, Equatable {
        /// libcurl's built-in file and directory (nil: none, or a libcurl too old to say).
        public let curlFile: String?
        public let curlDirectory: String?
        /// The file used for the system's default: libcurl's, or the fallback (`isFallback`), or nil (leave libcurl
        /// alone: it has no built-in file, or would not say).
        public let file: String?
        public let isFallback: Bool
    }

    /// The defaults, found once per process (loading libcurl if it is not loaded yet).
    public static var current: Defaults { cached }

    private static let cached: Defaults = {
        var file: UnsafePointer<CChar>? = nil
        var directory: UnsafePointer<CChar>? = nil
        if ccurl_load() == 0, let h = ccurl_easy_init() {
            if ccurl_getinfo_str(h, CURLINFO_CAINFO, &file) != CURLE_OK { file = nil }
            if ccurl_getinfo_str(h, CURLINFO_CAPATH, &directory) != CURLE_OK { directory = nil }
            let f = file.map { String(cString: $0) }
            let d = directory.map { String(cString: $0) }
            ccurl_easy_cleanup(h)
            return choose(curlFile: f, curlDirectory: d, exists: isReadableFile)
        }
        return choose(curlFile: nil, curlDirectory: nil, exists: isReadableFile)
    }()

    /// The choice, given what exists: libcurl's file when it is there (or when libcurl has none: then nothing is
    /// changed), else the first well-known file that exists.
    public static func choose(curlFile: String?, curlDirectory: String?, exists: (String) -> Bool) -> Defaults {
        guard let curlFile, !curlFile.isEmpty, !exists(curlFile) else {
            return Defaults(curlFile: curlFile, curlDirectory: curlDirectory, file: curlFile, isFallback: false)
        }
        let fallback = wellKnownFiles.first(where: exists)
        return Defaults(
            curlFile: curlFile,
            curlDirectory: curlDirectory,
            file: fallback ?? curlFile,
            isFallback: fallback != nil
        )
    }

    static func isReadableFile(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && access(path, R_OK) == 0
    }

    /// A CA file's bytes, for a store of several files given to libcurl as one blob; nil when it cannot be read or
    /// is not a regular file (a FIFO nobody writes would otherwise hold the request for ever; /dev/zero has no end).
    static func read(_ path: String, limit: Int = 16 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, Int(st.st_size) <= limit else { return nil }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { return out }
            out += chunk[0..<n]
            if out.count > limit { return nil }
        }
    }
}

/// A trust store as libcurl takes it: one CA file (or the bytes of several), and a directory.
struct CurlTrust: Sendable {
    enum File: Sendable {
        /// libcurl's built-in file: nothing to set.
        case builtIn
        case path(String)
        case blob([UInt8])
    }

    enum Directory: Sendable {
        case builtIn
        case none
        case path(String)
    }

    let file: File
    let directory: Directory

    /// `store` on this machine. Several files become one blob (CURLOPT_CAINFO_BLOB); a file that cannot be read
    /// makes it fail, naming the file.
    init(_ store: TrustStore, defaults: @autoclosure () -> SystemTrust.Defaults) throws(HTTPError) {
        func path(_ f: TrustStore.File) -> String? {
            switch f {
            case .path(let p): return p
            case .systemDefault: return defaults().file
            }
        }
        switch store.files.count {
        case 0:
            file = .path("")
        case 1:
            if store.files[0] == .systemDefault, !defaults().isFallback {
                file = .builtIn
            } else if let p = path(store.files[0]) {
                // libcurl would wait for ever on a FIFO nobody writes: only a regular file is handed over.
                guard SystemTrust.isReadableFile(p) else { throw HTTPError(.tls, "cannot read the CA file \(p)") }
                file = .path(p)
            } else {
                file = .builtIn
            }
        default:
            var bytes: [UInt8] = []
            for f in store.files {
                guard let p = path(f) else { continue }
                guard let b = SystemTrust.read(p) else {
                    throw HTTPError(.tls, "cannot read the CA file \(p)")
                }
                bytes += b
                bytes.append(0x0a)
            }
            file = .blob(bytes)
        }
        switch store.directory {
        case .none: directory = .none
        case .path(let p): directory = .path(p)
        case .systemDefault: directory = .builtIn
        }
    }

    /// Sets the options of servers' (or, with `proxy`, the proxy's) verification on `h`; false when libcurl refused
    /// one (a blob with a TLS library that cannot take one).
    func apply(to h: UnsafeMutableRawPointer, proxy: Bool) -> Bool {
        var ok = true
        switch file {
        case .builtIn: break
        case .path(let p):
            // An empty path: no file at all (libcurl takes NULL for that).
            ok = ccurl_setopt_str(h, proxy ? CURLOPT_PROXY_CAINFO : CURLOPT_CAINFO, p.isEmpty ? nil : p) == CURLE_OK
        case .blob(let b):
            ok =
                b.withUnsafeBytes {
                    ccurl_setopt_blob(
                        h,
                        proxy ? CURLOPT_PROXY_CAINFO_BLOB : CURLOPT_CAINFO_BLOB,
                        $0.baseAddress,
                        $0.count
                    )
                } == CURLE_OK
        }
        switch directory {
        case .builtIn: break
        case .none: ok = ccurl_setopt_str(h, proxy ? CURLOPT_PROXY_CAPATH : CURLOPT_CAPATH, nil) == CURLE_OK && ok
        case .path(let p): ok = ccurl_setopt_str(h, proxy ? CURLOPT_PROXY_CAPATH : CURLOPT_CAPATH, p) == CURLE_OK && ok
        }
        return ok
    }
}
