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

    /// Appends `s` percent-encoded.
    public static func append(_ s: String, to out: inout [UInt8]) {
        for b in s.utf8 { appendByte(b, to: &out) }
    }

    /// Appends raw bytes (e.g. a secret's) percent-encoded.
    public static func append(bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        for b in bytes { appendByte(b, to: &out) }
    }

    @inline(__always)
    private static func appendByte(_ b: UInt8, to out: inout [UInt8]) {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"):
            out.append(b)
        case UInt8(ascii: " "):
            out.append(UInt8(ascii: "+"))
        default:
            out.append(UInt8(ascii: "%"))
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 15)])
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
