import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import Testing

@Suite struct BrowserRequiredTests {
    func isRedirect(_ r: Harness.Reply, _ reason: String? = nil) -> Bool {
        r.status == 200 && r["challenge_type"] == "redirect" && r["continuation_token"] == nil
            && (reason.map { r.string["redirect_reason"] == $0 } ?? (r.string["redirect_reason"]?.isEmpty == false))
    }

    @Test func everyNativeEndpointAnswersRedirectForThatUser() async throws {
        try await withEmulator { h in
            // mike is mid-flow when the switch is thrown
            let i = try await h.post("/oauth2/v2.0/initiate", ["username": mike.0, "challenge_type": Harness.types])
            let mikeCT = try #require(i.string["continuation_token"])
            let set = try await h.control("POST", "users", ["email": "ANN@contoso.com", "requires_browser": true])
            #expect(set["user"]?["requires_browser"] == true)
            _ = try await h.control(
                "POST",
                "users",
                ["email": .string(mike.0), "requires_browser": true, "redirect_reason": "Use the web."]
            )
            let starts = [
                "/oauth2/v2.0/initiate", "/signup/v1.0/start", "/resetpassword/v1.0/start",
            ]
            for path in starts {
                let r = try await h.post(path, ["username": ann.0, "challenge_type": Harness.types])
                #expect(isRedirect(r), "\(path): \(r.text)")
            }
            #expect(
                isRedirect(try await h.post("/oauth2/v2.0/challenge", ["continuation_token": mikeCT]), "Use the web.")
            )
            let grant = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": mikeCT, "grant_type": "password", "password": mike.1, "scope": "openid"]
            )
            #expect(isRedirect(grant, "Use the web."))
            // Other users are unaffected; client errors still come first.
            #expect(try await h.passwordSignIn(rita.0, rita.1)["suberror"] == "registration_required")
            let bad = try await h.post(
                "/oauth2/v2.0/initiate",
                [
                    "username": ann.0, "challenge_type": Harness.types,
                    "client_id": "99990000-ffff-8888-eeee-7777dddd6666",
                ]
            )
            #expect(bad["error"] == "invalid_client")
            #expect(try await h.control("GET", "counters")["browser_required"] == 5)
            // Switched off, native sign-in works again.
            _ = try await h.control("POST", "users", ["email": .string(ann.0), "requires_browser": false])
            #expect(try await h.passwordSignIn(ann.0, ann.1).status == 200)
        }
    }

    @Test func theBrowserPageAndRefreshTokensStillWork() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.control("POST", "users", ["email": .string(ann.0), "requires_browser": true])
            // a refresh grant is not native auth
            let refreshed = try await h.post(
                "/oauth2/v2.0/token",
                ["grant_type": "refresh_token", "refresh_token": rt, "scope": "openid offline_access"]
            )
            #expect(refreshed.status == 200 && refreshed["access_token"] != nil)
            // the authorize page signs ann in
            let verifier = try PKCE.makeVerifier()
            let redirect = "http://127.0.0.1:53124/callback"
            let q = [
                ("client_id", h.clientID), ("response_type", "code"), ("redirect_uri", redirect),
                ("scope", "openid offline_access"), ("code_challenge", PKCE.challenge(for: verifier)),
                ("code_challenge_method", "S256"),
            ]
            let url =
                h.authority + "/oauth2/v2.0/authorize?"
                + q.map { "\($0.0)=\(FormEncoding.component($0.1))" }.joined(separator: "&")
            let page = try await h.get(url)
            let request = try #require(page.text.firstMatch(of: /name="request" value="([^"]+)"/)?.1)
            let ok = try await h.send(
                .form(
                    url: h.authority + "/oauth2/v2.0/authorize",
                    fields: [("request", String(request)), ("username", ann.0), ("password", ann.1)]
                )
            )
            let location = try #require(ok.response.header("location"))
            let code = try #require(
                (FormEncoding.decode(String(location.split(separator: "?").last ?? "")) ?? []).first {
                    $0.0 == "code"
                }?.1
            )
            let tokens = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "grant_type": "authorization_code", "code": code, "redirect_uri": redirect,
                    "code_verifier": verifier,
                ]
            )
            #expect(tokens.status == 200)
            #expect(try JWT(decoding: tokens.string["id_token"] ?? "").claims["preferred_username"] == .string(ann.0))
        }
    }

    @Test func fromTheConfigurationFile() async throws {
        let c = try EmulatorConfig.load(
            json: ["users": [["email": "web@contoso.com", "password": "Web-Passw0rd!", "requires_browser": true]]]
        )
        #expect(c.users.first?.requiresBrowser == true)
        try await withEmulator(config: c) { h in
            let ready = h.server.readyDocument["users"]?.arrayValue ?? []
            #expect(ready.first?["requires_browser"] == true)
            let r = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": "web@contoso.com", "challenge_type": Harness.types]
            )
            #expect(isRedirect(r))
        }
    }
}
