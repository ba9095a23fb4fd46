// Which servers the credential helpers answer for (issue 28). A helper hands out the user's access token, so the
// server that asks is compared with the servers the user named, strictly: an address is either a bare
// `host[:port]` or `https://` / `http://` + `host[:port]` + an optional path, and anything else — userinfo, a query,
// a fragment, whitespace, a control or non-ASCII character, a backslash, an empty or out-of-range port, a host with
// an empty label — is no address at all. Nothing is decoded (no percent-escapes, no IDNA): a spelling this parser
// does not take is refused, never guessed at.

/// A server's address: its scheme (when it had one), its host (lowercased; an IPv6 literal keeps its brackets) and
/// its port (when it had one).
struct ServerAddress: Equatable {
    var scheme: String?
    var host: String
    var port: Int?

    /// `host[:port]` as docker compares registries (the port only when one was written).
    var hostPort: String { port.map { "\(host):\($0)" } ?? host }

    /// The names plain http may carry a token to (the library's own rule for bearer tokens).
    var isLoopback: Bool { host == "localhost" || host == "127.0.0.1" || host == "[::1]" }

    /// The port a connection over `scheme` goes to: the one written, else the scheme's default.
    func port(over scheme: String) -> Int { port ?? (scheme == "http" ? 80 : 443) }

    /// Whether `self` (a server the user named, `host[:port]`) is `other` reached over `scheme`: the same host and
    /// the same port, a name without a port meaning the scheme's default (`dev.contoso.com` is
    /// `dev.contoso.com:443` over https).
    func names(_ other: ServerAddress, over scheme: String) -> Bool {
        host == other.host && port(over: scheme) == other.port(over: scheme)
    }

    /// A bare `host[:port]` (git's `host=` line, a docker registry, a name the user gave), or nil.
    static func hostPort(_ text: Substring) -> ServerAddress? {
        let host: Substring
        var port: Int? = nil
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[...close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let p = parsePort(rest.dropFirst()) else { return nil }
                port = p
            }
            guard isIPv6Literal(host) else { return nil }
        } else {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return nil }
            host = parts[0]
            if parts.count == 2 {
                guard let p = parsePort(parts[1]) else { return nil }
                port = p
            }
            guard isHostName(host) else { return nil }
        }
        return ServerAddress(scheme: nil, host: host.lowercased(), port: port)
    }

    /// `https://` or `http://` (any case) + `host[:port]` + an optional path, or nil.
    static func url(_ text: String) -> ServerAddress? {
        guard let schemeEnd = text.firstRange(of: "://") else { return nil }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "https" || scheme == "http" else { return nil }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let path = rest[authorityEnd...]
        guard path.utf8.allSatisfy(isPathByte), var address = hostPort(rest[..<authorityEnd]) else { return nil }
        address.scheme = scheme
        return address
    }

    /// Either form (docker's server URL: `registry.example:5000` or `https://registry.example/v2/`), or nil.
    static func parse(_ text: String) -> ServerAddress? {
        text.contains("://") ? url(text) : hostPort(Substring(text))
    }

    /// 1–65535, digits only, no leading zero.
    private static func parsePort(_ text: Substring) -> Int? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            text.first != "0", let n = Int(text), n <= 65535
        else { return nil }
        return n
    }

    /// Dot-separated labels of ASCII letters, digits, '-' and '_' (no empty label: no leading, trailing or double
    /// dot), at most 253 characters. An IPv4 address is such a name.
    private static func isHostName(_ text: Substring) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253 else { return false }
        return text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63
                && label.utf8.allSatisfy { isAlphaNumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }
        }
    }

    /// `[` hex digits, ':' and '.' (at least one ':') `]`; no zone identifier.
    private static func isIPv6Literal(_ text: Substring) -> Bool {
        let inner = text.utf8.dropFirst().dropLast()
        guard text.hasSuffix("]"), inner.count >= 2, inner.count <= 45, inner.contains(UInt8(ascii: ":")) else {
            return false
        }
        return inner.allSatisfy { isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
    }

    private static func isAlphaNumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    private static func isHexDigit(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66)
    }

    /// A path's byte: printable ASCII but for '?', '#' and '\' (no query, no fragment, nothing a parser elsewhere
    /// might read as another authority).
    private static func isPathByte(_ b: UInt8) -> Bool {
        b > 0x20 && b < 0x7F && b != UInt8(ascii: "?") && b != UInt8(ascii: "#") && b != UInt8(ascii: "\\")
    }
}

/// The servers a helper was told it may answer for: `--host`/`--server` when given, else the profile's list.
struct NamedServers {
    var entries: [ServerAddress]

    /// `given` (the flags; `flag` names them) else `profile` (`key` names it); an entry that is not `host[:port]` is
    /// a usage error naming it.
    init(_ given: [String], flag: String, profile: [String]?, key: String) throws(CLIError) {
        let (texts, source) = given.isEmpty ? (profile ?? [], "\(key) in the profile") : (given, flag)
        var entries: [ServerAddress] = []
        for text in texts {
            guard let address = ServerAddress.hostPort(Substring(text)) else {
                throw CLIError(
                    "usage",
                    "\(source): '\(text)' is not HOST[:PORT] (e.g. dev.contoso.com or git.contoso.com:8443)",
                    .usage
                )
            }
            entries.append(address)
        }
        self.entries = entries
    }

    var isEmpty: Bool { entries.isEmpty }

    /// Whether one of them is `address` reached over `scheme`.
    func contains(_ address: ServerAddress, over scheme: String) -> Bool {
        entries.contains { $0.names(address, over: scheme) }
    }
}
