/// Where a D-Bus server listens, as a bus address gives it (the D-Bus Specification, "Server Addresses"):
/// `transport:key=value,key=value` entries separated by `;`, values %-escaped. A client tries the entries in order.
/// This client speaks to Unix sockets only: `unix:path=…` (a socket file) and `unix:abstract=…` (Linux's abstract
/// namespace), which is how session buses listen. Other transports (`tcp:`, `autolaunch:`, …) and the listening-only
/// `unix:` forms (`tmpdir`, `dir`, `runtime`) are skipped.
enum DBusEndpoint: Equatable, Sendable {
    /// A socket file.
    case path([UInt8])
    /// A name in the abstract socket namespace (without the leading NUL the kernel expects).
    case abstract([UInt8])

    /// The longest name `sockaddr_un` holds (108 bytes with a NUL, or the abstract namespace's leading one).
    static let maxName = 107

    var description: String {
        switch self {
        case .path(let p): return "unix:path=" + String(decoding: p, as: UTF8.self)
        case .abstract(let a): return "unix:abstract=" + String(decoding: a, as: UTF8.self)
        }
    }

    /// The endpoints of `address` this client can use, in order; `skipped` says what it could not use and why.
    static func parse(_ address: String) -> (endpoints: [DBusEndpoint], skipped: [String]) {
        var endpoints: [DBusEndpoint] = []
        var skipped: [String] = []
        for entry in address.split(separator: ";", omittingEmptySubsequences: true) {
            guard let colon = entry.firstIndex(of: ":") else {
                skipped.append("\"\(entry.prefix(64))\" (no transport)")
                continue
            }
            let transport = entry[entry.startIndex..<colon]
            var keys: [String: [UInt8]] = [:]
            var malformed = false
            for pair in entry[entry.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: true) {
                guard let eq = pair.firstIndex(of: "="), let value = unescape(pair[pair.index(after: eq)...]) else {
                    malformed = true
                    break
                }
                keys[String(pair[pair.startIndex..<eq])] = value
            }
            let shown = "\"\(entry.prefix(128))\""
            if malformed {
                skipped.append("\(shown) (malformed)")
            } else if transport != "unix" {
                skipped.append("\(shown) (only unix: sockets are supported)")
            } else if let p = keys["path"] {
                if p.isEmpty || p.count > maxName || p.contains(0) {
                    skipped.append("\(shown) (not a usable socket path)")
                } else {
                    endpoints.append(.path(p))
                }
            } else if let a = keys["abstract"] {
                if a.count > maxName {
                    skipped.append("\(shown) (name too long)")
                } else {
                    endpoints.append(.abstract(a))
                }
            } else {
                skipped.append("\(shown) (neither path= nor abstract=)")
            }
        }
        return (endpoints, skipped)
    }

    /// A value with its %XX escapes decoded; nil for a malformed escape.
    static func unescape(_ text: Substring) -> [UInt8]? {
        var out: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let b = bytes.next() {
            guard b == UInt8(ascii: "%") else {
                out.append(b)
                continue
            }
            guard let h = bytes.next().flatMap(hexDigit), let l = bytes.next().flatMap(hexDigit) else { return nil }
            out.append(h << 4 | l)
        }
        return out
    }

    private static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
