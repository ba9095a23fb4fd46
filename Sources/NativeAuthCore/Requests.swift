public import NativeAuthJSON

/// Request documents, decoded once at the boundary and validated before any network call.
enum Validate {
    static func username(_ f: JSONFields) throws(NativeAuthError) -> String {
        guard let u = try wrap({ () throws(JSONFieldError) in try f.optionalString("username") }), !u.isEmpty else {
            throw NativeAuthError(.invalidUsername, "The username is empty.", extra: ["field": "username"])
        }
        guard u.utf8.count <= 256, !u.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw NativeAuthError(.invalidUsername, "The username is not valid.", extra: ["field": "username"])
        }
        return u
    }

    static func password(_ f: JSONFields, key: String = "password", required: Bool) throws(NativeAuthError) -> String? {
        guard let p = try wrap({ () throws(JSONFieldError) in try f.optionalString(key) }) else {
            if required { throw NativeAuthError(.invalidPassword, "The password is empty.", extra: ["field": .string(key), "reason": "empty"]) }
            return nil
        }
        guard !p.isEmpty else { throw NativeAuthError(.invalidPassword, "The password is empty.", extra: ["field": .string(key), "reason": "empty"]) }
        guard p.utf8.count <= 1024, !p.utf8.contains(0) else {
            throw NativeAuthError(.invalidPassword, "The password is too long or contains a NUL character.", extra: ["field": .string(key), "reason": "invalid"])
        }
        return p
    }

    static func scopes(_ f: JSONFields, key: String = "scopes", required: Bool = false) throws(NativeAuthError) -> [String] {
        guard let list = try wrap({ () throws(JSONFieldError) in try f.optionalStringArray(key) }) else {
            if required { throw NativeAuthError(.invalidArgument, "\(key): required (an array of scope strings)", extra: ["field": .string(key)]) }
            return []
        }
        if required && list.isEmpty { throw NativeAuthError(.invalidArgument, "\(key): give at least one scope", extra: ["field": .string(key)]) }
        guard list.count <= 64 else { throw NativeAuthError(.invalidArgument, "\(key): too many scopes", extra: ["field": .string(key)]) }
        for (i, s) in list.enumerated() where s.isEmpty || s.utf8.count > 512 || s.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }) {
            throw NativeAuthError(.invalidArgument, "\(key)[\(i)]: a scope is a non-empty string without spaces", extra: ["field": .string("\(key)[\(i)]")])
        }
        return list
    }

    /// `claims`: a JSON object (sent serialised) or a string holding one.
    static func claims(_ f: JSONFields) throws(NativeAuthError) -> String? {
        guard let v = f.value("claims") else { return nil }
        switch v {
        case .object: return v.serialized()
        case .string(let s):
            guard (try? JSONValue.parse(s))?.objectValue != nil else {
                throw NativeAuthError(.invalidArgument, "claims: must be a JSON object (or a string holding one)", extra: ["field": "claims"])
            }
            return s
        default:
            throw NativeAuthError(.invalidArgument, "claims: must be a JSON object", extra: ["field": "claims"])
        }
    }

    /// Sign-up attributes: an object of strings (numbers and booleans are turned into strings, arrays joined with
    /// commas, as the docs describe multi-select values).
    static func attributes(_ f: JSONFields, required: Bool) throws(NativeAuthError) -> [String: String]? {
        guard let v = f.value("attributes") else {
            if required { throw NativeAuthError(.invalidArgument, "attributes: required (an object)", extra: ["field": "attributes"]) }
            return nil
        }
        guard case .object(let members) = v else {
            throw NativeAuthError(.invalidArgument, "attributes: must be an object", extra: ["field": "attributes"])
        }
        var out: [String: String] = [:]
        for (k, value) in members {
            switch value {
            case .string(let s): out[k] = s
            case .bool(let b): out[k] = b ? "true" : "false"
            case .int(let i): out[k] = String(i)
            case .double(let d): out[k] = String(d)
            case .array(let items):
                guard items.allSatisfy({ $0.stringValue != nil }) else {
                    throw NativeAuthError(.invalidArgument, "attributes.\(k): arrays must hold strings", extra: ["field": .string("attributes.\(k)")])
                }
                out[k] = items.compactMap(\.stringValue).joined(separator: ",")
            default:
                throw NativeAuthError(.invalidArgument, "attributes.\(k): must be a string, number, boolean or array of strings",
                                      extra: ["field": .string("attributes.\(k)")])
            }
        }
        return out
    }

    static func wrap<T>(_ body: () throws(JSONFieldError) -> T) throws(NativeAuthError) -> T {
        do { return try body() } catch { throw NativeAuthError(error) }
    }

    static func fields(_ doc: JSONValue) throws(NativeAuthError) -> JSONFields {
        let f = try wrap { () throws(JSONFieldError) in try JSONFields(doc) }
        try checkVersion(f)
        return f
    }
}
