public import NativeAuthHTTP

/// A normalised CIAM authority: `https://<subdomain>.ciamlogin.com/<tenant>` (or any loopback `http(s)` authority
/// with a tenant path, e.g. the emulator's). Endpoint URLs are `url + suffix`, as every MSAL builds them.
public struct Authority: Sendable, Equatable {
    /// The normalised URL, without a trailing slash, query or fragment.
    public let url: String
    public let parsed: HTTPURL

    /// Parses and normalises `text` as MSAL iOS and JS do: lowercases scheme and host, drops the fragment and trailing
    /// slashes, and rewrites `https://<sub>.ciamlogin.com[/]` to `https://<sub>.ciamlogin.com/<sub>.onmicrosoft.com`.
    public init(_ text: String, type: AuthorityType? = nil) throws(NativeAuthError) {
        guard text.utf8.count <= 2048 else { throw .invalidArgument("authority: longer than 2048 bytes") }
        let u: HTTPURL
        do { u = try HTTPURL(text) } catch {
            throw .invalidArgument("authority: not a valid absolute https URL (\(Authority.reason(error)))")
        }
        if u.scheme == "http" && !u.isLoopback {
            throw .invalidArgument(
                "authority: plain http is allowed only for the loopback hosts localhost, 127.0.0.1 and [::1]; use https"
            )
        }
        guard u.query == nil else { throw .invalidArgument("authority: must not contain a query") }
        var path = u.path
        while path.hasSuffix("/") { path.removeLast() }
        let labels = u.host.split(separator: ".", omittingEmptySubsequences: false)
        if type != .oidc, path.isEmpty, labels.count >= 3, labels[1] == "ciamlogin", let first = labels.first {
            path = "/\(first).onmicrosoft.com"
        }
        // Any OpenID Connect issuer may be a bare origin (https://accounts.example.com).
        guard !path.isEmpty || type == .oidc else {
            throw .invalidArgument(
                "authority: must name the tenant, e.g. https://contoso.ciamlogin.com/contoso.onmicrosoft.com"
            )
        }
        let normalised = u.origin + path
        do { self.parsed = try HTTPURL(normalised) } catch { throw .invalidArgument("authority: invalid") }
        self.url = normalised
    }

    /// The authority for a tenant subdomain: `contoso` → `https://contoso.ciamlogin.com/contoso.onmicrosoft.com`.
    public init(tenantSubdomain sub: String) throws(NativeAuthError) {
        guard !sub.isEmpty, sub.utf8.count <= 63,
            sub.utf8.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d }),
            !sub.hasPrefix("-"), !sub.hasSuffix("-")
        else {
            throw .invalidArgument(
                "tenant_subdomain: must be 1-63 lowercase letters, digits or hyphens (e.g. \"contoso\")"
            )
        }
        try self.init("https://\(sub).ciamlogin.com/\(sub).onmicrosoft.com")
    }

    /// `authority + suffix`, e.g. `endpoint("/oauth2/v2.0/initiate")`.
    public func endpoint(_ suffix: String) -> String { url + suffix }

    private static func reason(_ e: HTTPURL.ParseError) -> String {
        switch e {
        case .notAbsolute: return "expected scheme://host/path"
        case .unsupportedScheme(let s): return "scheme \(s.prefix(16)) is not https"
        case .userInfo: return "user info is not allowed"
        case .badHost: return "invalid host"
        case .badPort: return "invalid port"
        case .badCharacter: return "contains whitespace, control or non-ASCII characters"
        }
    }
}
