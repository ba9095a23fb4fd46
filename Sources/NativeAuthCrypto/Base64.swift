/// Base64 (RFC 4648 §4) and base64url (§5) in pure Swift.
public enum Base64 {
    private static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Standard base64 with `=` padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        encode(bytes, alphabet: standard, pad: true)
    }

    /// base64url without padding (JWT, PKCE, client_info).
    public static func urlEncode(_ bytes: some Collection<UInt8>) -> String { encode(bytes, alphabet: url, pad: false) }

    /// Appends the base64url form of `bytes` (no padding) to `out`: for text built as bytes (a DPoP proof).
    public static func urlEncode(_ bytes: some Collection<UInt8>, into out: inout [UInt8]) {
        append(bytes, alphabet: url, pad: false, to: &out)
    }

    private static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8], pad: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        append(bytes, alphabet: alphabet, pad: pad, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func append(_ bytes: some Collection<UInt8>, alphabet: [UInt8], pad: Bool, to out: inout [UInt8]) {
        if let done: Void = bytes.withContiguousStorageIfAvailable({
            append($0, alphabet: alphabet, pad: pad, to: &out)
        }) {
            return done
        }
        Array(bytes).withUnsafeBufferPointer { append($0, alphabet: alphabet, pad: pad, to: &out) }
    }

    /// The encoding of `input` written after `out`'s bytes: `out` grows once, by the exact length.
    private static func append(
        _ input: UnsafeBufferPointer<UInt8>,
        alphabet: [UInt8],
        pad: Bool,
        to out: inout [UInt8]
    ) {
        let n = input.count
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: pad ? (n + 2) / 3 * 4 : (n * 4 + 2) / 3))
        out.withUnsafeMutableBufferPointer { o in
            alphabet.withUnsafeBufferPointer { a in
                var i = 0
                var j = start
                while i + 3 <= n {
                    let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                    o[j] = a[Int(v >> 18 & 63)]
                    o[j + 1] = a[Int(v >> 12 & 63)]
                    o[j + 2] = a[Int(v >> 6 & 63)]
                    o[j + 3] = a[Int(v & 63)]
                    i += 3
                    j += 4
                }
                guard i < n else { return }
                let v = UInt32(input[i]) << 16 | (i + 1 < n ? UInt32(input[i + 1]) << 8 : 0)
                o[j] = a[Int(v >> 18 & 63)]
                o[j + 1] = a[Int(v >> 12 & 63)]
                if i + 1 < n { o[j + 2] = a[Int(v >> 6 & 63)] } else if pad { o[j + 2] = UInt8(ascii: "=") }
                if pad { o[j + 3] = UInt8(ascii: "=") }
            }
        }
    }

    /// Decodes standard base64 or base64url (either alphabet, padding optional). Nil on any invalid character or
    /// impossible length; whitespace is not allowed.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        var padding = 0
        for c in text.utf8 {
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            if padding > 0 { return nil }  // data after padding
            let v: UInt8
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = c - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = c - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"), UInt8(ascii: "-"): v = 62
            case UInt8(ascii: "/"), UInt8(ascii: "_"): v = 63
            default: return nil
            }
            values.append(v)
        }
        if padding > 2 || values.count % 4 == 1 { return nil }
        if padding > 0 && (values.count + padding) % 4 != 0 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i + 4 <= values.count {
            let n =
                UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | UInt32(values[i + 2]) << 6
                | UInt32(values[i + 3])
            out.append(UInt8(n >> 16 & 0xff))
            out.append(UInt8(n >> 8 & 0xff))
            out.append(UInt8(n & 0xff))
            i += 4
        }
        let rest = values.count - i
        if rest == 2 {
            let n = UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12
            out.append(UInt8(n >> 16 & 0xff))
        } else if rest == 3 {
            let n = UInt32(values[i]) << 18 | UInt32(values[i + 1]) << 12 | UInt32(values[i + 2]) << 6
            out.append(UInt8(n >> 16 & 0xff))
            out.append(UInt8(n >> 8 & 0xff))
        }
        return out
    }
}
