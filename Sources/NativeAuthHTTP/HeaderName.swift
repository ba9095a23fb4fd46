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
}
