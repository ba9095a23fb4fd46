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
        var text = text
        let parts = text.withUTF8 { Self.parse($0) }
        switch parts {
        case .success(let p):
            scheme = p.scheme
            host = p.host
            port = p.port
            path = p.path
            query = p.query
        case .failure(let e): throw e
        }
    }

    private struct Parts {
        var scheme: String
        var host: String
        var port: Int?
        var path: String
        var query: String?
    }

    /// The parser, over the UTF-8 bytes (every byte is printable ASCII once the first check passed, so byte
    /// positions are character positions): a URL is parsed on every request, and on every DPoP proof.
    private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> Result<Parts, ParseError> {
        for u in b where u <= 0x20 || u >= 0x7f { return .failure(.badCharacter) }
        let slash = UInt8(ascii: "/")
        guard let schemeEnd = firstRange(of: (UInt8(ascii: ":"), slash, slash), in: b) else {
            return .failure(.notAbsolute)
        }
        let scheme = text(b, 0..<schemeEnd, lowercased: true)
        guard scheme == "http" || scheme == "https" else { return .failure(.unsupportedScheme(scheme)) }
        let start = schemeEnd + 3
        var end = first(UInt8(ascii: "#"), in: b, start..<b.count) ?? b.count
        var query: String? = nil
        if let q = first(UInt8(ascii: "?"), in: b, start..<end) {
            query = text(b, (q + 1)..<end)
            end = q
        }
        let authorityEnd = first(slash, in: b, start..<end) ?? end
        let authority = start..<authorityEnd
        if first(UInt8(ascii: "@"), in: b, authority) != nil { return .failure(.userInfo) }
        let hostRange: Range<Int>
        var portRange: Range<Int>? = nil
        if !authority.isEmpty, b[start] == UInt8(ascii: "[") {
            guard let close = first(UInt8(ascii: "]"), in: b, authority) else { return .failure(.badHost) }
            hostRange = start..<(close + 1)
            if close + 1 < authorityEnd {
                guard b[close + 1] == UInt8(ascii: ":") else { return .failure(.badHost) }
                portRange = (close + 2)..<authorityEnd
            }
            let inner = (start + 1)..<close
            guard !inner.isEmpty, inner.allSatisfy({ isHexDigit(b[$0]) || b[$0] == 0x3A || b[$0] == 0x2E }) else {
                return .failure(.badHost)
            }
        } else {
            if let colon = first(UInt8(ascii: ":"), in: b, authority) {
                hostRange = start..<colon
                portRange = (colon + 1)..<authorityEnd
            } else {
                hostRange = authority
            }
            guard !hostRange.isEmpty, hostRange.count <= 253, hostRange.allSatisfy({ isHostByte(b[$0]) }),
                b[hostRange.lowerBound] != UInt8(ascii: "."),
                !hostRange.dropFirst().contains(where: { b[$0] == 0x2E && b[$0 - 1] == 0x2E })
            else { return .failure(.badHost) }
        }
        var port: Int? = nil
        if let portRange {
            guard !portRange.isEmpty, portRange.count <= 5, portRange.allSatisfy({ isDigit(b[$0]) }) else {
                return .failure(.badPort)
            }
            let p = portRange.reduce(0) { $0 * 10 + Int(b[$1] - 0x30) }
            guard p >= 1, p <= 65535 else { return .failure(.badPort) }
            port = p
        }
        return .success(
            Parts(
                scheme: scheme,
                host: text(b, hostRange, lowercased: true),
                port: port,
                path: text(b, authorityEnd..<end),
                query: query
            )
        )
    }

    private static func isDigit(_ u: UInt8) -> Bool { u >= 0x30 && u <= 0x39 }
    private static func isLetter(_ u: UInt8) -> Bool { (u | 0x20) >= 0x61 && (u | 0x20) <= 0x7A }
    private static func isHexDigit(_ u: UInt8) -> Bool { isDigit(u) || ((u | 0x20) >= 0x61 && (u | 0x20) <= 0x66) }
    private static func isHostByte(_ u: UInt8) -> Bool {
        isLetter(u) || isDigit(u) || u == UInt8(ascii: "-") || u == UInt8(ascii: ".") || u == UInt8(ascii: "_")
    }

    private static func first(_ byte: UInt8, in b: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
        range.first { b[$0] == byte }
    }

    private static func firstRange(
        of pattern: (UInt8, UInt8, UInt8),
        in b: UnsafeBufferPointer<UInt8>
    ) -> Int? {
        guard b.count >= 3 else { return nil }
        return (0...(b.count - 3)).first { b[$0] == pattern.0 && b[$0 + 1] == pattern.1 && b[$0 + 2] == pattern.2 }
    }

    private static func text(_ b: UnsafeBufferPointer<UInt8>, _ r: Range<Int>, lowercased: Bool = false) -> String {
        let slice = UnsafeBufferPointer(rebasing: b[r])
        guard lowercased, slice.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else {
            return String(decoding: slice, as: UTF8.self)
        }
        return String(unsafeUninitializedCapacity: slice.count) { out in
            for (i, u) in slice.enumerated() { out[i] = (u >= 0x41 && u <= 0x5A) ? u | 0x20 : u }
            return slice.count
        }
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
