internal import CJansson

/// A parsed JSON document that stays in jansson's tree: members are read where they are, without first building a
/// `JSONValue` of the whole document. The C ABI decodes every request document this way; `JSONNode.value` converts
/// a part to a `JSONValue` when a caller needs one (claims, attributes, API bodies).
public final class JSONDocument: @unchecked Sendable {  // immutable after init; jansson reads are thread-safe
    let pointer: UnsafeMutablePointer<json_t>

    /// Parses UTF-8 JSON (any value at the top level); see `JSONValue.parse` for the rules.
    public init(bytes: UnsafeRawBufferPointer) throws(JSONParseError) {
        pointer = try janssonParse(bytes)
    }

    deinit { cjansson_decref(pointer) }

    /// The top-level value.
    public var root: JSONNode { JSONNode(pointer, owner: self) }
}

/// One value inside a `JSONDocument` (which it keeps alive).
public struct JSONNode: JSONElement, @unchecked Sendable {
    let pointer: UnsafeMutablePointer<json_t>
    let owner: JSONDocument

    init(_ pointer: UnsafeMutablePointer<json_t>, owner: JSONDocument) {
        self.pointer = pointer
        self.owner = owner
    }

    private var type: json_type { cjansson_typeof(pointer) }

    public var typeName: String {
        switch type {
        case JSON_OBJECT: return "object"
        case JSON_ARRAY: return "array"
        case JSON_STRING: return "string"
        case JSON_INTEGER: return "integer"
        case JSON_REAL: return "number"
        case JSON_TRUE, JSON_FALSE: return "boolean"
        default: return "null"
        }
    }

    public var isNull: Bool { type == JSON_NULL }
    public var isObject: Bool { type == JSON_OBJECT }

    public var stringValue: String? {
        guard type == JSON_STRING, let p = json_string_value(pointer) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: p, count: json_string_length(pointer)), as: UTF8.self)
    }

    public var boolValue: Bool? {
        switch type {
        case JSON_TRUE: return true
        case JSON_FALSE: return false
        default: return nil
        }
    }

    /// The integer value; a real with an exact integer value in Int64 range also qualifies.
    public var intValue: Int64? {
        switch type {
        case JSON_INTEGER: return Int64(json_integer_value(pointer))
        case JSON_REAL: return JSONValue.double(json_real_value(pointer)).intValue
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch type {
        case JSON_INTEGER: return Double(json_integer_value(pointer))
        case JSON_REAL: return json_real_value(pointer)
        default: return nil
        }
    }

    public var elements: [JSONNode]? {
        guard type == JSON_ARRAY else { return nil }
        let n = json_array_size(pointer)
        var out: [JSONNode] = []
        out.reserveCapacity(n)
        for i in 0..<n {
            if let item = json_array_get(pointer, i) { out.append(JSONNode(item, owner: owner)) }
        }
        return out
    }

    public func member(_ key: String) -> JSONNode? {
        guard type == JSON_OBJECT else { return nil }
        let found = withCChars(key) { p, n in json_object_getn(pointer, p, n) }
        return found.map { JSONNode($0, owner: owner) }
    }

    public var members: [(key: String, value: JSONNode)] {
        guard type == JSON_OBJECT else { return [] }
        var out: [(key: String, value: JSONNode)] = []
        var iter = json_object_iter(pointer)
        while let it = iter {
            if let keyPtr = json_object_iter_key(it), let value = json_object_iter_value(it) {
                let key = String(
                    decoding: UnsafeRawBufferPointer(start: keyPtr, count: json_object_iter_key_len(it)),
                    as: UTF8.self
                )
                out.append((key, JSONNode(value, owner: owner)))
            }
            iter = json_object_iter_next(pointer, it)
        }
        return out
    }

    /// This value as a `JSONValue`. Conversion is iterative, so nesting depth never exhausts the thread's stack.
    public var value: JSONValue { JSONValue.convert(pointer) }
}

extension JSONValue {
    /// One container being built during conversion (a class, so appending never copies the partial result).
    private final class Frame {
        let node: UnsafeMutablePointer<json_t>
        let isArray: Bool
        var items: [JSONValue] = []
        var members: [String: JSONValue] = [:]
        var next = 0
        var iter: UnsafeMutableRawPointer?
        var key = ""

        init(_ node: UnsafeMutablePointer<json_t>) {
            self.node = node
            isArray = cjansson_typeof(node) == JSON_ARRAY
            if isArray { items.reserveCapacity(json_array_size(node)) } else { iter = json_object_iter(node) }
        }

        /// The next child that is a container (to descend into), after attaching scalar children in place; nil when
        /// every child is attached.
        func nextContainer() -> UnsafeMutablePointer<json_t>? {
            if isArray {
                while next < json_array_size(node) {
                    defer { next += 1 }
                    guard let child = json_array_get(node, next) else { continue }
                    if let s = JSONValue.scalar(child) { items.append(s) } else { return child }
                }
                return nil
            }
            while let it = iter {
                iter = json_object_iter_next(node, it)
                guard let keyPtr = json_object_iter_key(it), let child = json_object_iter_value(it) else { continue }
                let k = String(
                    decoding: UnsafeRawBufferPointer(start: keyPtr, count: json_object_iter_key_len(it)),
                    as: UTF8.self
                )
                if let s = JSONValue.scalar(child) {
                    members[k] = s
                } else {
                    key = k
                    return child
                }
            }
            return nil
        }

        func attach(_ v: JSONValue) {
            if isArray { items.append(v) } else { members[key] = v }
        }

        var value: JSONValue { isArray ? .array(items) : .object(members) }
    }

    static func scalar(_ j: UnsafeMutablePointer<json_t>) -> JSONValue? {
        switch cjansson_typeof(j) {
        case JSON_STRING:
            guard let p = json_string_value(j) else { return .string("") }
            return .string(
                String(decoding: UnsafeRawBufferPointer(start: p, count: json_string_length(j)), as: UTF8.self)
            )
        case JSON_INTEGER: return .int(Int64(json_integer_value(j)))
        case JSON_REAL: return .double(json_real_value(j))
        case JSON_TRUE: return .bool(true)
        case JSON_FALSE: return .bool(false)
        case JSON_NULL: return .null
        default: return nil
        }
    }

    /// Converts a jansson tree without recursion: an explicit stack of partly built containers, so the depth of a
    /// hostile document costs heap, not the (possibly small) stack of the host's thread.
    static func convert(_ root: UnsafeMutablePointer<json_t>) -> JSONValue {
        if let s = scalar(root) { return s }
        var stack = [Frame(root)]
        while let top = stack.last {
            if let child = top.nextContainer() {
                stack.append(Frame(child))
                continue
            }
            stack.removeLast()
            guard let parent = stack.last else { return top.value }
            parent.attach(top.value)
        }
        return .null
    }
}
