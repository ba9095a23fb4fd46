internal import Glibc
internal import CJansson
internal import CNativeAuthShims

/// Why a document could not be parsed.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// jansson's description, e.g. "'[' or '{' expected near 'x'" or "maximum parsing depth reached".
    public let reason: String
    /// 1-based line and column, and 0-based byte position of the problem (as jansson reports them).
    public let line: Int
    public let column: Int
    public let position: Int

    public var description: String { "invalid JSON at line \(line), column \(column): \(reason)" }
}

/// Owner of one jansson reference.
private final class JanssonRef {
    let pointer: UnsafeMutablePointer<json_t>
    init(_ pointer: UnsafeMutablePointer<json_t>) { self.pointer = pointer }
    deinit { nashim_json_decref(pointer) }
}

extension JSONValue {
    /// Parses a UTF-8 JSON document (any JSON value at the top level). Embedded `\u0000` escapes are allowed and
    /// preserved; invalid UTF-8, nesting deeper than 2048, integers beyond Int64 and reals beyond Double are errors.
    public static func parse(bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        var error = json_error_t()
        let flags = Int(JSON_DECODE_ANY) | Int(JSON_ALLOW_NUL)
        let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
        let empty: [CChar] = [0]
        let root: UnsafeMutablePointer<json_t>? = empty.withUnsafeBufferPointer { e in
            json_loadb(base ?? e.baseAddress, bytes.count, flags, &error)
        }
        guard let root else {
            let reason = withUnsafeBytes(of: &error.text) { raw -> String in
                let chars = raw.bindMemory(to: UInt8.self)
                let n = chars.firstIndex(of: 0) ?? chars.count
                return String(decoding: UnsafeRawBufferPointer(rebasing: raw[0..<n]), as: UTF8.self)
            }
            throw JSONParseError(reason: reason, line: Int(error.line), column: Int(error.column),
                                 position: Int(error.position))
        }
        let owner = JanssonRef(root)
        return withExtendedLifetime(owner) { convert(root) }
    }

    /// Parses a JSON document held in a byte array.
    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        do {
            return try bytes.withUnsafeBytes { raw throws(JSONParseError) in try parse(bytes: raw) }
        } catch let e as JSONParseError {
            throw e
        } catch {
            throw JSONParseError(reason: "unexpected", line: 0, column: 0, position: 0)
        }
    }

    /// Parses a JSON document held in a String.
    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    private static func convert(_ j: UnsafeMutablePointer<json_t>) -> JSONValue {
        switch nashim_json_typeof(j) {
        case JSON_OBJECT:
            var members: [String: JSONValue] = [:]
            members.reserveCapacity(json_object_size(j))
            var iter = json_object_iter(j)
            while let it = iter {
                if let keyPtr = json_object_iter_key(it), let value = json_object_iter_value(it) {
                    let len = json_object_iter_key_len(it)
                    let key = String(decoding: UnsafeRawBufferPointer(start: keyPtr, count: len), as: UTF8.self)
                    members[key] = convert(value)
                }
                iter = json_object_iter_next(j, it)
            }
            return .object(members)
        case JSON_ARRAY:
            let n = json_array_size(j)
            var items: [JSONValue] = []
            items.reserveCapacity(n)
            for i in 0..<n {
                if let item = json_array_get(j, i) { items.append(convert(item)) }
            }
            return .array(items)
        case JSON_STRING:
            let len = json_string_length(j)
            guard let p = json_string_value(j) else { return .string("") }
            return .string(String(decoding: UnsafeRawBufferPointer(start: p, count: len), as: UTF8.self))
        case JSON_INTEGER:
            return .int(Int64(json_integer_value(j)))
        case JSON_REAL:
            return .double(json_real_value(j))
        case JSON_TRUE:
            return .bool(true)
        case JSON_FALSE:
            return .bool(false)
        default:
            return .null
        }
    }

    /// Builds a new jansson value (a new reference), or nil if jansson could not allocate.
    private func makeJansson() -> UnsafeMutablePointer<json_t>? {
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
                    nashim_json_decref(arr)
                    return nil
                }
            }
            return arr
        case .object(let members):
            guard let obj = json_object() else { return nil }
            for (key, value) in members {
                guard let child = value.makeJansson() else {
                    nashim_json_decref(obj)
                    return nil
                }
                let rc = withCChars(key) { p, n in json_object_setn_new_nocheck(obj, p, n, child) }
                if rc != 0 {
                    nashim_json_decref(obj)
                    return nil
                }
            }
            return obj
        }
    }

    /// Serialises compactly with sorted keys. Returns nil only if memory could not be allocated.
    public func serializedBytes() -> [UInt8]? {
        guard let root = makeJansson() else { return nil }
        let owner = JanssonRef(root)
        return withExtendedLifetime(owner) { () -> [UInt8]? in
            let flags = Int(JSON_COMPACT) | Int(JSON_SORT_KEYS) | Int(JSON_ENCODE_ANY)
            guard let text = json_dumps(root, flags) else { return nil }
            defer { free(text) }
            let n = strlen(text)
            return Array(UnsafeRawBufferPointer(start: text, count: n))
        }
    }

    /// Serialises compactly with sorted keys ("null" if memory could not be allocated).
    public func serialized() -> String {
        guard let bytes = serializedBytes() else { return "null" }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Calls `body` with the UTF-8 bytes of `s` (never a nil pointer, even for "").
private func withCChars<R>(_ s: String, _ body: (UnsafePointer<CChar>, Int) -> R) -> R {
    var s = s
    return s.withUTF8 { u in
        if let base = u.baseAddress {
            return base.withMemoryRebound(to: CChar.self, capacity: u.count) { body($0, u.count) }
        }
        var zero: CChar = 0
        return body(&zero, 0)
    }
}
