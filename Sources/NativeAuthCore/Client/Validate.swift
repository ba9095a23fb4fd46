internal import NativeAuthHTTP
internal import NativeAuthJSON

/// Checks shared by the requests. Errors name the request member in `field`.
public enum Validate {
    /// A short text member (a hint, a parameter): at most 2048 bytes, no control characters.
    public static func text(_ t: String?, field: String, allowEmpty: Bool = false) throws(NativeAuthError) -> String? {
        guard let t else { return nil }
        guard allowEmpty || !t.isEmpty, t.utf8.count <= 2048,
            !t.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else { throw .invalidArgument("\(field): must be a short text without control characters", field: field) }
        return t
    }

    /// An `account` member: a `home_account_id` or a username (absent: the only account).
    public static func account(_ a: String?, field: String = "account") throws(NativeAuthError) -> AccountSelection {
        guard let a else { return .only }
        guard !a.isEmpty, a.utf8.count <= 512,
            !a.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else {
            throw .invalidArgument("account: must be a home_account_id or a username", field: field)
        }
        return .named(a)
    }

    public static func username(_ u: String?) throws(NativeAuthError) -> String {
        guard let u, !u.isEmpty else {
            throw NativeAuthError(.invalidUsername, "The username is empty.", field: "username")
        }
        guard u.utf8.count <= 256, !u.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw NativeAuthError(.invalidUsername, "The username is not valid.", field: "username")
        }
        return u
    }

    public static func password(
        _ p: String?,
        field: String = "password",
        required: Bool
    ) throws(NativeAuthError)
        -> Secret?
    {
        guard let p else {
            if required {
                throw NativeAuthError(.invalidPassword, "The password is empty.", field: field, reason: "empty")
            }
            return nil
        }
        guard !p.isEmpty else {
            throw NativeAuthError(.invalidPassword, "The password is empty.", field: field, reason: "empty")
        }
        guard p.utf8.count <= 1024, !p.utf8.contains(0) else {
            throw NativeAuthError(
                .invalidPassword,
                "The password is too long or contains a NUL character.",
                field: field,
                reason: "invalid"
            )
        }
        return Secret(p)
    }

    /// A correlation id chosen by the app: a UUID (it is sent as `client-request-id`), lower-cased.
    public static func correlationID(_ id: String?) throws(NativeAuthError) -> String? {
        guard let id else { return nil }
        let hex = Set("0123456789abcdefABCDEF".utf8)
        let groups = id.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.utf8.count) == [8, 4, 4, 4, 12], groups.allSatisfy({ $0.utf8.allSatisfy(hex.contains) })
        else {
            throw .invalidArgument(
                "correlation_id: must be a UUID (8-4-4-4-12 hexadecimal digits)",
                field: "correlation_id"
            )
        }
        return id.lowercased()
    }

    public static func code(_ c: String?) throws(NativeAuthError) -> Secret {
        guard let c, !c.isEmpty, c.utf8.count <= 64 else {
            throw NativeAuthError(.invalidCode, "The code is empty or too long.", field: "code")
        }
        return Secret(c)
    }

    public static func scopes(
        _ list: [String]?,
        field: String = "scopes",
        required: Bool = false
    )
        throws(NativeAuthError) -> [String]
    {
        guard let list else {
            if required {
                throw .invalidArgument("\(field): required (an array of scope strings)", field: field)
            }
            return []
        }
        if required && list.isEmpty { throw .invalidArgument("\(field): give at least one scope", field: field) }
        guard list.count <= 64 else { throw .invalidArgument("\(field): too many scopes", field: field) }
        for (i, s) in list.enumerated()
        where s.isEmpty || s.utf8.count > 512
            || s.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f })
        {
            throw .invalidArgument(
                "\(field)[\(i)]: a scope is a non-empty string without spaces",
                field: "\(field)[\(i)]"
            )
        }
        return list
    }
}
