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
        case notAbsolute, unsupportedScheme(String), userInfo, badHost, badPort, badCharacter
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

    /// True for `localhost`, `127.0.0.0/8` and `[::1]` — the only hosts plain `http` may reach.
    public var isLoopback: Bool {
        if host == "localhost" || host == "[::1]" || host == "[0:0:0:0:0:0:0:1]" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { o in !o.isEmpty && o.count <= 3 && o.allSatisfy(\.isNumber) && (Int(o) ?? 256) <= 255 }
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

/// `application/x-www-form-urlencoded` encoding (WHATWG URL standard): unreserved `*-._` and alphanumerics as they
/// are, space as `+`, every other byte of the UTF-8 encoding as `%XX`.
public enum FormEncoding {
    public static func encode(_ fields: [(String, String)]) -> String {
        var out: [UInt8] = []
        for (i, (k, v)) in fields.enumerated() {
            if i > 0 { out.append(UInt8(ascii: "&")) }
            append(k, to: &out)
            out.append(UInt8(ascii: "="))
            append(v, to: &out)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Percent-encodes one component (also usable for query strings).
    public static func component(_ s: String) -> String {
        var out: [UInt8] = []
        append(s, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func append(_ s: String, to out: inout [UInt8]) {
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"):
                out.append(b)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out.append(UInt8(ascii: "%")); out.append(hex[Int(b >> 4)]); out.append(hex[Int(b & 15)])
            }
        }
    }

    /// Decodes a form body into fields (`+` and `%20` both mean space). Nil when a `%` escape is malformed or the
    /// result is not UTF-8.
    public static func decode(_ body: String) -> [(String, String)]? {
        var fields: [(String, String)] = []
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let k = unescape(kv[0]) else { return nil }
            let v = kv.count > 1 ? unescape(kv[1]) : ""
            guard let v else { return nil }
            fields.append((k, v))
        }
        return fields
    }

    private static func unescape(_ s: Substring) -> String? {
        var bytes: [UInt8] = []
        var it = Array(s.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if b == UInt8(ascii: "%") {
                guard let h = it.popFirst(), let l = it.popFirst(), let hv = hexValue(h), let lv = hexValue(l) else {
                    return nil
                }
                bytes.append(hv << 4 | lv)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
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
