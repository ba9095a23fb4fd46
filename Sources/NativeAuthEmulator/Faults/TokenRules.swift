import NativeAuthCrypto
import NativeAuthJSON
import Synchronization

/// Fault injection at `/oauth2/v2.0/token`: errors for chosen scopes or grants (`token_errors`), answered before the
/// grant is processed, and rewritten successful answers (`token_answers`). A leaf lock (it counts after unlocking).
final class TokenRules: Sendable {
    private struct State {
        var answers: [TokenAnswerRule] = []
        var errors: [TokenErrorRule] = []
        var ruleSeq = 0
    }

    private let state = Mutex(State())
    let directory: Directory
    let minter: TokenMinter
    let counters: Counters

    init(directory: Directory, minter: TokenMinter, counters: Counters) {
        self.directory = directory
        self.minter = minter
        self.counters = counters
    }

    func reset() { state.withLock { $0 = State() } }

    // MARK: - Token errors

    /// The error a `token_errors` rule answers for this token request, if one matches (consumes one use).
    func injectedError(_ form: [String: String], grant: String, _ ctx: RequestContext) -> ServiceError? {
        let scopes = Set((form["scope"] ?? "").split(separator: " ").map { $0.lowercased() })
        let found = state.withLock { s -> TokenErrorRule? in
            guard let i = s.errors.firstIndex(where: { $0.matches(scopes: scopes, grant: grant) }) else { return nil }
            let rule = s.errors[i]
            if let left = rule.remaining {
                if left <= 1 { s.errors.remove(at: i) } else { s.errors[i].remaining = left - 1 }
            }
            return rule
        }
        guard let rule = found else { return nil }
        counters.add(.tokenErrorsInjected)
        let text: String
        if let d = rule.description {
            text = d
        } else if let code = rule.codes.first {
            text = ServiceError.injectedDescription(
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

    // MARK: - Token answers

    /// Rewrites a successful token answer as the next matching `token_answers` rule says (consumes one use). The
    /// tokens the emulator stored are untouched: only what the client reads changes.
    func tamper(
        _ answer: EmulatorResponse,
        grant: String,
        _ form: [String: String],
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        guard answer.status == 200, case .object(var o)? = try? JSONValue.parse(answer.body), o["access_token"] != nil
        else { return answer }
        let found = state.withLock { s -> TokenAnswerRule? in
            guard let i = s.answers.firstIndex(where: { r in r.grantType.map { sameGrant($0, grant) } ?? true })
            else { return nil }
            let rule = s.answers[i]
            if rule.remaining <= 1 { s.answers.remove(at: i) } else { s.answers[i].remaining -= 1 }
            return rule
        }
        guard let rule = found else { return answer }
        counters.add(.tokenAnswersRewritten)
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

    /// The answer's ID token (or, when it has none, a fresh one for the same client) with claims replaced, signed
    /// again with the tenant's key (same `kid`).
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
            let life = Int64(directory.config.lifetimes.idToken)
            claims = [
                "iss": .string(minter.issuer(.entra, baseURL: ctx.baseURL)), "aud": .string(form["client_id"] ?? ""),
                "tid": .string(minter.tenantID), "ver": "2.0", "iat": .int(now), "nbf": .int(now),
                "exp": .int(now + life),
            ]
        }
        for k in rule.idTokenRemoveClaims { claims.removeValue(forKey: k) }
        for (k, v) in rule.idTokenClaims ?? [:] { claims[k] = v }
        return try? minter.entraKey.sign(.object(claims), extraHeader: rule.idTokenHeader)
    }

    // MARK: - Controls

    /// `POST token_answers|token_errors`: adds a rule (its id is taken even when the document is refused).
    func add(_ name: String, _ body: JSONValue) -> EmulatorResponse {
        let id = state.withLock { s -> Int in
            s.ruleSeq += 1
            return s.ruleSeq
        }
        do throws(JSONFieldError) {
            let rule: JSONValue
            if name == "token_answers" {
                let r = try TokenAnswerRule(body, id: id)
                state.withLock { $0.answers.append(r) }
                rule = r.json
            } else {
                let r = try TokenErrorRule(body, id: id)
                state.withLock { $0.errors.append(r) }
                rule = r.json
            }
            return .json(["ok": true, "rule": rule])
        } catch {
            return .badControlRequest(error.description)
        }
    }

    /// `GET token_answers|token_errors`.
    func list(_ name: String) -> EmulatorResponse {
        let list = state.withLock { s in name == "token_answers" ? s.answers.map(\.json) : s.errors.map(\.json) }
        return .json([name: .array(list)])
    }

    /// `DELETE token_answers|token_errors`.
    func clear(_ name: String) {
        state.withLock { s in
            if name == "token_answers" { s.answers.removeAll() } else { s.errors.removeAll() }
        }
    }
}
