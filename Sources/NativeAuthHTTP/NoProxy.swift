internal import Glibc

/// The hosts reached without a proxy, as `NO_PROXY` / `no_proxy` (and the configuration's `"no_proxy"`) list them —
/// read by libcurl's rules (7.86 and later), so that a list that worked with curl means the same here:
///
/// - `*` alone: every host.
/// - entries separated by commas and/or blanks;
/// - a name matches itself and every name under it (`example.com` matches `example.com` and `www.example.com`, not
///   `notexample.com`); a leading and a trailing dot are ignored; case does not matter;
/// - an IPv4 or IPv6 address matches that address, with `/bits` a network (`10.0.0.0/8`, `fd00::/8`); addresses are
///   compared only with hosts written as addresses (no name is resolved).
public struct NoProxyList: Sendable, Equatable, CustomStringConvertible {
    /// The list as given (it holds no secret).
    public let text: String

    /// The longest list considered; the rest of a longer one is ignored.
    public static let maxLength = 8192

    public init(_ text: String) {
        self.text = String(decoding: text.utf8.prefix(Self.maxLength), as: UTF8.self)
    }

    public var description: String { text }

    /// Whether `host` (an `HTTPURL.host`: lowercased, IPv6 in brackets) is reached without a proxy.
    public func matches(host: String) -> Bool {
        let list = Array(text.utf8)
        guard !list.isEmpty else { return false }
        if list == Array("*".utf8) { return true }
        var name = Array(host.utf8)
        let kind: Address.Kind?
        if name.first == UInt8(ascii: "[") {
            guard let close = name.firstIndex(of: UInt8(ascii: "]")) else { return false }
            name = Array(name[1..<close])
            kind = .v6
        } else if Address.parse(name, .v4) != nil {
            kind = .v4
        } else {
            kind = nil
            if name.last == UInt8(ascii: ".") { name.removeLast() }
        }
        guard !name.isEmpty else { return false }
        for token in Self.tokens(list) {
            if let kind {
                if Self.addressMatches(name, kind, token) { return true }
            } else if Self.nameMatches(name, token) {
                return true
            }
        }
        return false
    }

    private static func tokens(_ list: [UInt8]) -> [ArraySlice<UInt8>] {
        list.split(whereSeparator: { $0 == UInt8(ascii: ",") || $0 == 0x20 || $0 == 0x09 })
    }

    private static func nameMatches(_ name: [UInt8], _ token: ArraySlice<UInt8>) -> Bool {
        var t = token
        if t.last == UInt8(ascii: ".") { t = t.dropLast() }
        if t.first == UInt8(ascii: ".") { t = t.dropFirst() }
        guard !t.isEmpty, t.count <= name.count else { return false }
        let lowered = t.map { $0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0 }
        let n = name.map { $0 >= 0x41 && $0 <= 0x5a ? $0 | 0x20 : $0 }
        if lowered.count == n.count { return lowered == n }
        return n[n.count - lowered.count - 1] == UInt8(ascii: ".") && Array(n.suffix(lowered.count)) == lowered
    }

    private static func addressMatches(_ name: [UInt8], _ kind: Address.Kind, _ token: ArraySlice<UInt8>) -> Bool {
        guard token.count < 128, let host = Address.parse(name, kind) else { return false }
        var address = token
        var bits = 0
        if let slash = token.firstIndex(of: UInt8(ascii: "/")) {
            address = token[..<slash]
            // libcurl reads the bits with atoi: leading digits, anything else 0 (then: the whole address).
            for d in token[(slash + 1)...] {
                guard d >= UInt8(ascii: "0"), d <= UInt8(ascii: "9"), bits <= 1000 else { break }
                bits = bits * 10 + Int(d - UInt8(ascii: "0"))
            }
        }
        guard let network = Address.parse(Array(address), kind) else { return false }
        let width = host.count * 8
        if bits == 0 { bits = width }
        guard bits <= width else { return false }
        for i in 0..<host.count {
            let take = min(8, max(0, bits - i * 8))
            let mask: UInt8 = take == 0 ? 0 : UInt8(truncatingIfNeeded: 0xff << (8 - take))
            if host[i] & mask != network[i] & mask { return false }
        }
        return true
    }

    /// An IP address's bytes (inet_pton).
    enum Address {
        enum Kind { case v4, v6 }

        static func parse(_ text: [UInt8], _ kind: Kind) -> [UInt8]? {
            guard !text.isEmpty, text.count < 64, !text.contains(0) else { return nil }
            var out = [UInt8](repeating: 0, count: kind == .v4 ? 4 : 16)
            let family = kind == .v4 ? AF_INET : AF_INET6
            let ok = (text + [0]).withUnsafeBufferPointer { p in
                p.withMemoryRebound(to: CChar.self) { c in
                    out.withUnsafeMutableBytes { inet_pton(family, c.baseAddress, $0.baseAddress) }
                }
            }
            return ok == 1 ? out : nil
        }
    }
}
