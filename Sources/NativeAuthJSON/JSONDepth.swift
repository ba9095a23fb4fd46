/// How deeply a JSON text nests, measured without parsing it (brackets outside strings). Everything the library
/// turns back into text (requests' claims and attributes, API bodies, ID-token claims) is first checked against
/// `JSONDepth.limit`: serialising (Swift's and jansson's) recurses once per level, and a host's thread may have a
/// small stack.
public enum JSONDepth {
    /// The deepest nesting the library accepts in documents it parses and writes back.
    public static let limit = 64

    /// What a scan of the brackets says of a text: it nests within the limit, deeper, or it cannot be JSON at all
    /// (a control character inside a string, a bracket closed that was not open, unclosed brackets or string).
    public enum Shape: Sendable, Equatable {
        case fits, tooDeep, malformed
    }

    /// True when `bytes` nests deeper than `limit` (also for invalid JSON: the scan only counts brackets).
    public static func exceeds(_ bytes: UnsafeRawBufferPointer, limit: Int = JSONDepth.limit) -> Bool {
        scan(bytes, limit: limit, stopWhenTooDeep: true).tooDeep
    }

    public static func exceeds(_ bytes: [UInt8], limit: Int = JSONDepth.limit) -> Bool {
        bytes.withUnsafeBytes { exceeds($0, limit: limit) }
    }

    /// The text's `Shape`, from one pass over all of it (no recursion, no allocation). `malformed` wins over
    /// `tooDeep`: a text that cannot be JSON is not called deeply nested JSON.
    public static func shape(_ bytes: UnsafeRawBufferPointer, limit: Int = JSONDepth.limit) -> Shape {
        let r = scan(bytes, limit: limit, stopWhenTooDeep: false)
        return r.malformed ? .malformed : r.tooDeep ? .tooDeep : .fits
    }

    public static func shape(_ bytes: [UInt8], limit: Int = JSONDepth.limit) -> Shape {
        bytes.withUnsafeBytes { shape($0, limit: limit) }
    }

    /// One pass over the brackets outside strings: whether they go deeper than `limit` (the pass may stop there),
    /// and whether the text cannot be JSON.
    private static func scan(
        _ bytes: UnsafeRawBufferPointer,
        limit: Int,
        stopWhenTooDeep: Bool
    ) -> (tooDeep: Bool, malformed: Bool) {
        var depth = 0
        var tooDeep = false
        var malformed = false
        var inString = false
        var escaped = false
        for b in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                } else if b < 0x20 {
                    malformed = true
                }
                continue
            }
            switch b {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit {
                    tooDeep = true
                    if stopWhenTooDeep { return (true, malformed) }
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if depth < 0 { malformed = true }
            default: break
            }
        }
        if inString || depth != 0 { malformed = true }
        return (tooDeep, malformed)
    }
}
