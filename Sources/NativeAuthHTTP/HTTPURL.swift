/// A parsed absolute `http`/`https` URL, strict enough for an authentication library: no user info, ASCII only,
/// no whitespace or control characters, a port in 1…65535.
public struct HTTPURL: Sendable, Equatable, CustomStringConvertible {
    /// "http" or "https", lowercased.
    public let scheme: String
    /// Lowercased host; IPv6 literals keep their brackets ("[::1]").
    public let host: String
    public let port: Int?
    /// The path ("" or starting with "/"), as written.
    public let path: String
    /// The query without "?", or nil.
    public let query: String?

    public enum ParseError: Error, Sendable, Equatable {
        case notAbsolute
        case unsupportedScheme(String)
        case userInfo, badHost, badPort, badCharacter
    }

    /// Parses `text`. A fragment is dropped.
    public init(_ text: String) throws(ParseError) {
        for u in text.utf8 where u <= 0x20 || u >= 0x7f { throw .badCharacter }
        guard let schemeEnd = text.firstRange(of: "://") else { throw .notAbsolute }
        let scheme = text[text.startIndex..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { throw .unsupportedScheme(scheme) }
        var rest = text[schemeEnd.upperBound...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[rest.startIndex..<hash] }
        var query: String? = nil
        if let q = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: q)...])
            rest = rest[rest.startIndex..<q]
        }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        let path = String(rest[authorityEnd...])
        if authority.contains("@") { throw .userInfo }
        var host: Substring
        var portText: Substring? = nil
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .badHost }
            host = authority[authority.startIndex...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .badHost }
                portText = after.dropFirst()
            }
            let inner = host.dropFirst().dropLast()
            guard !inner.isEmpty, inner.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { throw .badHost }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[authority.startIndex..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty, host.utf8.count <= 253,
                host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_" }),
                !host.hasPrefix("."), !host.contains("..")
            else { throw .badHost }
        }
        var port: Int? = nil
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let p = Int(portText), p >= 1, p <= 65535
            else { throw .badPort }
            port = p
        }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        self.path = path
        self.query = query
    }

    /// True for exactly `localhost`, `127.0.0.1` and `[::1]` — the only hosts plain `http` may reach, and the only
    /// hosts requests go to without a proxy. Other spellings of loopback addresses (`127.0.0.2`, `127.0.0.08`,
    /// `[0:0:0:0:0:0:0:1]`) are refused: the proxy bypass and the cleartext rule must agree on the same three names.
    public var isLoopback: Bool {
        host == "localhost" || host == "127.0.0.1" || host == "[::1]"
    }

    /// scheme://host[:port]
    public var origin: String {
        if let port { return "\(scheme)://\(host):\(port)" }
        return "\(scheme)://\(host)"
    }

    public var description: String {
        var s = origin + path
        if let query { s += "?" + query }
        return s
    }
}
