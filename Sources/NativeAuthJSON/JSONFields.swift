/// Why a field of a document could not be read. `path` names the field ("cache.path", "scopes[2]").
public struct JSONFieldError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Problem: Sendable, Equatable {
        case missing
        case wrongType(expected: String, found: String)
        case invalid(String)
    }

    public let path: String
    public let problem: Problem

    public init(path: String, problem: Problem) {
        self.path = path
        self.problem = problem
    }

    public var description: String {
        let name = path.isEmpty ? "document" : path
        switch problem {
        case .missing: return "\(name): required field is missing"
        case .wrongType(let expected, let found): return "\(name): expected \(expected), found \(found)"
        case .invalid(let why): return "\(name): \(why)"
        }
    }
}

/// Typed, path-aware access to the members of a JSON object (a `JSONValue`, or a `JSONNode` of a parsed document).
/// `null` counts as absent for optional accessors.
///
///     let f = try JSONFields(doc)
///     let url = try f.string("authority")            // JSONFieldError(path: "authority", problem: .missing)
///     let cache = try f.optionalObject("cache")        // nested: errors say "cache.path"
public struct JSONFields<Element: JSONElement>: Sendable {
    public let path: String
    public let object: Element

    /// Wraps `value`, which must be an object.
    public init(_ value: Element, path: String = "") throws(JSONFieldError) {
        guard value.isObject else {
            throw JSONFieldError(path: path, problem: .wrongType(expected: "object", found: value.typeName))
        }
        self.path = path
        self.object = value
    }

    public func path(of key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The raw member, with null treated as absent.
    public func value(_ key: String) -> Element? {
        guard let v = object.member(key), !v.isNull else { return nil }
        return v
    }

    /// The member as present in the document, null included (nil only when absent).
    public func raw(_ key: String) -> Element? { object.member(key) }

    public func contains(_ key: String) -> Bool { value(key) != nil }

    /// Every member, in no particular order.
    public var members: [(key: String, value: Element)] { object.members }

    private func wrong(_ key: String, _ expected: String, _ found: Element) -> JSONFieldError {
        JSONFieldError(path: path(of: key), problem: .wrongType(expected: expected, found: found.typeName))
    }

    public func optionalString(_ key: String) throws(JSONFieldError) -> String? {
        guard let v = value(key) else { return nil }
        guard let s = v.stringValue else { throw wrong(key, "string", v) }
        return s
    }

    public func string(_ key: String) throws(JSONFieldError) -> String {
        guard let s = try optionalString(key) else { throw JSONFieldError(path: path(of: key), problem: .missing) }
        return s
    }

    public func optionalBool(_ key: String) throws(JSONFieldError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard let b = v.boolValue else { throw wrong(key, "boolean", v) }
        return b
    }

    public func bool(_ key: String) throws(JSONFieldError) -> Bool {
        guard let b = try optionalBool(key) else { throw JSONFieldError(path: path(of: key), problem: .missing) }
        return b
    }

    /// An integer (a number with an exact integral value in Int64 range).
    public func optionalInt(_ key: String) throws(JSONFieldError) -> Int64? {
        guard let v = value(key) else { return nil }
        guard let i = v.intValue else { throw wrong(key, "integer", v) }
        return i
    }

    public func int(_ key: String) throws(JSONFieldError) -> Int64 {
        guard let i = try optionalInt(key) else { throw JSONFieldError(path: path(of: key), problem: .missing) }
        return i
    }

    /// An integer that must lie in `range`.
    public func optionalInt(_ key: String, in range: ClosedRange<Int64>) throws(JSONFieldError) -> Int64? {
        guard let i = try optionalInt(key) else { return nil }
        guard range.contains(i) else {
            throw JSONFieldError(
                path: path(of: key),
                problem: .invalid("must be between \(range.lowerBound) and \(range.upperBound)")
            )
        }
        return i
    }

    public func optionalArray(_ key: String) throws(JSONFieldError) -> [Element]? {
        guard let v = value(key) else { return nil }
        guard let a = v.elements else { throw wrong(key, "array", v) }
        return a
    }

    /// An array whose every element is a string; errors name the element ("scopes[2]").
    public func optionalStringArray(_ key: String) throws(JSONFieldError) -> [String]? {
        guard let items = try optionalArray(key) else { return nil }
        var out: [String] = []
        out.reserveCapacity(items.count)
        for (i, item) in items.enumerated() {
            guard let s = item.stringValue else {
                throw JSONFieldError(
                    path: "\(path(of: key))[\(i)]",
                    problem: .wrongType(expected: "string", found: item.typeName)
                )
            }
            out.append(s)
        }
        return out
    }

    public func stringArray(_ key: String) throws(JSONFieldError) -> [String] {
        guard let a = try optionalStringArray(key) else {
            throw JSONFieldError(path: path(of: key), problem: .missing)
        }
        return a
    }

    public func optionalObject(_ key: String) throws(JSONFieldError) -> JSONFields? {
        guard let v = value(key) else { return nil }
        return try JSONFields(v, path: path(of: key))
    }

    public func object(_ key: String) throws(JSONFieldError) -> JSONFields {
        guard let o = try optionalObject(key) else { throw JSONFieldError(path: path(of: key), problem: .missing) }
        return o
    }
}
