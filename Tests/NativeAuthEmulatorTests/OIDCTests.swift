import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import Testing

@Suite struct OIDCTests {
    @Test func discoveryDocument() async throws {
        try await withEmulator { h in
            for tenant in ["contoso.onmicrosoft.com", "aaaabbbb-0000-cccc-1111-dddd2222eeee"] {
                let d = try await h.get("/\(tenant)/v2.0/.well-known/openid-configuration")
                #expect(d.status == 200)
                for key in [
                    "issuer", "authorization_endpoint", "token_endpoint", "jwks_uri", "end_session_endpoint",
                    "device_authorization_endpoint", "response_modes_supported",
                ] {
                    #expect(d[key] != nil, "\(key)")
                }
                #expect(d.string["token_endpoint"] == "\(h.base)/\(tenant)/oauth2/v2.0/token")
            }
            #expect(try await h.get("/other.onmicrosoft.com/v2.0/.well-known/openid-configuration").status == 404)
        }
    }

    @Test func refreshRotationWithReuseDetection() async throws {
        try await withEmulator { h in
            let first = try await h.passwordSignIn(ann.0, ann.1)
            let rt1 = try #require(first.string["refresh_token"])
            let r2 = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "grant_type": "refresh_token", "refresh_token": rt1,
                    "scope": "\(notesRead) openid profile offline_access", "client_info": "1",
                ]
            )
            #expect(r2.status == 200)
            let rt2 = try #require(r2.string["refresh_token"])
            #expect(rt2 != rt1)
            #expect(try JWT(decoding: r2.string["access_token"] ?? "").claims["scp"] == "Notes.Read")
            // replaying rt1 is detected and revokes the family, rt2 included
            let replay = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": "refresh_token", "refresh_token": rt1, "scope": "openid offline_access"]
            )
            #expect(replay["error"] == "invalid_grant" && replay["error_codes"] == [50173])
            let after = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": "refresh_token", "refresh_token": rt2, "scope": "openid offline_access"]
            )
            #expect(after["error"] == "invalid_grant")
            let counters = try await h.control("GET", "counters")
            #expect(counters["refresh_token_reuse_detected"] == 1)
        }
    }

    @Test func refreshErrors() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            let unknown = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": "refresh_token", "refresh_token": "RT.nope", "scope": "openid"]
            )
            #expect(unknown["error"] == "invalid_grant")
            let scope = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": "refresh_token", "refresh_token": rt, "scope": "api://unknown/x"]
            )
            #expect(scope["error"] == "invalid_scope")
            _ = try await h.control("POST", "users/revoke", ["email": "ann@contoso.com"])
            let revoked = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": "refresh_token", "refresh_token": rt, "scope": "openid"]
            )
            #expect(revoked["error"] == "invalid_grant" && revoked["error_codes"] == [50173])
            let rt2 = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.control("POST", "clock", ["advance_seconds": 86_401])
            let expired = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": "refresh_token", "refresh_token": rt2, "scope": "openid"]
            )
            #expect(expired["error_codes"] == [700082])
        }
    }

    /// Drives the HTML page like a browser: GET authorize, POST the form, follow the redirect's query by hand.
    @Test func authorizationCodeWithPKCEThroughTheHTMLForm() async throws {
        try await withEmulator { h in
            let verifier = try PKCE.makeVerifier()
            let redirect = "http://127.0.0.1:53124/callback"
            func authorizeURL(_ extra: [(String, String)] = []) -> String {
                let q =
                    [
                        ("client_id", h.clientID), ("response_type", "code"), ("redirect_uri", redirect),
                        ("scope", "\(todoRead) openid profile offline_access"), ("state", "st-1"), ("nonce", "n-1"),
                        ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", "S256"),
                    ] + extra
                return h.authority + "/oauth2/v2.0/authorize?"
                    + q.map { "\($0.0)=\(FormEncoding.component($0.1))" }.joined(separator: "&")
            }
            let page = try await h.get(authorizeURL([("login_hint", ann.0)]))
            #expect(page.status == 200 && page.text.contains("<form"))
            let request = try #require(page.text.firstMatch(of: /name="request" value="([^"]+)"/)?.1)
            #expect(page.text.contains("value=\"ann@contoso.com\""))  // login_hint prefilled
            let wrong = try await h.send(
                .form(
                    url: h.authority + "/oauth2/v2.0/authorize",
                    fields: [("request", String(request)), ("username", ann.0), ("password", "bad")]
                )
            )
            #expect(wrong.status == 200 && wrong.text.contains("incorrect"))
            let ok = try await h.send(
                .form(
                    url: h.authority + "/oauth2/v2.0/authorize",
                    fields: [("request", String(request)), ("username", ann.0), ("password", ann.1)]
                )
            )
            #expect(ok.status == 302)
            let location = try #require(ok.response.header("location"))
            #expect(location.hasPrefix(redirect + "?"))
            let q = Dictionary(
                uniqueKeysWithValues: (FormEncoding.decode(String(location.split(separator: "?")[1])) ?? []).map {
                    ($0.0, $0.1)
                }
            )
            #expect(q["state"] == "st-1" && q["client_info"] != nil)
            let code = try #require(q["code"])
            let cookie = try #require(ok.response.header("set-cookie")?.split(separator: ";").first.map(String.init))
            // wrong verifier refused; the code is single-use
            let bad = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                    "code_verifier": "x" + verifier.dropFirst(),
                ]
            )
            #expect(bad["error"] == "invalid_grant" && bad["error_codes"] == [501481])
            let page2 = try await h.get(authorizeURL())
            let request2 = try #require(page2.text.firstMatch(of: /name="request" value="([^"]+)"/)?.1)
            let ok2 = try await h.send(
                .form(
                    url: h.authority + "/oauth2/v2.0/authorize",
                    fields: [("request", String(request2)), ("username", ann.0), ("password", ann.1)]
                )
            )
            let code2 = try #require(
                (FormEncoding.decode(String((ok2.response.header("location") ?? "?").split(separator: "?").last ?? ""))
                    ?? [])
                    .first(where: { $0.0 == "code" })?.1
            )
            let tok = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "grant_type": "authorization_code", "code": code2, "redirect_uri": redirect,
                    "code_verifier": verifier, "scope": "\(todoRead) openid offline_access",
                    "client_info": "1",
                ]
            )
            #expect(tok.status == 200)
            #expect(try JWT(decoding: tok.string["id_token"] ?? "").claims["nonce"] == "n-1")
            let reuse = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "grant_type": "authorization_code", "code": code2, "redirect_uri": redirect,
                    "code_verifier": verifier,
                ]
            )
            #expect(reuse["error"] == "invalid_grant")
            // prompt=none: with the session cookie → code; without → login_required
            let silent = try await h.get(authorizeURL([("prompt", "none")]), headers: [("Cookie", cookie)])
            #expect(silent.status == 302 && silent.response.header("location")?.contains("code=") == true)
            let noSession = try await h.get(authorizeURL([("prompt", "none")]))
            #expect(noSession.response.header("location")?.contains("error=login_required") == true)
            // end session, then prompt=none fails again
            let out = try await h.get(
                h.authority + "/oauth2/v2.0/logout?post_logout_redirect_uri="
                    + FormEncoding.component("http://localhost:9/bye") + "&state=s",
                headers: [("Cookie", cookie)]
            )
            #expect(out.status == 302 && out.response.header("location") == "http://localhost:9/bye?state=s")
            let afterLogout = try await h.get(authorizeURL([("prompt", "none")]), headers: [("Cookie", cookie)])
            #expect(afterLogout.response.header("location")?.contains("error=login_required") == true)
        }
    }

    /// The page asks MFA users for a code sent to their strong method, and OTP-only users for an emailed code.
    @Test func authorizePageSecondFactorAndEmailCode() async throws {
        try await withEmulator { h in
            let challenge = PKCE.challenge(for: try PKCE.makeVerifier())
            let url =
                h.authority + "/oauth2/v2.0/authorize?"
                + [
                    ("client_id", h.clientID), ("response_type", "code"),
                    ("redirect_uri", "http://localhost/cb"), ("scope", "openid"), ("code_challenge", challenge),
                    ("code_challenge_method", "S256"),
                ]
                .map { "\($0.0)=\(FormEncoding.component($0.1))" }.joined(separator: "&")
            func submit(_ fields: [(String, String)]) async throws -> Harness.Reply {
                try await h.send(.form(url: h.authority + "/oauth2/v2.0/authorize", fields: fields))
            }
            for (user, password, codeTo) in [(mike.0, mike.1, "mike.backup@fabrikam.com"), (olivia, "", olivia)] {
                let page = try await h.get(url)
                let request = String(try #require(page.text.firstMatch(of: /name="request" value="([^"]+)"/)?.1))
                let step = try await submit([("request", request), ("username", user), ("password", password)])
                #expect(step.status == 200 && step.text.contains("name=\"code\""), "\(user)")
                let wrong = try await submit([("request", request), ("code", "00000000")])
                #expect(wrong.text.contains("That code didn"))
                let done = try await submit([("request", request), ("code", try await h.lastCode(codeTo))])
                #expect(done.status == 302 && done.response.header("location")?.contains("code=") == true, "\(user)")
            }
        }
    }

    @Test func authorizeValidation() async throws {
        try await withEmulator { h in
            let challenge = PKCE.challenge(for: try PKCE.makeVerifier())
            func url(_ q: [(String, String)]) -> String {
                h.authority + "/oauth2/v2.0/authorize?"
                    + q.map { "\($0.0)=\(FormEncoding.component($0.1))" }.joined(separator: "&")
            }
            let unknownClient = try await h.get(url([("client_id", "nope"), ("redirect_uri", "http://localhost/cb")]))
            #expect(unknownClient.status == 400)
            let foreignRedirect = try await h.get(
                url([("client_id", h.clientID), ("redirect_uri", "https://evil.example/cb"), ("response_type", "code")])
            )
            #expect(foreignRedirect.status == 400 && foreignRedirect.response.header("location") == nil)
            for uri in [
                "http://localhost/cb", "http://127.0.0.1:8400", "http://127.0.0.1:1234/a/b", "http://[::1]:9/x",
            ] {
                let r = try await h.get(
                    url([
                        ("client_id", h.clientID), ("redirect_uri", uri), ("response_type", "code"),
                        ("scope", "openid"),
                        ("code_challenge", challenge), ("code_challenge_method", "S256"),
                    ])
                )
                #expect(r.status == 200, "\(uri)")
            }
            let plain = try await h.get(
                url([
                    ("client_id", h.clientID), ("redirect_uri", "http://localhost/cb"), ("response_type", "code"),
                    ("code_challenge", "abc"), ("code_challenge_method", "plain"),
                ])
            )
            #expect(plain.status == 302 && plain.response.header("location")?.contains("error=invalid_request") == true)
            let missing = try await h.get(
                url([("client_id", h.clientID), ("redirect_uri", "http://localhost/cb"), ("response_type", "code")])
            )
            #expect(missing.response.header("location")?.contains("error=invalid_request") == true)
            let formPost = try await h.get(
                url([
                    ("client_id", h.clientID), ("redirect_uri", "http://localhost/cb"), ("response_type", "code"),
                    ("response_mode", "form_post"), ("prompt", "none"), ("state", "z"),
                    ("code_challenge", challenge), ("code_challenge_method", "S256"),
                ])
            )
            #expect(
                formPost.status == 200 && formPost.text.contains("action=\"http://localhost/cb\"")
                    && formPost.text.contains("login_required")
            )
        }
    }

    @Test func deviceCodeFlow() async throws {
        // A 30 s polling interval, so that "too fast" does not depend on how busy the machine is.
        var config = EmulatorConfig.demo
        config.deviceCodeInterval = 30
        try await withEmulator(config: config) { h in
            let dc = try await h.post("/oauth2/v2.0/devicecode", ["scope": "openid offline_access \(notesRead)"])
            #expect(dc.status == 200)
            let device = try #require(dc.string["device_code"])
            let user = try #require(dc.string["user_code"])
            #expect(
                dc.string["verification_uri"] == h.base + "/devicelogin" && dc["interval"] != nil
                    && dc["expires_in"] != nil
            )
            let grant = "urn:ietf:params:oauth:grant-type:device_code"
            let p1 = try await h.post("/oauth2/v2.0/token", ["grant_type": grant, "device_code": device])
            #expect(p1["error"] == "authorization_pending")
            let p2 = try await h.post("/oauth2/v2.0/token", ["grant_type": grant, "device_code": device])
            #expect(p2["error"] == "slow_down")
            // approve through the verification page
            let page = try await h.send(
                .form(
                    url: h.base + "/devicelogin",
                    fields: [("user_code", user), ("username", ann.0), ("password", ann.1)]
                )
            )
            #expect(page.status == 200 && page.text.contains("signed in"))
            _ = try await h.control("POST", "clock", ["advance_seconds": 31])
            let tok = try await h.post("/oauth2/v2.0/token", ["grant_type": grant, "device_code": device])
            #expect(tok.status == 200 && tok["access_token"] != nil)
            // expiry
            let dc2 = try await h.post("/oauth2/v2.0/devicecode", ["scope": "openid"])
            _ = try await h.control("POST", "clock", ["advance_seconds": 901])
            let exp = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": grant, "device_code": dc2.string["device_code"] ?? ""]
            )
            #expect(exp["error"] == "expired_token")
            // approval through the control endpoint
            let dc3 = try await h.post("/oauth2/v2.0/devicecode", ["scope": "openid"])
            let approve = try await h.control(
                "POST",
                "device/approve",
                ["user_code": .string(dc3.string["user_code"] ?? ""), "email": "ann@contoso.com"]
            )
            #expect(approve["ok"] == true)
            let tok3 = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": grant, "device_code": dc3.string["device_code"] ?? ""]
            )
            #expect(tok3.status == 200)
        }
    }
}
