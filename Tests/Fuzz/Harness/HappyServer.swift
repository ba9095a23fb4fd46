// A scripted Entra native-auth server for the fuzz targets: every endpoint the library calls, every flow, answered
// at once and without state of its own — what a flow has done so far travels in the continuation tokens it hands out
// ("CT-SECRET-<kind>-<step>"). Usernames choose the account kind: "otp…" signs in with a code, "mfa…" needs MFA,
// "reg…" must register a method, "nort…" gets no refresh token, "missing…" does not exist, "exists…" cannot sign up.
// Passwords "wrong" and "weak", codes "00000000", contacts "blocked…" and "pre…", and the attribute value "bad" are
// refused or special as their names say.
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthTestSupport

enum HappyServer {
    static let origin = "http://127.0.0.1:5000"
    static let authority = origin + "/contoso.onmicrosoft.com"
    static let apiURL = origin + "/api/todolist"

    /// A FakeTransport that answers every request as this server.
    static func transport() -> FakeTransport {
        let t = FakeTransport()
        t.on("", { request, form in answer(request, form) })
        return t
    }

    /// A FakeTransport that answers as the app's API: a 401 that asks for a new token under /unauthorized, else a
    /// small JSON answer (whatever the URL, so an API call never reaches this server's flows).
    static func apiTransport() -> FakeTransport {
        let t = FakeTransport()
        t.on("", { request, _ in api(request) })
        return t
    }

    static func api(_ request: HTTPRequest) -> Result<HTTPResponse, HTTPError> {
        if request.url.prefix(while: { $0 != "?" }).hasSuffix("/unauthorized") {
            return json(
                ["error": "invalid_token"],
                status: 401,
                headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)]
            )
        }
        return json(["ok": true, "method": .string(request.method)])
    }

    static func answer(_ request: HTTPRequest, _ f: [String: String]) -> Result<HTTPResponse, HTTPError> {
        let path = String(request.url.prefix { $0 != "?" })
        let ct = f["continuation_token"] ?? ""
        let kind = ct.split(separator: "-").dropFirst(2).first.map(String.init) ?? "pw"
        func at(_ suffix: String) -> Bool { path.hasSuffix(suffix) }

        if at("/v2.0/.well-known/openid-configuration") {
            return json([
                "issuer": .string(authority + "/v2.0"), "token_endpoint": .string(authority + "/oauth2/v2.0/token"),
            ])
        }
        // Sign-in
        if at("/oauth2/v2.0/initiate") {
            let user = f["username"] ?? ""
            if user.hasPrefix("missing") { return failure("user_not_found", codes: [50034]) }
            return next(Self.kind(of: user), "start")
        }
        if at("/oauth2/v2.0/challenge") {
            // A code for an OTP account, and for MFA: a chosen method (`id`), or without one the default method of
            // a flow past introspection (or resending to it).
            let mfa = ct.hasSuffix("-mfa-select") || (kind == "mfa" && ct.hasSuffix("-code"))
            if f["id"] != nil || kind == "otp" || mfa { return code(kind, "code", target: "o***a@fa****m.example") }
            return json(["continuation_token": token(kind, "password"), "challenge_type": "password"])
        }
        if at("/oauth2/v2.0/token") { return tokenAnswer(f, kind: kind) }
        if at("/oauth2/v2.0/introspect") { return methods(kind, "mfa-select") }
        // Strong-auth registration
        if at("/register/v1.0/introspect") { return methods(kind, "reg-select") }
        if at("/register/v1.0/challenge") {
            let target = f["challenge_target"] ?? ""
            if target.hasPrefix("blocked") {
                return failure("access_denied", sub: "provider_blocked_by_rep", codes: [])
            }
            if target.hasPrefix("pre") {
                return json(["continuation_token": token(kind, "preverified"), "challenge_type": "preverified"])
            }
            return code(kind, "reg-code", target: target, key: "challenge_target")
        }
        if at("/register/v1.0/continue") { return next(kind, "registered") }
        // Sign-up
        if at("/signup/v1.0/start") {
            if (f["username"] ?? "").hasPrefix("exists") { return failure("user_already_exists", codes: [1003037]) }
            return next(f["password"] == nil ? "su" : "supw", "start")
        }
        if at("/signup/v1.0/challenge") {
            if ct.hasSuffix("-verified") {
                return json(["continuation_token": token(kind, "password"), "challenge_type": "password"])
            }
            return code(kind, "code", target: "n***w@fa****m.example")
        }
        if at("/signup/v1.0/continue") { return signUpContinue(f, kind: kind) }
        // Password reset
        if at("/resetpassword/v1.0/start") {
            if (f["username"] ?? "").hasPrefix("missing") { return failure("user_not_found", codes: [50034]) }
            return next("rp", "start")
        }
        if at("/resetpassword/v1.0/challenge") { return code(kind, "code", target: "a***n@fa****m.example") }
        if at("/resetpassword/v1.0/continue") { return badCode(f) ?? next(kind, "verified") }
        if at("/resetpassword/v1.0/submit") {
            if f["new_password"] == "weak" {
                return failure("invalid_grant", sub: "password_too_weak", codes: [399246])
            }
            return json(["continuation_token": token(kind, "poll"), "poll_interval": 1])
        }
        if at("/resetpassword/v1.0/poll_completion") {
            return json(["continuation_token": token(kind, "done"), "status": "succeeded"])
        }
        return json(["error": "not_found"], status: 404)
    }

    static func kind(of user: String) -> String {
        for k in ["otp", "mfa", "reg", "nort"] where user.hasPrefix(k) { return k }
        return "pw"
    }

    static func token(_ kind: String, _ step: String) -> JSONValue { .string("CT-SECRET-\(kind)-\(step)") }

    static func next(_ kind: String, _ step: String) -> Result<HTTPResponse, HTTPError> {
        json(["continuation_token": token(kind, step)])
    }

    static func code(
        _ kind: String,
        _ step: String,
        target: String,
        key: String = "challenge_target_label"
    ) -> Result<HTTPResponse, HTTPError> {
        json([
            "continuation_token": token(kind, step), "challenge_type": "oob", "binding_method": "prompt",
            key: .string(target), "challenge_channel": "email", "code_length": 8, "interval": 300,
        ])
    }

    static func methods(_ kind: String, _ step: String) -> Result<HTTPResponse, HTTPError> {
        json([
            "continuation_token": token(kind, step),
            "methods": [
                [
                    "id": "email-1", "challenge_type": "oob", "challenge_channel": "email",
                    "login_hint": "m***e@fa****m.example",
                ],
                [
                    "id": "email-2", "challenge_type": "oob", "challenge_channel": "email",
                    "login_hint": "x***@y.example",
                ],
            ],
        ])
    }

    static func failure(
        _ error: String,
        sub: String? = nil,
        codes: [Int64],
        status: Int = 400,
        extra: [String: JSONValue] = [:]
    ) -> Result<HTTPResponse, HTTPError> {
        var o: [String: JSONValue] = [
            "error": .string(error), "error_description": .string("AADSTS\(codes.first ?? 0): scripted"),
            "error_codes": .array(codes.map { .int($0) }), "timestamp": "2026-01-01 00:00:00Z",
            "trace_id": "00000000-0000-0000-0000-000000000001",
            "correlation_id": "00000000-0000-0000-0000-000000000002",
        ]
        if let sub { o["suberror"] = .string(sub) }
        o.merge(extra) { _, new in new }
        return json(.object(o), status: status)
    }

    static func badCode(_ f: [String: String]) -> Result<HTTPResponse, HTTPError>? {
        f["oob"] == "00000000" ? failure("invalid_grant", sub: "invalid_oob_value", codes: [50181]) : nil
    }

    static func tokenAnswer(_ f: [String: String], kind: String) -> Result<HTTPResponse, HTTPError> {
        switch f["grant_type"] ?? "" {
        case "password":
            if f["password"] == "wrong" { return failure("invalid_grant", codes: [50126]) }
            if kind == "mfa" {
                return failure(
                    "invalid_grant",
                    sub: "mfa_required",
                    codes: [50076],
                    extra: ["continuation_token": token(kind, "mfa")]
                )
            }
            if kind == "reg" {
                return failure(
                    "invalid_grant",
                    sub: "registration_required",
                    codes: [50079],
                    extra: ["continuation_token": token(kind, "reg")]
                )
            }
            return tokens(f, kind: kind)
        case "oob", "mfa_oob":
            return badCode(f) ?? tokens(f, kind: kind)
        case "continuation_token", "refresh_token":
            return tokens(f, kind: kind)
        default:
            return failure("unsupported_grant_type", codes: [70003])
        }
    }

    static let clientInfo = Base64.urlEncode(Array(#"{"uid":"u1","utid":"t1"}"#.utf8))

    static func tokens(_ f: [String: String], kind: String) -> Result<HTTPResponse, HTTPError> {
        let oidc: Set<String> = ["openid", "profile", "offline_access"]
        let scope = (f["scope"] ?? "").split(separator: " ").filter { !oidc.contains(String($0)) }
        let claims: JSONValue = [
            "preferred_username": .string(f["username"] ?? "user@fabrikam.example"), "oid": "u1", "tid": "t1",
            "name": "Fuzz User", "ver": "2.0", "aud": .string(FuzzClient.clientID), "iss": .string(authority + "/v2.0"),
            "iat": .int(Int64(FuzzClock.start)), "exp": .int(Int64(FuzzClock.start) + 10 * 365 * 86400),
        ]
        let idToken = [#"{"alg":"none","typ":"JWT"}"#, claims.serialized(), "sig"]
            .map { Base64.urlEncode(Array($0.utf8)) }.joined(separator: ".")
        var o: [String: JSONValue] = [
            "token_type": "Bearer", "access_token": .string("AT-SECRET-\(f["grant_type"] ?? "")"),
            "expires_in": 3600, "scope": .string(scope.joined(separator: " ")), "client_info": .string(clientInfo),
            "id_token": .string(idToken),
        ]
        if kind != "nort" { o["refresh_token"] = .string("RT-SECRET-\(f["grant_type"] ?? "")") }
        return json(.object(o))
    }

    static func signUpContinue(_ f: [String: String], kind: String) -> Result<HTTPResponse, HTTPError> {
        switch f["grant_type"] ?? "" {
        case "oob":
            if let bad = badCode(f) { return bad }
            if kind == "supw" { return attributesRequired(kind) }
            return failure(
                "credential_required",
                codes: [55103],
                extra: ["continuation_token": token(kind, "verified")]
            )
        case "password":
            if f["password"] == "weak" { return failure("invalid_grant", sub: "password_too_weak", codes: [399246]) }
            return attributesRequired(kind)
        case "attributes":
            if has(f["attributes"] ?? "", "\"bad\"") {
                return failure(
                    "invalid_grant",
                    sub: "attribute_validation_failed",
                    codes: [550105],
                    extra: ["invalid_attributes": [["name": "postalCode"]]]
                )
            }
            return next(kind, "done")
        default:
            return failure("unsupported_grant_type", codes: [70003])
        }
    }

    static func attributesRequired(_ kind: String) -> Result<HTTPResponse, HTTPError> {
        failure(
            "attributes_required",
            codes: [55106],
            extra: [
                "continuation_token": token(kind, "attributes"),
                "required_attributes": [
                    ["name": "displayName", "type": "string", "required": true],
                    ["name": "postalCode", "type": "string", "required": false, "options": ["regex": "^[0-9]{5}$"]],
                ],
            ]
        )
    }
}
