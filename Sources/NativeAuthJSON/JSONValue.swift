/// A JSON document as a Swift value.
///
/// Parsed and serialised by jansson (see `JSONValue.parse` and `serialized()`); jansson pointers never leave this
/// module. Objects are unordered (key order means nothing in NativeAuth documents); serialisation sorts keys so that
/// output is deterministic.
public enum JSONValue: Sendable, Equatable, JSONElement {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The JSON type name, as used in error messages ("string", "number", "object", …).
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The member `key` of an object, or nil (also for non-objects).
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The integer value; a double with an exact integer value in Int64 range also qualifies.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.isFinite, d == d.rounded(), d >= -9.2e18, d <= 9.2e18 else { return nil }
            return Int64(d)
        default: return nil
        }
    }

    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var isObject: Bool { objectValue != nil }
    public var elements: [JSONValue]? { arrayValue }
    public func member(_ key: String) -> JSONValue? { self[key] }
    public var members: [(key: String, value: JSONValue)] { (objectValue ?? [:]).map { ($0.key, $0.value) } }
    public var value: JSONValue { self }
}

/// Read access shared by `JSONValue` (a Swift value) and `JSONNode` (a value inside a parsed jansson document), so
/// that `JSONFields` reads either.
public protocol JSONElement: Sendable {
    /// "null", "boolean", "integer", "number", "string", "array" or "object" (for error messages).
    var typeName: String { get }
    var isNull: Bool { get }
    var isObject: Bool { get }
    var stringValue: String? { get }
    var boolValue: Bool? { get }
    /// An integer, or a number with an exact integral value in Int64 range.
    var intValue: Int64? { get }
    var doubleValue: Double? { get }
    /// The items of an array, or nil.
    var elements: [Self]? { get }
    /// The member `key` of an object, or nil (also for non-objects).
    func member(_ key: String) -> Self?
    /// The members of an object (empty for non-objects), in no particular order.
    var members: [(key: String, value: Self)] { get }
    /// The value as a `JSONValue`.
    var value: JSONValue { get }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(nilLiteral: ()) { self = .null }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var members: [String: JSONValue] = [:]
        for (k, v) in elements { members[k] = v }
        self = .object(members)
    }
}
