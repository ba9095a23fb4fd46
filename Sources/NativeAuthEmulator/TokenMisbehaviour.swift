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

extension Emulator {
    // MARK: - Token errors

    /// The error a `token_errors` rule answers for this token request, if one matches (consumes one use).
    func injectedTokenError(_ form: [String: String], grant: String, _ ctx: RequestContext) -> ServiceError? {
        let scopes = Set((form["scope"] ?? "").split(separator: " ").map { $0.lowercased() })
        guard
            let rule = store.withLock({ s -> TokenErrorRule? in
                guard let i = s.tokenErrors.firstIndex(where: { $0.matches(scopes: scopes, grant: grant) }) else {
                    return nil
                }
                let rule = s.tokenErrors[i]
                if let left = rule.remaining {
                    if left <= 1 { s.tokenErrors.remove(at: i) } else { s.tokenErrors[i].remaining = left - 1 }
                }
                counters.add(.tokenErrorsInjected)
                return rule
            })
        else { return nil }
        let text: String
        if let d = rule.description {
            text = d
        } else if let code = rule.codes.first {
            text = Self.aadstsDescription(
                code,
                clientID: form["client_id"] ?? "",
                resource: rule.scope ?? form["scope"] ?? "",
                now: ctx.now
            )
        } else {
            text = "Injected token endpoint error."
        }
        return ServiceError(
            rule.error,
            rule.codes,
            text,
            suberror: rule.suberror,
            status: rule.status,
            extra: rule.claims.map { ["claims": .string($0)] } ?? [:]
        )
    }

    /// Descriptions in the service's style for the codes token-endpoint tests ask for most.
    static func aadstsDescription(_ code: Int, clientID: String, resource: String, now: Double) -> String {
        let issued = serviceTimestamp(now - 90 * 86_400)
        let text: String
        switch code {
        case 65001:
            text =
                "The user or administrator has not consented to use the application with ID '\(clientID)'. Send an "
                + "interactive authorization request for this user and resource."
        case 50076:
            text =
                "Due to a configuration change made by your administrator, or because you moved to a new location, "
                + "you must use multi-factor authentication to access '\(resource)'."
        case 50079:
            text =
                "Due to a configuration change made by your administrator, or because you moved to a new location, "
                + "you are required to enroll in multi-factor authentication."
        case 700082:
            text =
                "The refresh token has expired due to inactivity. The token was issued on \(issued) and was "
                + "inactive for 90.00:00:00."
        case 70008:
            text =
                "The provided authorization code or refresh token has expired due to inactivity. Send a new "
                + "interactive authorization request for this user and resource."
        case 700084:
            text =
                "The refresh token was issued to a single page app (SPA), and therefore has a fixed, limited "
                + "lifetime of 1.00:00:00, which cannot be extended. It is now expired and a new sign in request "
                + "must be sent by the SPA to the sign in page. The token was issued on \(issued)."
        case 50173:
            text =
                "The provided grant has expired due to it being revoked, a fresh auth token is needed. The user "
                + "might have changed or reset their password."
        case 50126: text = "Error validating credentials due to invalid username or password."
        case 50142: text = "Password change is required due to a conditional access policy."
        case 50034: text = "The user account does not exist in the directory."
        case 50057: text = "The user account is disabled."
        case 53003:
            text =
                "Access has been blocked by Conditional Access policies. The access policy does not allow token "
                + "issuance."
        case 9002313: text = "Invalid request. Request is malformed or invalid."
        case 70011:
            text =
                "The provided value for the input parameter 'scope' is not valid. The scope '\(resource)' is not valid."
        case 500011:
            text = "The resource principal named \(resource) was not found in the tenant."
        default: text = "Injected token endpoint error."
        }
        return "AADSTS\(code): \(text)"
    }

    // MARK: - Token answers

    /// Rewrites a successful token answer as the next matching `token_answers` rule says (consumes one use). The
    /// tokens the emulator stored are untouched: only what the client reads changes.
    func tamperTokenAnswer(
        _ answer: EmulatorResponse,
        grant: String,
        _ form: [String: String],
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        guard answer.status == 200, case .object(var o)? = try? JSONValue.parse(answer.body), o["access_token"] != nil
        else { return answer }
        guard
            let rule = store.withLock({ s -> TokenAnswerRule? in
                guard
                    let i = s.tokenAnswers.firstIndex(where: { r in r.grantType.map { sameGrant($0, grant) } ?? true })
                else { return nil }
                let rule = s.tokenAnswers[i]
                if rule.remaining <= 1 { s.tokenAnswers.remove(at: i) } else { s.tokenAnswers[i].remaining -= 1 }
                counters.add(.tokenAnswersRewritten)
                return rule
            })
        else { return answer }
        if rule.idTokenClaims != nil || !rule.idTokenRemoveClaims.isEmpty || !rule.idTokenHeader.isEmpty {
            o["id_token"] = reMintIDToken(o["id_token"]?.stringValue, rule, form, ctx).map { .string($0) } ?? .null
        }
        for k in rule.remove { o.removeValue(forKey: k) }
        for (k, v) in rule.set { o[k] = v }
        for k in rule.setRaw.keys { o.removeValue(forKey: k) }
        var body = JSONValue.object(o).serializedBytes() ?? Array("{}".utf8)
        for (k, raw) in rule.setRaw.sorted(by: { $0.key < $1.key }) {
            // Splice `"key":raw` before the closing brace, verbatim.
            let member = JSONValue.string(k).serialized() + ":" + raw
            body.removeLast()
            body += Array(((body.count > 1 ? "," : "") + member + "}").utf8)
        }
        var r = answer
        r.body = body
        return r
    }

    /// The answer's ID token (or, when it has none, a fresh one for the same client) with claims replaced.
    private func reMintIDToken(
        _ current: String?,
        _ rule: TokenAnswerRule,
        _ form: [String: String],
        _ ctx: RequestContext
    ) -> String? {
        var claims: [String: JSONValue]
        if let current, let jwt = try? JWT(decoding: current), let c = jwt.claims.objectValue {
            claims = c
        } else {
            let now = Int64(ctx.now)
            let life = Int64(store.withLock { $0.config.lifetimes.idToken })
            claims = [
                "iss": .string("\(ctx.baseURL)/\(tenantID)/v2.0"), "aud": .string(form["client_id"] ?? ""),
                "tid": .string(tenantID), "ver": "2.0", "iat": .int(now), "nbf": .int(now), "exp": .int(now + life),
            ]
        }
        for k in rule.idTokenRemoveClaims { claims.removeValue(forKey: k) }
        for (k, v) in rule.idTokenClaims ?? [:] { claims[k] = v }
        return try? JWT.signRS256(claims: .object(claims), key: signingKey, kid: kid, extraHeader: rule.idTokenHeader)
    }

    // MARK: - Controls

    /// `token_answers` and `token_errors`: POST adds a rule, GET lists, DELETE clears.
    func tokenRuleControl(_ name: String, _ method: String, _ body: JSONValue) -> EmulatorResponse {
        func bad(_ why: String) -> EmulatorResponse {
            .json(["error": "invalid_request", "error_description": .string(why)], status: 400)
        }
        let answers = name == "token_answers"
        switch method {
        case "POST":
            do throws(JSONFieldError) {
                let id = store.withLock { s -> Int in
                    s.ruleSeq += 1
                    return s.ruleSeq
                }
                let rule: JSONValue
                if answers {
                    let r = try TokenAnswerRule(body, id: id)
                    store.withLock { $0.tokenAnswers.append(r) }
                    rule = r.json
                } else {
                    let r = try TokenErrorRule(body, id: id)
                    store.withLock { $0.tokenErrors.append(r) }
                    rule = r.json
                }
                return .json(["ok": true, "rule": rule])
            } catch {
                return bad(error.description)
            }
        case "GET":
            let list = store.withLock { s in answers ? s.tokenAnswers.map(\.json) : s.tokenErrors.map(\.json) }
            return .json([name: .array(list)])
        case "DELETE":
            store.withLock { s in
                if answers { s.tokenAnswers.removeAll() } else { s.tokenErrors.removeAll() }
            }
            return .json(["ok": true])
        default:
            return .json(["error": "method_not_allowed"], status: 405)
        }
    }
}
