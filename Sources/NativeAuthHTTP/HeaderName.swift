/// Header names compare in any ASCII case (RFC 9110 §5.1).
public enum HeaderName {
    /// Whether `name` is `lowercase` (given in lower case) in any ASCII case: byte by byte, without making a String
    /// (the request paths call it for every header they hold).
    public static func matches(_ name: String, _ lowercase: String) -> Bool {
        var n = name.utf8.makeIterator()
        for l in lowercase.utf8 {
            guard let c = n.next() else { return false }
            let folded = c >= 0x41 && c <= 0x5A ? c | 0x20 : c
            guard folded == l else { return false }
        }
        return n.next() == nil
    }

    /// A byte of an HTTP token (RFC 9110 §5.6.2 tchar): what a header name or a method is made of.
    public static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
            UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"),
            UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// A byte a header value may hold (RFC 9110 §5.5: field-vchar, SP and HTAB; bytes from 0x80 as obs-text, so
    /// UTF-8 passes): every control character but HTAB is refused — CR, LF and NUL end or split the line, and the
    /// others (DEL, ESC, VT, …) are invalid, which a server or proxy may refuse or read differently.
    public static func isValueByte(_ b: UInt8) -> Bool {
        b == 0x09 || (b >= 0x20 && b != 0x7f)
    }
}
