internal import CJansson
internal import Glibc

/// Why a document could not be parsed. The description names the kind of problem and where it is — never the text
/// around it, because documents carry passwords and tokens.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, in a few words ("invalid syntax", "invalid UTF-8", "nesting too deep", …).
    public let reason: String
    /// Where the problem is, as jansson reports it: 1-based line, 1-based column in characters, and the byte position
    /// just past the byte it stopped at.
    public let line: Int
    public let column: Int
    public let position: Int

    public init(reason: String, line: Int, column: Int, position: Int) {
        self.reason = reason
        self.line = line
        self.column = column
        self.position = position
    }

    public var description: String { "invalid JSON at line \(line), column \(column) (byte \(position)): \(reason)" }

    /// jansson's error *code* (its text quotes the input, so it is never used).
    init(_ e: json_error_t) {
        var e = e
        let reason: String
        switch json_error_code(&e) {
        case json_error_out_of_memory: reason = "out of memory"
        case json_error_stack_overflow: reason = "nesting too deep"
        case json_error_invalid_utf8: reason = "invalid UTF-8"
        case json_error_premature_end_of_input: reason = "unexpected end of input"
        case json_error_end_of_input_expected: reason = "unexpected data after the document"
        case json_error_null_character: reason = "NUL byte in the text"
        case json_error_null_byte_in_key: reason = "NUL character in an object key"
        case json_error_duplicate_key: reason = "duplicate object key"
        case json_error_numeric_overflow: reason = "number out of range"
        default: reason = "invalid syntax"
        }
        self.init(reason: reason, line: Int(e.line), column: Int(e.column), position: Int(e.position))
    }
}

/// Parses UTF-8 JSON with jansson. Embedded `\u0000` escapes are allowed and preserved; invalid UTF-8, nesting deeper
/// than jansson's limit (2048), integers beyond Int64 and reals beyond Double are errors.
func janssonParse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> UnsafeMutablePointer<json_t> {
    // A raw NUL byte is never JSON (not whitespace, and not allowed unescaped in a string), but jansson 2.14 reads
    // `{"n":1\0}` as `{"n":1}`: it stops at a NUL that ends a number or literal. So any NUL is refused here.
    if let base = bytes.baseAddress, let nul = memchr(base, 0, bytes.count) {
        // Where jansson would say: the line, the column in characters, the byte position just past the NUL.
        let index = base.distance(to: UnsafeRawPointer(nul))
        let before = UnsafeRawBufferPointer(rebasing: bytes[..<index])
        let line = 1 + before.reduce(0) { $0 + ($1 == 0x0a ? 1 : 0) }
        let lineStart = before.lastIndex(of: 0x0a).map { $0 + 1 } ?? 0
        let column = 1 + before[lineStart...].reduce(0) { $0 + ($1 & 0xC0 == 0x80 ? 0 : 1) }
        throw JSONParseError(reason: "NUL byte in the text", line: line, column: column, position: index + 1)
    }
    var error = json_error_t()
    let flags = Int(JSON_DECODE_ANY) | Int(JSON_ALLOW_NUL)
    let empty: [CChar] = [0]
    let root: UnsafeMutablePointer<json_t>? = empty.withUnsafeBufferPointer { e in
        let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self) ?? e.baseAddress
        return json_loadb(base, bytes.count, flags, &error)
    }
    guard let root else { throw JSONParseError(error) }
    return root
}

extension JSONValue {
    /// Parses a UTF-8 JSON document (any JSON value at the top level).
    public static func parse(bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        try JSONDocument(bytes: bytes).root.value
    }

    /// Parses a JSON document held in a byte array.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError> = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) in try parse(bytes: raw) }
        }
        return try result.get()
    }

    /// Parses a JSON document held in a String.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Builds a new jansson value (a new reference), or nil if jansson could not allocate.
    func makeJansson() -> UnsafeMutablePointer<json_t>? {
        switch self {
        case .null: return json_null()
        case .bool(let b): return b ? json_true() : json_false()
        case .int(let i): return json_integer(json_int_t(i))
        case .double(let d):
            // JSON has no NaN or infinity; they serialise as null rather than failing the whole document.
            return d.isFinite ? json_real(d) : json_null()
        case .string(let s):
            return withCChars(s) { p, n in json_stringn_nocheck(p, n) }
        case .array(let items):
            guard let arr = json_array() else { return nil }
            for item in items {
                guard let child = item.makeJansson(), json_array_append_new(arr, child) == 0 else {
                    cjansson_decref(arr)
                    return nil
                }
            }
            return arr
        case .object(let members):
            guard let obj = json_object() else { return nil }
            for (key, value) in members {
                guard let child = value.makeJansson() else {
                    cjansson_decref(obj)
                    return nil
                }
                let rc = withCChars(key) { p, n in json_object_setn_new_nocheck(obj, p, n, child) }
                if rc != 0 {
                    cjansson_decref(obj)
                    return nil
                }
            }
            return obj
        }
    }

    /// Serialises compactly with sorted keys. Returns nil only if memory could not be allocated.
    public func serializedBytes() -> [UInt8]? { serializedBytes(pretty: false, asciiOnly: false) }

    /// Serialises with sorted keys; `pretty`: indented by 2; `asciiOnly`: every character outside ASCII as a `\u`
    /// escape (the same value), so the text holds no C1 or bidirectional control a terminal would act on.
    public func serializedBytes(pretty: Bool, asciiOnly: Bool) -> [UInt8]? {
        guard let root = makeJansson() else { return nil }
        defer { cjansson_decref(root) }
        var flags = Int(JSON_SORT_KEYS) | Int(JSON_ENCODE_ANY)
        flags |= pretty ? 2 : Int(JSON_COMPACT)  // JSON_INDENT(2) (a macro Swift does not import)
        if asciiOnly { flags |= Int(JSON_ENSURE_ASCII) }
        guard let text = json_dumps(root, flags) else { return nil }
        let n = strlen(text)
        let out = Array(UnsafeRawBufferPointer(start: text, count: n))
        memset(text, 0, n)  // the text may hold a token; wipe jansson's buffer before it is released
        free(text)
        return out
    }

    /// Serialises compactly with sorted keys ("null" if memory could not be allocated).
    public func serialized() -> String {
        guard let bytes = serializedBytes() else { return "null" }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Calls `body` with the UTF-8 bytes of `s` (never a nil pointer, even for "").
func withCChars<R>(_ s: String, _ body: (UnsafePointer<CChar>, Int) -> R) -> R {
    var s = s
    return s.withUTF8 { u in
        if let base = u.baseAddress {
            return base.withMemoryRebound(to: CChar.self, capacity: u.count) { body($0, u.count) }
        }
        var zero: CChar = 0
        return body(&zero, 0)
    }
}
