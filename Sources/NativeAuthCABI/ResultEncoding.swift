import NativeAuthCore
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON

/// Typed results → documents. `"v"`, `"status"` and the error document are written here and nowhere else (a flow's
/// status as `FlowStatus.name` spells it: the one spelling, which traces use too).
enum Encode {
    static func flow(_ r: FlowResult) -> JSONValue {
        var o: [String: JSONValue] = [
            "v": 1, "flow_type": .string(r.flowType.rawValue), "status": .string(r.status.name),
        ]
        if let flow = r.flow { o["flow"] = .string(flow.rawValue) }
        switch r.status {
        case .signedIn(let account, let token):
            o["account"] = Encode.account(account, includeIDToken: false)
            o["token"] = .object(Encode.tokenMembers(token, fromCache: false))
        case .codeRequired(let c):
            o["sent_to"] = .string(c.sentTo)
            o["channel"] = .string(c.channel)
            o["code_length"] = .int(c.codeLength)
            if let interval = c.resendInterval { o["resend_interval"] = .int(interval) }
        case .passwordRequired, .signUpCompleted, .passwordResetCompleted:
            break
        case .attributesRequired(let list):
            o["required_attributes"] = .array(
                list.map { a in
                    var m: [String: JSONValue] = [
                        "name": .string(a.name), "type": .string(a.type), "required": .bool(a.required),
                    ]
                    if let r = a.regex { m["regex"] = .string(r) }
                    return .object(m)
                }
            )
        case .mfaRequired(let methods), .registrationRequired(let methods):
            o["methods"] = .array(methods.map(method))
        case .browserPending(let p):
            o["authorization_url"] = .string(p.authorizationURL)
            o["redirect_uri"] = .string(p.redirectURI)
            o["expires_in"] = .int(p.expiresIn)
        case .deviceCodeRequired(let d):
            o["user_code"] = .string(d.userCode)
            o["verification_uri"] = .string(d.verificationURI)
            if let c = d.verificationURIComplete { o["verification_uri_complete"] = .string(c) }
            o["expires_in"] = .int(d.expiresIn)
            o["interval"] = .int(d.interval)
            o["message"] = .string(d.message)
        }
        return .object(o)
    }

    static func method(_ m: AuthMethod) -> JSONValue {
        var o: [String: JSONValue] = ["id": .string(m.id)]
        if let c = m.channel { o["channel"] = .string(c) }
        if let h = m.loginHint { o["login_hint"] = .string(h) }
        if let t = m.challengeType { o["challenge_type"] = .string(t) }
        return .object(o)
    }

    static func cancelled() -> JSONValue { ["v": 1, "status": "cancelled"] }

    static func account(_ a: Account, includeIDToken: Bool) -> JSONValue {
        var o: [String: JSONValue] = [
            "username": .string(a.username), "home_account_id": .string(a.homeAccountID),
            "tenant_id": .string(a.tenantID), "environment": .string(a.environment), "claims": a.claims,
        ]
        if includeIDToken, let t = a.idToken { o["id_token"] = .string(t) }
        return .object(o)
    }

    static func accountResult(_ a: Account, includeIDToken: Bool) -> JSONValue {
        ["v": 1, "account": account(a, includeIDToken: includeIDToken)]
    }

    static func tokenMembers(_ t: AccessToken, fromCache: Bool) -> [String: JSONValue] {
        [
            "access_token": .string(t.value.unsafeExposed), "token_type": .string(t.tokenType),
            "scopes": .array(t.scopes.map { .string($0) }), "expires_on": .int(wholeSeconds(t.expiresOn)),
            "from_cache": .bool(fromCache),
        ]
    }

    /// `na_get_access_token`'s answer.
    static func token(_ r: TokenResult) -> Answer { token(r.token, fromCache: r.fromCache) }

    static func token(_ t: AccessToken, fromCache: Bool) -> Answer {
        var o = tokenMembers(t, fromCache: fromCache)
        o["v"] = 1
        return .document(.object(o))
    }

    /// A token's answer as bytes, for the calling thread's memo of cached answers (`RequestMemo`); wiped by the
    /// memo when replaced.
    static func rendered(_ t: AccessToken, fromCache: Bool) -> [UInt8]? {
        guard case .document(let doc) = token(t, fromCache: fromCache) else { return nil }
        return doc.serializedBytes()
    }

    static func signedOut(_ r: NativeAuthClient.SignOutResult) -> JSONValue {
        var o: [String: JSONValue] = [
            "v": 1, "status": "signed_out", "was_signed_in": .bool(!r.removed.isEmpty),
            "accounts": .array(r.removed.map { .string($0.homeAccountID) }),
        ]
        if let url = r.endSessionURL {
            o["end_session_url"] = .string(url)
            o["browser_opened"] = .bool(r.browserOpened)
        }
        return .object(o)
    }

    static func accounts(_ list: [Account], includeIDToken: Bool) -> JSONValue {
        ["v": 1, "accounts": .array(list.map { account($0, includeIDToken: includeIDToken) })]
    }

    /// An API's answer: the body parsed when it is JSON, else text, else base64.
    static func apiResponse(_ r: APIResponse) -> JSONValue {
        var o: [String: JSONValue] = ["v": 1, "status": .int(Int64(r.status))]
        var h: [String: JSONValue] = [:]
        for (name, value) in r.headers {
            h[name] = h[name].map { .string(($0.stringValue ?? "") + ", " + value) } ?? .string(value)
        }
        o["headers"] = .object(h)
        let contentType = r.headers.first(where: { $0.name == "content-type" })?.value.lowercased() ?? ""
        let tooDeep = JSONDepth.exceeds(r.body)
        if contentType.contains("json"), !tooDeep, let parsed = try? JSONValue.parse(r.body) {
            o["body"] = parsed
        } else if let text = String(validating: r.body, as: UTF8.self) {
            // JSON nested deeper than JSONDepth.limit is passed on as text, flagged, rather than parsed (a deep text
            // that cannot be JSON anyway is text, unflagged; neither is ever given to a recursive parser).
            if contentType.contains("json") && tooDeep && JSONDepth.shape(r.body) == .tooDeep {
                o["body_too_deep"] = true
            }
            o["body"] = .string(text)
        } else {
            o["body_base64"] = .string(Base64.encode(r.body))
        }
        return .object(o)
    }

    /// `na_parse_www_authenticate`'s answer: `{"v":1,"challenges":[{"scheme","params","token68"?,"claims"?}…],
    /// "claims"?}`.
    static func wwwAuthenticate(_ w: WWWAuthenticate) -> JSONValue {
        var o: [String: JSONValue] = [
            "v": 1,
            "challenges": .array(
                w.challenges.map { c in
                    var m: [String: JSONValue] = [
                        "scheme": .string(c.scheme), "params": .object(c.params.mapValues { .string($0) }),
                    ]
                    if let t = c.token68 { m["token68"] = .string(t) }
                    if let claims = c.claims { m["claims"] = .string(claims) }
                    return .object(m)
                }
            ),
        ]
        if let claims = w.claims { o["claims"] = .string(claims) }
        return .object(o)
    }

    /// `{"v":1,"error":{"code","message","server"?,…}}`
    static func error(_ e: NativeAuthError) -> JSONValue {
        var o: [String: JSONValue] = ["code": .string(e.code.rawValue), "message": .string(e.message)]
        if let s = e.server { o["server"] = server(s) }
        if let f = e.field { o["field"] = .string(f) }
        if let f = e.flow { o["flow"] = .string(f.rawValue) }
        if let x = e.expected { o["expected"] = .string(x.rawValue) }
        if let r = e.reason { o["reason"] = .string(r) }
        if let a = e.attributes { o["attributes"] = .array(a.map { .string($0) }) }
        if let r = e.redirectReason { o["redirect_reason"] = .string(r) }
        if let d = e.declined { o["declined"] = .array(d.map { .string($0) }) }
        if let g = e.granted { o["granted"] = .array(g.map { .string($0) }) }
        if let r = e.retryAfterSeconds { o["retry_after_s"] = .int(Int64(r)) }
        if let a = e.accounts { o["accounts"] = .array(a.map { account($0, includeIDToken: false) }) }
        if let h = e.loginHint { o["login_hint"] = .string(h) }
        if let c = e.claims { o["claims"] = .string(c) }
        if let u = e.authorizationURL { o["authorization_url"] = .string(u) }
        return ["v": 1, "error": .object(o)]
    }

    static func server(_ d: ServerErrorDetails) -> JSONValue {
        var o: [String: JSONValue] = [:]
        if let error = d.error { o["error"] = .string(error) }
        if let suberror = d.suberror { o["suberror"] = .string(suberror) }
        if !d.errorCodes.isEmpty { o["error_codes"] = .array(d.errorCodes.map { .int($0) }) }
        if let c = d.correlationID { o["correlation_id"] = .string(c) }
        if let t = d.traceID { o["trace_id"] = .string(t) }
        if let s = d.httpStatus { o["http_status"] = .int(Int64(s)) }
        if let r = d.retryAfter { o["retry_after"] = .string(r) }
        return .object(o)
    }
}

/// A time in whole seconds, never trapping (NaN and out-of-range values are clamped).
func wholeSeconds(_ t: Double) -> Int64 {
    guard t.isFinite else { return 0 }
    if t >= 9.2e18 { return Int64.max }
    if t <= -9.2e18 { return Int64.min }
    return Int64(t.rounded(.down))
}
