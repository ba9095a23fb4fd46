/// A proxy's address as the configuration's `"proxy"` and the proxy environment variables (`https_proxy`, …) write
/// it: `[scheme://][user[:password]@]host[:port][/]`. The scheme is `http` (the default, as libcurl's), `https`,
/// `socks4`, `socks4a`, `socks5` or `socks5h`; the user and password are percent-decoded; without a port, libcurl's
/// default (443 for `https`, 1080 otherwise) is filled in, so `display` names the port actually used.
///
/// The credentials never leave through `description`, `debugDescription`, reflection (`dump`) or `display`; a parse
/// error never repeats the text it was given (it may hold a password).
public struct ProxyURL: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public enum Scheme: String, Sendable, CaseIterable {
        case http, https, socks4, socks4a, socks5, socks5h
    }

    /// Why a text is not a proxy address; the descriptions hold none of the text.
    public enum ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        case empty, tooLong, badCharacter, unsupportedScheme, badUserInfo, badHost, badPort, pathNotAllowed

        public var description: String {
            switch self {
            case .empty: return "it is empty"
            case .tooLong: return "it is longer than 2048 characters"
            case .badCharacter: return "it holds spaces, control or non-ASCII characters (percent-encode them)"
            case .unsupportedScheme: return "the scheme must be http, https, socks4, socks4a, socks5 or socks5h"
            case .badUserInfo:
                return "the user or password is not percent-encoded correctly, or holds a control character"
            case .badHost: return "the host is not a name, an IPv4 address or a bracketed IPv6 address"
            case .badPort: return "the port must be 1-65535"
            case .pathNotAllowed: return "a proxy address has no path, query or fragment"
            }
        }
    }

    public let scheme: Scheme
    /// Lowercased; an IPv6 address keeps its brackets.
    public let host: String
    public let port: Int
    /// Percent-decoded; nil when the address has none. `user:` (an empty password) and `:@` (both empty: libcurl
    /// then lets Negotiate use the Kerberos ticket where it can) are kept as given.
    public let username: String?
    public let password: String?

    public static let maxLength = 2048

    public init(_ text: String) throws(ParseError) {
        guard !text.isEmpty else { throw .empty }
        guard text.utf8.count <= Self.maxLength else { throw .tooLong }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { throw .badCharacter }
        var rest = Substring(text)
        var scheme = Scheme.http
        if let sep = rest.firstRange(of: "://") {
            guard let s = Scheme(rawValue: rest[..<sep.lowerBound].lowercased()) else { throw .unsupportedScheme }
            scheme = s
            rest = rest[sep.upperBound...]
        }
        // The authority ends at the first '/', '?' or '#'; only a lone trailing '/' may follow (as in
        // "http://proxy:3128/", which is common in the environment).
        let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let tail = rest[end...]
        guard tail.isEmpty || tail == "/" else { throw .pathNotAllowed }
        var authority = rest[..<end]
        var username: String? = nil
        var password: String? = nil
        if let at = authority.lastIndex(of: "@") {
            let info = authority[..<at]
            authority = authority[authority.index(after: at)...]
            if let colon = info.firstIndex(of: ":") {
                username = try Self.decode(info[..<colon])
                password = try Self.decode(info[info.index(after: colon)...])
            } else {
                username = try Self.decode(info)
            }
        }
        let (host, portText) = try Self.splitHost(authority)
        var port = scheme == .https ? 443 : 1080
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                let p = Int(portText), p >= 1, p <= 65535
            else { throw .badPort }
            port = p
        }
        self.scheme = scheme
        self.host = host
        self.port = port
        self.username = username
        self.password = password
    }

    /// `scheme://host:port`: what libcurl is given as CURLOPT_PROXY (the credentials go apart), and what messages,
    /// logs and `na_client_info` show.
    public var display: String { "\(scheme.rawValue)://\(host):\(port)" }

    /// Whether the address carries credentials (a user, even an empty one).
    public var hasCredentials: Bool { username != nil }

    public var description: String { display }
    public var debugDescription: String { "ProxyURL(\(display))" }
    public var customMirror: Mirror { Mirror(self, children: ["display": display], displayStyle: .struct) }

    /// Whether libcurl resolves the destination's name itself for this kind of proxy (SOCKS 4 and SOCKS 5 without
    /// `h`); HTTP(S) proxies and `socks4a`/`socks5h` are given the name.
    public var resolvesLocally: Bool { scheme == .socks4 || scheme == .socks5 }

    private static func splitHost(_ authority: Substring) throws(ParseError) -> (String, Substring?) {
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .badHost }
            let inner = authority[authority.index(after: authority.startIndex)..<close]
            guard !inner.isEmpty, inner.count <= 45, inner.contains(":"),
                inner.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." })
            else { throw .badHost }
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { throw .badHost }
            return ("[" + inner.lowercased() + "]", after.isEmpty ? nil : after.dropFirst())
        }
        var host = authority
        var port: Substring? = nil
        if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty, host.utf8.count <= 253, !host.hasPrefix("."), !host.contains(".."),
            host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "." || $0 == "_") })
        else { throw .badHost }
        return (host.lowercased(), port)
    }

    /// Percent-decoding of a user or password: `%XX` only; the result is UTF-8 without control characters (C0 and
    /// DEL: RFC 7617 §2 allows none in a user-id or password; libcurl puts them in `Proxy-Authorization` as they are,
    /// in a quoted string for Digest).
    private static func decode(_ s: Substring) throws(ParseError) -> String {
        var bytes: [UInt8] = []
        var it = s.utf8.makeIterator()
        while let b = it.next() {
            guard b == UInt8(ascii: "%") else {
                bytes.append(b)
                continue
            }
            guard let h = it.next().flatMap(hexValue), let l = it.next().flatMap(hexValue) else { throw .badUserInfo }
            bytes.append(h << 4 | l)
        }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7f }),
            let text = String(validating: bytes, as: UTF8.self)
        else { throw .badUserInfo }
        return text
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
