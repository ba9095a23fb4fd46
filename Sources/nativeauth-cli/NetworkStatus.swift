import NativeAuthJSON

/// `nativeauth status`'s network part, from the library's own account of it (`na_client_info`): the proxy in force —
/// its address without credentials, and where it came from — and the certificate authorities servers are checked
/// with.
enum NetworkStatus {
    /// The members of `na_client_info`'s `config` it reports.
    static let keys = [
        "proxy", "proxy_source", "proxy_credentials", "proxy_error", "no_proxy", "no_proxy_source", "proxy_ca_bundle",
        "ca_bundle", "ca_bundle_source", "ca_bundle_system", "ca_directory",
    ]

    static func report(_ info: JSONValue) -> (document: JSONValue, lines: [String]) {
        let c = info["config"]
        var d: [String: JSONValue] = [:]
        for k in keys { if let v = c?[k] { d[k] = v } }
        let source = c?["proxy_source"]?.stringValue ?? "none"
        var proxy: String
        if let p = c?["proxy"]?.stringValue, !p.isEmpty {
            proxy = "\(p) (\(source == "config" ? "configured" : "from \(source)")"
            if c?["proxy_credentials"]?.boolValue == true { proxy += ", with credentials" }
            proxy += "); directly: "
            if let n = c?["no_proxy"]?.stringValue, !n.isEmpty { proxy += "\(n), " }
            proxy += "localhost, 127.0.0.1, [::1]"
        } else if let e = c?["proxy_error"]?.stringValue {
            proxy = "unusable: \(e)"
        } else {
            proxy = source == "config" ? "none (configured)" : "none"
        }
        var ca = c?["ca_bundle"]?.stringValue ?? "libcurl's default"
        ca += " (\(c?["ca_bundle_source"]?.stringValue ?? "default")"
        if c?["ca_bundle_system"]?.boolValue == true { ca += ", with the system's CAs" }
        ca += ")"
        if let dir = c?["ca_directory"]?.stringValue { ca += ", directory \(dir) (SSL_CERT_DIR)" }
        let lines = [
            "Network:", "  proxy: \(Terminal.safe(proxy))",
            "  CA: \(Terminal.safe(ca))",
        ]
        return (.object(d), lines)
    }
}
