import NativeAuthJSON

/// The tenant's rules for new accounts and passwords, shared by native auth and the browser's sign-up page.
enum AccountPolicy {
    /// What the tenant's password policy says of `pw` (a new password for `user`, when there is one): nil when fine,
    /// else `invalid_grant` AADSTS399246 with the policy's suberror.
    static func passwordProblem(_ pw: String, user: UserRecord?, _ config: EmulatorConfig) -> ServiceError? {
        let p = config.passwordPolicy
        func fail(_ sub: String) -> ServiceError { .passwordPolicy(sub) }
        if pw.count < p.minLength { return fail("password_too_short") }
        if pw.count > p.maxLength { return fail("password_too_long") }
        if p.banned.contains(where: { $0.lowercased() == pw.lowercased() }) { return fail("password_banned") }
        if pw.contains(where: { $0.isNewline || $0 == "\u{0}" }) { return fail("password_is_invalid") }
        var classes = 0
        if pw.contains(where: \.isLowercase) { classes += 1 }
        if pw.contains(where: \.isUppercase) { classes += 1 }
        if pw.contains(where: \.isNumber) { classes += 1 }
        if pw.contains(where: { !$0.isLetter && !$0.isNumber }) { classes += 1 }
        if classes < 3 { return fail("password_too_weak") }
        if let user, user.password == pw || user.previousPasswords.contains(pw) {
            return fail("password_recently_used")
        }
        return nil
    }

    /// Parses the `attributes` form field (a JSON object; values stringified).
    static func parseAttributes(_ raw: String?) throws(ServiceError) -> [String: String] {
        guard let raw, !raw.isEmpty else { return [:] }
        guard let doc = try? JSONValue.parse(raw), case .object(let members) = doc else {
            throw .invalidParameter("attributes")
        }
        var out: [String: String] = [:]
        for (k, v) in members {
            switch v {
            case .string(let s): out[k] = s
            case .bool(let b): out[k] = b ? "true" : "false"
            case .int(let i): out[k] = String(i)
            case .double(let d): out[k] = String(d)
            case .array(let items): out[k] = items.compactMap(\.stringValue).joined(separator: ",")
            default: break
            }
        }
        return out
    }

    /// Names of attributes whose values break their definition's type or regex.
    static func invalidAttributes(_ attrs: [String: String], _ config: EmulatorConfig) -> [String] {
        var bad: [String] = []
        for def in config.signUpAttributes {
            guard let v = attrs[def.name] else { continue }
            var ok = true
            switch def.type {
            case "boolean": ok = v == "true" || v == "false"
            case "int": ok = Int(v) != nil
            default: ok = !v.isEmpty && v.count <= 1024
            }
            if ok, let pattern = def.regex, (try? Regex(pattern).wholeMatch(in: v)) == nil { ok = false }
            if !ok { bad.append(def.name) }
        }
        return bad.sorted()
    }

    /// A new account from sign-up: its display name from the `displayName` attribute (else the email).
    static func newUser(email: String, password: String?, attributes: [String: String]) -> UserRecord {
        UserRecord(
            email: email,
            password: password,
            displayName: attributes["displayName"] ?? email,
            givenName: attributes["givenName"],
            surname: attributes["surname"],
            attributes: attributes,
            objectID: Ids.uuid(),
            mfaEmail: nil,
            mfaRequired: false
        )
    }
}
