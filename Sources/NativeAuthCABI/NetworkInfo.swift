import NativeAuthCore
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthNet

/// What `na_client_info` and the log say about the network: the proxy (its address without credentials, where it
/// came from), the no-proxy list, the certificate authorities in force.
enum NetworkInfo {
    /// The members of `na_client_info`'s `config`:
    /// `proxy` (`scheme://host:port`, never the credentials; `""` when the configuration says no proxy),
    /// `proxy_source` (`config`, `https_proxy`, `HTTPS_PROXY`, `all_proxy`, `ALL_PROXY` or `none`),
    /// `proxy_credentials` (true when the address holds a user), `proxy_error` (an environment value that is not a
    /// proxy address: why), `no_proxy` and `no_proxy_source`, `proxy_ca_bundle`; `ca_bundle_source` and `ca_bundle`
    /// (for the system's store: the file used, `ca_bundle_source` `default`, or `fallback` when libcurl's own is
    /// missing), `ca_bundle_system`, `ca_directory` (`SSL_CERT_DIR`).
    static func members(_ c: ClientConfiguration) -> [String: JSONValue] {
        var o: [String: JSONValue] = [:]
        let plan = c.proxy
        switch plan.proxy {
        case nil:
            // "proxy": "" in the configuration, or no proxy variable set.
            if plan.proxySource == "config" { o["proxy"] = "" }
            o["proxy_source"] = .string(plan.proxySource ?? "none")
        case .success(let p)?:
            o["proxy"] = .string(p.display)
            o["proxy_source"] = .string(plan.proxySource ?? "config")
            if p.hasCredentials { o["proxy_credentials"] = true }
        case .failure(let e)?:
            o["proxy_source"] = .string(plan.proxySource ?? "config")
            o["proxy_error"] = .string("\(plan.proxySource ?? "proxy") is not a proxy address: \(e)")
        }
        if !plan.noProxy.text.isEmpty || plan.noProxySource == "config" {
            o["no_proxy"] = .string(plan.noProxy.text)
            o["no_proxy_source"] = .string(plan.noProxySource ?? "config")
        }
        if let p = c.proxyCABundle { o["proxy_ca_bundle"] = .string(p) }
        o["ca_bundle_source"] = .string(c.caBundleSource)
        if let ca = c.caBundle {
            o["ca_bundle"] = .string(ca)
            if c.caBundleSource == "config" { o["ca_bundle_system"] = .bool(c.caBundleSystem) }
        } else if c.trust.files == [.systemDefault], let file = SystemTrust.current.file {
            o["ca_bundle"] = .string(file)
            if SystemTrust.current.isFallback { o["ca_bundle_source"] = "fallback" }
        }
        if let d = c.caDirectory { o["ca_directory"] = .string(d) }
        return o
    }

    /// One log line (info) before the client's first request: the route and the trust in force.
    static func log(_ c: ClientConfiguration, to logger: Logger) {
        guard logger.isEnabled(.info) else { return }
        let m = members(c)
        var route = "no proxy"
        if let p = m["proxy"]?.stringValue, !p.isEmpty {
            route = "proxy \(p) (\(m["proxy_source"]?.stringValue ?? ""))"
            if m["proxy_credentials"] != nil { route += " with credentials" }
            if let n = m["no_proxy"]?.stringValue, !n.isEmpty { route += ", not for \(n)" }
        } else if let e = m["proxy_error"]?.stringValue {
            route = e
        }
        var trust = "CA \(m["ca_bundle"]?.stringValue ?? "libcurl's default") (\(c.caBundleSource)"
        trust += c.caBundleSystem ? ", with the system's)" : ")"
        if let d = c.caDirectory { trust += ", CA directory \(d) (SSL_CERT_DIR)" }
        logger.log(.info, "network: \(route); \(trust)")
    }
}
