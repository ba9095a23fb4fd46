import Foundation
import NativeAuthCrypto
import NativeAuthJSON

// Test controls that make /oauth2/v2.0/token misbehave: rewritten answers (`token_answers`) and errors for chosen
// scopes or grants (`token_errors`).

/// Refuses members a control does not know (a typo would otherwise silently do nothing).
func rejectUnknownMembers(_ f: JSONFields<JSONValue>, _ allowed: Set<String>) throws(JSONFieldError) {
    for (key, _) in f.members where !allowed.contains(key) {
        throw JSONFieldError(
            path: f.path(of: key),
            problem: .invalid("unknown member (known: \(allowed.sorted().joined(separator: ", ")))")
        )
    }
}

/// "urn:ietf:params:oauth:grant-type:device_code" and "device_code" name the same grant.
func sameGrant(_ a: String, _ b: String) -> Bool {
    func short(_ g: String) -> Substring { g.split(separator: ":").last ?? Substring(g) }
    return short(a.lowercased()) == short(b.lowercased())
}

/// `POST /_emulator/token_answers`: how to rewrite the next `remaining` successful token answers.
struct TokenAnswerRule {
    var id: Int
    var remaining: Int
    var grantType: String?
    /// Members removed from the answer.
    var remove: [String]
    /// Members set to these JSON values (any type: "3600" as a string, 1e300, -5, …).
    var set: [String: JSONValue]
    /// Members set to this text verbatim (numbers no JSON library can hold, broken JSON, …).
    var setRaw: [String: String]
    /// Claims that override the ID token's; the token is signed again with the emulator's key (same kid).
    var idTokenClaims: [String: JSONValue]?
    var idTokenRemoveClaims: [String]
    /// Members added to the ID token's JOSE header (e.g. `crit`); the token is signed again.
    var idTokenHeader: [String: JSONValue] = [:]

    static let members: Set<String> = [
        "count", "grant_type", "remove", "set", "set_raw", "id_token_claims", "id_token_remove_claims",
        "id_token_header",
    ]

    init(_ body: JSONValue, id: Int) throws(JSONFieldError) {
        let f = try JSONFields(body)
        try rejectUnknownMembers(f, Self.members)
        self.id = id
        remaining = Int(try f.optionalInt("count", in: 1...100_000) ?? 1)
        grantType = try f.optionalString("grant_type")
        remove = try f.optionalStringArray("remove") ?? []
        set = [:]
        if let o = try f.optionalObject("set") { for (k, v) in o.members { set[k] = v } }
        setRaw = [:]
        if let o = try f.optionalObject("set_raw") {
            for (k, v) in o.members {
                guard let text = v.stringValue, !text.isEmpty else {
                    throw JSONFieldError(path: o.path(of: k), problem: .invalid("must be non-empty text"))
                }
                setRaw[k] = text
            }
        }
        if let o = try f.optionalObject("id_token_claims") {
            var claims: [String: JSONValue] = [:]
            for (k, v) in o.members { claims[k] = v }
            idTokenClaims = claims
        }
        idTokenRemoveClaims = try f.optionalStringArray("id_token_remove_claims") ?? []
        if let o = try f.optionalObject("id_token_header") { for (k, v) in o.members { idTokenHeader[k] = v } }
        guard
            !remove.isEmpty || !set.isEmpty || !setRaw.isEmpty || idTokenClaims != nil || !idTokenRemoveClaims.isEmpty
                || !idTokenHeader.isEmpty
        else {
            throw JSONFieldError(
                path: "",
                problem: .invalid(
                    "nothing to do: give remove, set, set_raw, id_token_claims, id_token_remove_claims or "
                        + "id_token_header"
                )
            )
        }
    }

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "id": .int(Int64(id)), "remaining": .int(Int64(remaining)),
            "grant_type": grantType.map { .string($0) } ?? .null, "remove": .array(remove.map { .string($0) }),
            "set": .object(set), "set_raw": .object(setRaw.mapValues { .string($0) }),
        ]
        if let idTokenClaims { o["id_token_claims"] = .object(idTokenClaims) }
        if !idTokenHeader.isEmpty { o["id_token_header"] = .object(idTokenHeader) }
        if !idTokenRemoveClaims.isEmpty {
            o["id_token_remove_claims"] = .array(idTokenRemoveClaims.map { .string($0) })
        }
        return .object(o)
    }
}

/// `POST /_emulator/token_errors`: token requests for a scope (and/or grant) answer this error, unprocessed.
struct TokenErrorRule {
    var id: Int
    var scope: String?
    var grantType: String?
    /// nil: until `DELETE /_emulator/token_errors`.
    var remaining: Int?
    var status: Int
    var error: String
    var suberror: String?
    var codes: [Int]
    var description: String?
    /// A claims challenge (conditional access) the error carries, as the service sends it: a JSON text.
    var claims: String?

    static let members: Set<String> = [
        "scope", "grant_type", "count", "status", "error", "suberror", "error_codes", "error_description", "claims",
    ]

    init(_ body: JSONValue, id: Int) throws(JSONFieldError) {
        let f = try JSONFields(body)
        try rejectUnknownMembers(f, Self.members)
        self.id = id
        scope = try f.optionalString("scope")
        grantType = try f.optionalString("grant_type")
        remaining = try f.optionalInt("count", in: 1...1_000_000).map(Int.init)
        status = Int(try f.optionalInt("status", in: 400...599) ?? 400)
        error = try f.string("error")
        suberror = try f.optionalString("suberror")
        codes = []
        if let list = try f.optionalArray("error_codes") {
            for (i, v) in list.enumerated() {
                guard let n = v.intValue, n >= 0, n <= Int64(Int32.max) else {
                    throw JSONFieldError(path: "error_codes[\(i)]", problem: .invalid("must be an AADSTS number"))
                }
                codes.append(Int(n))
            }
        }
        description = try f.optionalString("error_description")
        claims = try f.optionalString("claims")
    }

    func matches(scopes: Set<String>, grant: String) -> Bool {
        if let grantType, !sameGrant(grantType, grant) { return false }
        if let scope, !scopes.contains(scope.lowercased()) { return false }
        return true
    }

    var json: JSONValue {
        [
            "id": .int(Int64(id)), "scope": scope.map { .string($0) } ?? .null,
            "grant_type": grantType.map { .string($0) } ?? .null,
            "remaining": remaining.map { .int(Int64($0)) } ?? .null, "status": .int(Int64(status)),
            "error": .string(error), "suberror": suberror.map { .string($0) } ?? .null,
            "error_codes": .array(codes.map { .int(Int64($0)) }),
            "error_description": description.map { .string($0) } ?? .null,
            "claims": claims.map { .string($0) } ?? .null,
        ]
    }
}
