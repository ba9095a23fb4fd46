import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// The generic OpenID Connect provider under `/oidc`: unlike Entra on purpose.
@Suite struct GenericOIDCTests {
    let oidcClient = "nativeauth-oidc-demo"
    let scope = "openid profile email offline_access todolist.read notes.read"

    func issuer(_ h: Harness) -> String { h.base + "/oidc" }

    func token(_ h: Harness, _ fields: [String: String]) async throws -> Harness.Reply {
        var f = fields.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }
        if fields["client_id"] == nil { f.append(("client_id", oidcClient)) }
        return try await h.send(.form(url: h.base + "/oidc/token", fields: f))
    }

    /// Signs `user` in through the provider's page and redeems the code.
    func signIn(
        _ h: Harness,
        _ b: PageClient,
        _ email: String,
        password: String?,
        scope: String? = nil,
        _ extra: [(String, String)] = []
    ) async throws -> Harness.Reply {
        let page = try await b.get(
            b.authorizeURL(issuer(h) + "/authorize", clientID: oidcClient, scope: scope ?? self.scope, extra)
        )
        try expect(page.page == "sign_in", "sign-in page: \(page.text)")
        var done: Harness.Reply
        if let password {
            done = try await b.submit(page, [("username", email), ("password", password)])
        } else {
            let code = try await b.submit(page, [("username", email), ("action", "send_code")])
            done = try await b.submit(code, [("code", try await h.lastCode(email))])
        }
        let r = done.authorizationResponse
        try expect(r["iss"] == issuer(h) && r["client_info"] == nil && r["state"] == "st-1", "response: \(r)")
        return try await token(
            h,
            [
                "grant_type": "authorization_code", "code": r["code"] ?? "", "redirect_uri": b.redirect,
                "code_verifier": b.verifier,
            ]
        )
    }

    @Test func discoveryAndKeys() async throws {
        try await withEmulator { h in
            let d = try await h.get("/oidc/.well-known/openid-configuration")
            let i = issuer(h)
            #expect(d.string["issuer"] == i && d["authorization_response_iss_parameter_supported"] == true)
            for (key, path) in [
                ("authorization_endpoint", "/authorize"), ("token_endpoint", "/token"),
                ("device_authorization_endpoint", "/device_authorization"), ("userinfo_endpoint", "/userinfo"),
                ("end_session_endpoint", "/logout"), ("revocation_endpoint", "/revoke"), ("jwks_uri", "/jwks"),
            ] {
                #expect(d.string[key] == i + path, "\(key)")
            }
            let oidcKid = try await h.get("/oidc/jwks")["keys"]?.arrayValue?.first?["kid"]
            let entraKid = try await h.get("/contoso.onmicrosoft.com/discovery/v2.0/keys")["keys"]?.arrayValue?.first?[
                "kid"
            ]
            #expect(oidcKid != nil && oidcKid != entraKid)
            let ready = h.server.readyDocument["oidc"]
            #expect(ready?["issuer"] == .string(i) && ready?["client_id"] == .string(oidcClient))
            #expect(ready?["apis"]?.arrayValue?.first?["scopes"] == ["todolist.read", "todolist.readwrite"])
            #expect(ready?["users"]?.arrayValue?.dropFirst().first?["preferred_username"] == .null)  // olivia
        }
    }

    @Test func codeFlowTokensUserinfoAndAPIs() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let tok = try await signIn(h, b, ann.0, password: ann.1)
            #expect(tok.status == 200 && tok["client_info"] == nil && tok["ext_expires_in"] == nil)
            let at = try #require(tok.string["access_token"])
            #expect(at.split(separator: ".").count == 1)  // opaque
            let claims = try await verifiedClaims(tok.string["id_token"] ?? "", jwksURL: issuer(h) + "/jwks", h)
            #expect(claims["iss"] == .string(issuer(h)) && claims["aud"] == .string(oidcClient))
            #expect(claims["nbf"] == nil && claims["nonce"] == "n-1" && claims["auth_time"] != nil)
            #expect(claims["preferred_username"] == "ann" && claims["email"] == .string(ann.0))
            let sub = try #require(claims["sub"]?.stringValue)
            #expect(!sub.contains("@") && sub != "11110000-aaaa-4bbb-8ccc-000000000001")
            #expect(h.server.readyDocument["oidc"]?["users"]?.arrayValue?.first?["sub"] == .string(sub))
            // One opaque token for both APIs.
            for api in ["/api/todolist", "/api/notes"] {
                let r = try await h.get(api, headers: [("Authorization", "Bearer " + at)])
                #expect(r.status == 200 && r["user"] == .string(ann.0), "\(api): \(r.text)")
            }
            #expect(try await h.get("/api/todolist", headers: [("Authorization", "Bearer oat_nope")]).status == 401)
            let info = try await h.get("/oidc/userinfo", headers: [("Authorization", "Bearer " + at)])
            #expect(info["sub"] == .string(sub) && info["email"] == .string(ann.0) && info["name"] == "Ann Example")
            let bad = try await h.get("/oidc/userinfo", headers: [("Authorization", "Bearer x")])
            #expect(bad.status == 401 && bad.response.body.isEmpty)
            #expect(bad.response.header("www-authenticate")?.contains("invalid_token") == true)
            // olivia (email code) has no preferred_username.
            let b2 = try PageClient(h)
            let o = try await signIn(h, b2, olivia, password: nil)
            let oc = try JWT(decoding: o.string["id_token"] ?? "").claims
            #expect(oc["preferred_username"] == nil && oc["email"] == .string(olivia))
        }
    }

    @Test func refreshRotationNarrowingAndNoWidening() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let first = try await signIn(h, b, ann.0, password: ann.1, scope: "openid offline_access todolist.read")
            let rt1 = try #require(first.string["refresh_token"])
            // Narrower: fine; the refreshed ID token has no nonce.
            let r2 = try await token(
                h,
                ["grant_type": "refresh_token", "refresh_token": rt1, "scope": "openid todolist.read"]
            )
            #expect(r2.status == 200 && r2["scope"] == "openid todolist.read")
            #expect(try JWT(decoding: r2.string["id_token"] ?? "").claims["nonce"] == nil)
            let rt2 = try #require(r2.string["refresh_token"])
            // Wider than the grant: invalid_scope, and the refresh token is not spent.
            let wide = try await token(
                h,
                ["grant_type": "refresh_token", "refresh_token": rt2, "scope": "openid todolist.read notes.read"]
            )
            #expect(wide.status == 400 && wide["error"] == "invalid_scope" && wide["error_codes"] == nil)
            // No scope: the whole grant, offline_access included (rotation continues).
            let r3 = try await token(h, ["grant_type": "refresh_token", "refresh_token": rt2])
            #expect(r3["scope"] == "openid offline_access todolist.read")
            // Reuse of rt1: the family is revoked.
            let reuse = try await token(h, ["grant_type": "refresh_token", "refresh_token": rt1])
            #expect(reuse.status == 400 && reuse["error"] == "invalid_grant")
            let after = try await token(
                h,
                ["grant_type": "refresh_token", "refresh_token": r3.string["refresh_token"] ?? ""]
            )
            #expect(after["error"] == "invalid_grant")
            // With id_token_on_refresh off, refresh answers carry no ID token.
            _ = try await h.control("POST", "settings", ["oidc_id_token_on_refresh": false])
            let again = try await signIn(h, b, ann.0, password: ann.1, [("prompt", "login")])
            let r4 = try await token(
                h,
                ["grant_type": "refresh_token", "refresh_token": again.string["refresh_token"] ?? ""]
            )
            #expect(r4.status == 200 && r4["id_token"] == nil)
        }
    }

    @Test func errorsWithEmptyBodies() async throws {
        try await withEmulator { h in
            let unknown = try await token(
                h,
                ["client_id": "someone-else", "grant_type": "refresh_token", "refresh_token": "x"]
            )
            #expect(unknown.status == 401 && unknown.response.body.isEmpty)
            let device = try await h.send(
                .form(url: h.base + "/oidc/device_authorization", fields: [("scope", "openid")])
            )
            #expect(device.status == 401 && device.response.body.isEmpty)
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/oidc/token", "status": 400, "body": "", "content_type": ""]
            )
            let empty = try await token(h, ["grant_type": "refresh_token", "refresh_token": "x"])
            #expect(empty.status == 400 && empty.response.body.isEmpty && empty.response.header("content-type") == nil)
            let plain = try await token(h, ["grant_type": "refresh_token", "refresh_token": "x"])
            #expect(plain.string.keys.sorted() == ["error", "error_description"] && plain["error"] == "invalid_grant")
        }
    }

    @Test func deviceCodeWithoutOpenIDThenUserinfo() async throws {
        var config = EmulatorConfig.demo
        config.deviceCodeInterval = 30
        try await withEmulator(config: config) { h in
            let dc = try await h.send(
                .form(
                    url: h.base + "/oidc/device_authorization",
                    fields: [("client_id", oidcClient), ("scope", "todolist.read offline_access")]
                )
            )
            #expect(dc.status == 200 && dc["message"] == nil)
            let device = try #require(dc.string["device_code"])
            let userCode = try #require(dc.string["user_code"])
            #expect(dc.string["verification_uri"] == issuer(h) + "/device")
            let complete = try #require(dc.string["verification_uri_complete"])
            #expect(complete == issuer(h) + "/device?user_code=" + userCode)
            let grant = "urn:ietf:params:oauth:grant-type:device_code"
            #expect(
                try await token(h, ["grant_type": grant, "device_code": device])["error"] == "authorization_pending"
            )
            #expect(try await token(h, ["grant_type": grant, "device_code": device])["error"] == "slow_down")
            // The verification page, opened at verification_uri_complete, has the code filled in.
            let b = try PageClient(h)
            let page = try await b.get(complete)
            #expect(page.page == "device" && page.text.contains("value=\"\(userCode)\""))
            let done = try await b.submit(page, [("user_code", userCode), ("username", ann.0), ("password", ann.1)])
            #expect(done.page == "device_done")
            let tok = try await token(h, ["grant_type": grant, "device_code": device])
            #expect(tok.status == 200 && tok["id_token"] == nil && tok["refresh_token"] != nil)
            let info = try await h.get(
                "/oidc/userinfo",
                headers: [("Authorization", "Bearer " + (tok.string["access_token"] ?? ""))]
            )
            #expect(info.status == 200 && info["email"] == .string(ann.0) && info["sub"] != nil && info["name"] != nil)
            // Denied on the page: access_denied (RFC 8628), and a message when the setting asks for one.
            _ = try await h.control("POST", "settings", ["oidc_device_message": true])
            let dc2 = try await h.send(
                .form(
                    url: h.base + "/oidc/device_authorization",
                    fields: [("client_id", oidcClient), ("scope", "openid")]
                )
            )
            #expect(dc2["message"] != nil)
            let denyPage = try await b.get(dc2.string["verification_uri_complete"] ?? "")
            #expect(
                try await b.submit(denyPage, [("user_code", dc2.string["user_code"] ?? ""), ("action", "deny")]).page
                    == "device_denied"
            )
            let denied = try await token(h, ["grant_type": grant, "device_code": dc2.string["device_code"] ?? ""])
            #expect(denied["error"] == "access_denied")
            // The approve control takes the user code as shown (with its dash).
            let dc3 = try await h.send(
                .form(
                    url: h.base + "/oidc/device_authorization",
                    fields: [("client_id", oidcClient), ("scope", "openid")]
                )
            )
            let approved = try await h.control(
                "POST",
                "device/approve",
                ["user_code": .string(dc3.string["user_code"] ?? ""), "email": .string(olivia)]
            )
            #expect(approved["ok"] == true)
            _ = try await h.control("POST", "clock", ["advance_seconds": 31])
            let tok3 = try await token(h, ["grant_type": grant, "device_code": dc3.string["device_code"] ?? ""])
            #expect(tok3.status == 200 && tok3["id_token"] != nil)
        }
    }

    @Test func promptsFormPostAndIss() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let url = { (extra: [(String, String)]) in
                b.authorizeURL(self.issuer(h) + "/authorize", clientID: self.oidcClient, scope: "openid", extra)
            }
            let none = try await b.get(url([("prompt", "none"), ("response_mode", "form_post")]))
            #expect(none.status == 200 && none.text.contains("id=\"form_post\""))
            #expect(
                none.authorizationResponse["error"] == "login_required"
                    && none.authorizationResponse["iss"] == issuer(h)
            )
            let page = try await b.get(url([("response_mode", "form_post")]))
            let r = try await b.submit(page, [("username", ann.0), ("password", ann.1)]).authorizationResponse
            #expect(r["code"] != nil && r["iss"] == issuer(h) && r["state"] == "st-1")
            #expect(b.cookies["naemu_oidc_session"] != nil && b.cookies["naemu_session"] == nil)
            let silent = try await b.get(url([("prompt", "none")]))
            #expect(silent.status == 302 && silent.authorizationResponse["iss"] == issuer(h))
            // An id_token_hint names the account like login_hint does; a bad one matches nobody.
            let idToken =
                try await token(
                    h,
                    [
                        "grant_type": "authorization_code", "code": silent.authorizationResponse["code"] ?? "",
                        "redirect_uri": b.redirect, "code_verifier": b.verifier,
                    ]
                ).string["id_token"] ?? ""
            #expect(
                try await b.get(url([("prompt", "none"), ("id_token_hint", idToken)])).authorizationResponse["code"]
                    != nil
            )
            let badHint = try await b.get(url([("prompt", "none"), ("id_token_hint", "x.y.z")]))
            #expect(badHint.authorizationResponse["error"] == "login_required")
            // The Entra tenant does not share the generic provider's browser session.
            let entra = try await b.get(
                b.authorizeURL(h.authority + "/oauth2/v2.0/authorize", clientID: h.clientID, [("prompt", "none")])
            )
            #expect(entra.authorizationResponse["error"] == "login_required")
            // Entra-style scopes and clients are not known here.
            let foreign = try await b.get(
                b.authorizeURL(issuer(h) + "/authorize", clientID: oidcClient, scope: todoRead)
            )
            #expect(foreign.authorizationResponse["error"] == "invalid_scope")
            #expect(try await b.get(b.authorizeURL(issuer(h) + "/authorize", clientID: h.clientID)).page == "error")
        }
    }

    @Test func revocationAndEndSession() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let tok = try await signIn(h, b, ann.0, password: ann.1)
            let at = tok.string["access_token"] ?? ""
            let revoke = try await h.send(
                .form(
                    url: h.base + "/oidc/revoke",
                    fields: [("client_id", oidcClient), ("token", tok.string["refresh_token"] ?? "")]
                )
            )
            #expect(revoke.status == 200 && revoke.response.body.isEmpty)
            #expect(
                try await token(
                    h,
                    ["grant_type": "refresh_token", "refresh_token": tok.string["refresh_token"] ?? ""]
                )["error"] == "invalid_grant"
            )
            #expect(try await h.get("/api/todolist", headers: [("Authorization", "Bearer " + at)]).status == 401)
            // RP-initiated logout: with id_token_hint the client is known, so the redirect is honoured.
            let idToken = tok.string["id_token"] ?? ""
            let out = try await b.get(
                issuer(h) + "/logout?id_token_hint=\(idToken)&post_logout_redirect_uri="
                    + FormEncoding.component("http://127.0.0.1:9/out") + "&state=z"
            )
            #expect(out.status == 302 && out.response.header("location") == "http://127.0.0.1:9/out?state=z")
            #expect(b.cookies["naemu_oidc_session"] == nil)
            let log = try #require(
                try await h.control("GET", "end_session_log?idp=oidc")["requests"]?.arrayValue?.first
            )
            #expect(
                log["id_token_hint"] == "valid" && log["id_token_hint_user"] == .string(ann.0) && log["idp"] == "oidc"
            )
            // Without client_id or id_token_hint the provider does not redirect.
            let anon = try await h.get(
                issuer(h) + "/logout?post_logout_redirect_uri=" + FormEncoding.component("http://127.0.0.1:9/out")
            )
            #expect(anon.status == 200 && anon.page == "signed_out")
        }
    }
}
