internal import Glibc
public import NativeAuthHTTP

/// The network members of a configuration: the proxy (`proxy`, `no_proxy`, `proxy_ca_bundle`) and the certificate
/// authorities (`ca_bundle`, `ca_bundle_system`, and the environment's `SSL_CERT_FILE`, `CURL_CA_BUNDLE`,
/// `SSL_CERT_DIR`). Errors are `invalid_argument` naming the member; a message never repeats a proxy address (it may
/// hold a password).
extension Validate {
    /// The CA settings: the bundle in force and its source (`caBundle`), whether a configured bundle adds to the
    /// store in force without it (`ca_bundle_system`), `SSL_CERT_DIR`, and the store itself:
    ///
    /// - `ca_bundle` alone: only it;
    /// - `ca_bundle` with `ca_bundle_system: true`: it, and the store in force without it (below);
    /// - else `SSL_CERT_FILE` (or `CURL_CA_BUNDLE`) and/or `SSL_CERT_DIR`: what they name — a file alone replaces the
    ///   whole store (as it always has), a directory alone replaces the system's directory (OpenSSL's and Go's rule)
    ///   and keeps the system's file;
    /// - else the system's store: libcurl's built-in file (or a well-known bundle when it is missing) and directory.
    public static func trust(
        caBundle configured: String?,
        system: Bool?,
        environment: (String) -> String?
    ) throws(NativeAuthError) -> (bundle: String?, source: String, system: Bool, directory: String?, store: TrustStore)
    {
        if system == true && configured == nil {
            throw .invalidArgument("ca_bundle_system: only with ca_bundle", field: "ca_bundle_system")
        }
        let ca = try caBundle(configured, environment: environment)
        let envFile = try caBundle(nil, environment: environment)
        let directory = environment("SSL_CERT_DIR").flatMap { $0.isEmpty ? nil : $0 }
        let base = TrustStore(
            files: [envFile.path.map { .path($0) } ?? .systemDefault],
            directory: directory.map { .path($0) } ?? (envFile.path == nil ? .systemDefault : .none)
        )
        guard let bundle = ca.path, ca.source == "config" else {
            return (ca.path, ca.source, false, directory, base)
        }
        guard system == true else { return (bundle, ca.source, false, nil, .only(bundle)) }
        return (
            bundle, ca.source, true, directory,
            TrustStore(files: [.path(bundle)] + base.files, directory: base.directory)
        )
    }

    /// `proxy` (absent: the environment; `""`: no proxy; else `[scheme://][user:password@]host[:port]`) and
    /// `no_proxy` (replaces the environment's `no_proxy` / `NO_PROXY`; `""`: no host is exempt).
    public static func proxy(
        _ text: String?,
        noProxy: String?,
        environment: (String) -> String?
    ) throws(NativeAuthError) -> ProxyPlan {
        if let noProxy {
            guard noProxy.utf8.count <= NoProxyList.maxLength, noProxy.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f })
            else {
                throw .invalidArgument(
                    "no_proxy: at most \(NoProxyList.maxLength) printable ASCII characters (names and addresses "
                        + "separated by commas)",
                    field: "no_proxy"
                )
            }
        }
        var plan: ProxyPlan
        switch text {
        case nil:
            plan = .environment(environment)
        case ""?:
            return ProxyPlan(proxySource: "config")
        case let t?:
            do throws(ProxyURL.ParseError) {
                plan = .configured(try ProxyURL(t), noProxy: nil, environment: environment)
            } catch {
                throw .invalidArgument(
                    "proxy: not a proxy address ([scheme://][user:password@]host[:port]): \(error)",
                    field: "proxy"
                )
            }
        }
        if let noProxy {
            plan.noProxy = NoProxyList(noProxy)
            plan.noProxySource = "config"
        }
        return plan
    }

    /// `proxy_ca_bundle`: a readable file.
    public static func proxyCABundle(_ path: String?) throws(NativeAuthError) -> String? {
        guard let path else { return nil }
        var st = stat()
        guard !path.isEmpty, path.utf8.count <= 4096, !path.utf8.contains(0), stat(path, &st) == 0,
            (st.st_mode & S_IFMT) == S_IFREG, access(path, R_OK) == 0
        else { throw .invalidArgument("proxy_ca_bundle: not a readable file", field: "proxy_ca_bundle") }
        return path
    }
}
