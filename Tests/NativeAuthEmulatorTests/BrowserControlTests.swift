import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// The controls the browser-flow and token tests need: revoking a user's grants, expiring or shortening access
/// tokens, device polling, and the new settings.
@Suite struct BrowserControlTests {
    func oidcPasswordTokens(_ h: Harness, _ b: PageClient) async throws -> Harness.Reply {
        let page = try await b.get(
            b.authorizeURL(
                h.base + "/oidc/authorize",
                clientID: "nativeauth-oidc-demo",
                scope: "openid offline_access todolist.read"
            )
        )
        let r = try await b.submit(page, [("username", ann.0), ("password", ann.1)]).authorizationResponse
        return try await h.send(
            .form(
                url: h.base + "/oidc/token",
                fields: [
                    ("client_id", "nativeauth-oidc-demo"), ("grant_type", "authorization_code"),
                    ("code", r["code"] ?? ""),
                    ("redirect_uri", b.redirect), ("code_verifier", b.verifier),
                ]
            )
        )
    }

    @Test func revokeRefreshTokensButKeepTheBrowserSession() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            let b = try PageClient(h)
            let oidc = try await oidcPasswordTokens(h, b)
            let revoked = try await h.control("POST", "users/revoke", ["email": .string(ann.0), "sessions": false])
            #expect(revoked["refresh_token_families"] == 2 && revoked["sessions"] == 0)
            let entra = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": "refresh_token", "refresh_token": rt, "scope": "openid offline_access"]
            )
            #expect(
                entra["error"] == "invalid_grant" && entra["error_codes"] == [50173] && entra["suberror"] == "bad_token"
            )
            #expect(entra.string["error_description"]?.contains("TokensValidFrom") == true)
            let o = try await h.send(
                .form(
                    url: h.base + "/oidc/token",
                    fields: [
                        ("client_id", "nativeauth-oidc-demo"), ("grant_type", "refresh_token"),
                        ("refresh_token", oidc.string["refresh_token"] ?? ""),
                    ]
                )
            )
            #expect(o["error"] == "invalid_grant")
            // The browser session survived: prompt=none still answers a code.
            let silent = try await b.get(
                b.authorizeURL(
                    h.base + "/oidc/authorize",
                    clientID: "nativeauth-oidc-demo",
                    scope: "openid",
                    [("prompt", "none")]
                )
            )
            #expect(silent.authorizationResponse["code"] != nil)
            // By default the sessions end too.
            let all = try await h.control("POST", "users/revoke", ["email": .string(ann.0)])
            #expect(all["sessions"] == 1)
        }
    }

    @Test func expireAndShortenAccessTokens() async throws {
        try await withEmulator { h in
            let entra = try await h.passwordSignIn(ann.0, ann.1, scope: "\(todoRead) openid offline_access")
            let b = try PageClient(h)
            let oidc = try await oidcPasswordTokens(h, b)
            for at in [entra.string["access_token"] ?? "", oidc.string["access_token"] ?? ""] {
                #expect(try await h.get("/api/todolist", headers: [("Authorization", "Bearer " + at)]).status == 200)
            }
            let expired = try await h.control("POST", "tokens/expire", ["email": .string(ann.0)])
            #expect(expired["expired"] == 2)
            for at in [entra.string["access_token"] ?? "", oidc.string["access_token"] ?? ""] {
                let r = try await h.get("/api/todolist", headers: [("Authorization", "Bearer " + at)])
                #expect(r.status == 401 && r.response.header("www-authenticate")?.contains("invalid_token") == true)
            }
            let info = try await h.get(
                "/oidc/userinfo",
                headers: [("Authorization", "Bearer " + (oidc.string["access_token"] ?? ""))]
            )
            #expect(info.status == 401)
            // A per-user lifetime; tokens minted after the expiry work.
            let set = try await h.control("POST", "users", ["email": .string(ann.0), "access_token_lifetime": 60])
            #expect(set["user"]?["access_token_lifetime"] == 60)
            let fresh = try await h.passwordSignIn(ann.0, ann.1, scope: "\(todoRead) openid offline_access")
            #expect(fresh["expires_in"] == 60)
            let exp = try JWT(decoding: fresh.string["access_token"] ?? "").claims
            #expect((exp["exp"]?.intValue ?? 0) - (exp["iat"]?.intValue ?? 0) == 60)
            #expect(
                try await h.get(
                    "/api/todolist",
                    headers: [("Authorization", "Bearer " + (fresh.string["access_token"] ?? ""))]
                ).status == 200
            )
            #expect(try await oidcPasswordTokens(h, try PageClient(h))["expires_in"] == 60)  // a new browser: no SSO
            _ = try await h.control("POST", "users", ["email": .string(ann.0), "access_token_lifetime": .null])
            #expect(try await h.passwordSignIn(ann.0, ann.1)["expires_in"] == 3600)
        }
    }

    @Test func deviceSlowDownControlAndIncrement() async throws {
        try await withEmulator { h in
            // Intervals far above the test's own duration, so a loaded machine's real seconds do not count.
            _ = try await h.control("POST", "settings", ["device_code_interval": 30, "device_slow_down_increment": 5])
            let dc = try await h.post("/oauth2/v2.0/devicecode", ["scope": "openid"])
            #expect(dc["interval"] == 30)
            let device = dc.string["device_code"] ?? ""
            let grant = "urn:ietf:params:oauth:grant-type:device_code"
            _ = try await h.control("POST", "device/slow_down", ["count": 1])
            let first = try await h.post("/oauth2/v2.0/token", ["grant_type": grant, "device_code": device])
            #expect(first["error"] == "slow_down")
            // The interval is now 35 s: a poll 3 s later is too fast (and adds 5 s more); one 41 s later is fine.
            _ = try await h.control("POST", "clock", ["advance_seconds": 3])
            #expect(
                try await h.post("/oauth2/v2.0/token", ["grant_type": grant, "device_code": device])["error"]
                    == "slow_down"
            )
            _ = try await h.control("POST", "clock", ["advance_seconds": 41])
            let ok = try await h.post("/oauth2/v2.0/token", ["grant_type": grant, "device_code": device])
            #expect(ok["error"] == "authorization_pending")
            let counters = try await h.control("GET", "counters")
            #expect(counters["slow_down_answers"] == 2 && counters["device_polls"] == 3)
            // Denied by the control: Entra answers authorization_declined.
            _ = try await h.control(
                "POST",
                "device/approve",
                ["user_code": .string(dc.string["user_code"] ?? ""), "deny": true]
            )
            _ = try await h.control("POST", "clock", ["advance_seconds": 20])
            #expect(
                try await h.post("/oauth2/v2.0/token", ["grant_type": grant, "device_code": device])["error"]
                    == "authorization_declined"
            )
        }
    }

    @Test func loginHintClaimCanBeSwitchedOff() async throws {
        try await withEmulator { h in
            let on = try await h.passwordSignIn(ann.0, ann.1)
            #expect(try JWT(decoding: on.string["id_token"] ?? "").claims["login_hint"] != nil)
            _ = try await h.control("POST", "settings", ["id_token_login_hint": false])
            let off = try await h.passwordSignIn(ann.0, ann.1)
            #expect(try JWT(decoding: off.string["id_token"] ?? "").claims["login_hint"] == nil)
            let config = try EmulatorConfig.load(
                json: ["id_token_login_hint": false, "oidc": ["client_id": "x", "id_token_on_refresh": false]]
            )
            #expect(!config.idTokenLoginHint && config.oidc.clientID == "x" && !config.oidc.idTokenOnRefresh)
            #expect(throws: JSONFieldError.self) { try EmulatorConfig.load(json: ["oidc": ["clientid": "x"]]) }
        }
    }
}
