import Foundation
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthNet
import Testing

@Suite struct SecretCounterTests {
    func refresh(_ h: Harness, _ rt: String) async throws -> Harness.Reply {
        try await h.post(
            "/oauth2/v2.0/token",
            ["grant_type": "refresh_token", "refresh_token": rt, "scope": "openid offline_access"]
        )
    }

    @Test func aCounterAppearsWhenItFirstCounts() async throws {
        try await withEmulator { h in
            let c = try await h.control("GET", "counters")
            for name in [
                "password_presentations", "refresh_token_presentations", "refresh_token_presented_twice",
                "refresh_token_reuse_detected",
            ] {
                #expect(c[name] == nil, "\(name)")
            }
            _ = try await h.passwordSignIn(ann.0, ann.1)
            #expect(try await h.control("GET", "counters")["password_presentations"] == 1)
        }
    }

    @Test func passwordsAndRefreshTokensPresentedAreCounted() async throws {
        try await withEmulator { h in
            let rt1 = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.passwordSignIn(ann.0, "Wrong-Passw0rd!")  // received, even though wrong
            let rt2 = try #require(try await refresh(h, rt1).string["refresh_token"])
            _ = try await refresh(h, rt2)
            var c = try await h.control("GET", "counters")
            #expect(c["password_presentations"] == 2)
            #expect(c["refresh_token_presentations"] == 2 && c["refresh_token_presented_twice"] == nil)
            // Presenting rt1 again: counted twice-presented, and reuse detection revokes the family.
            #expect(try await refresh(h, rt1)["error_codes"] == [50173])
            // Without reuse detection, a replay is still a second presentation.
            _ = try await h.control("POST", "settings", ["refresh_token_reuse_detection": false])
            let rt3 = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            #expect(try await refresh(h, rt3).status == 200)
            #expect(try await refresh(h, rt3).status == 200)
            c = try await h.control("GET", "counters")
            #expect(c["refresh_token_presentations"] == 5)
            #expect(c["refresh_token_presented_twice"] == 2)
            #expect(c["refresh_token_reuse_detected"] == 1)
            #expect(c["password_presentations"] == 3)
            // An unknown value presented once is not "twice".
            _ = try await refresh(h, "RT.unknown")
            #expect(try await h.control("GET", "counters")["refresh_token_presented_twice"] == 2)
        }
    }

    @Test func signUpAndResetPasswordSubmissionsAreCounted() async throws {
        try await withEmulator { h in
            // sign-up with the password at start, then a password at continue
            let start = try await h.post(
                "/signup/v1.0/start",
                ["username": "new@contoso.com", "challenge_type": Harness.types, "password": "New-Passw0rd!"]
            )
            #expect(start.status == 200)
            let late = try await h.post(
                "/signup/v1.0/start",
                ["username": "late@contoso.com", "challenge_type": Harness.types]
            )
            var ct = late.string["continuation_token"] ?? ""
            ct =
                try await h.post("/signup/v1.0/challenge", ["continuation_token": ct]).string["continuation_token"]
                ?? ""
            let code = try await h.lastCode("late@contoso.com")
            let oob = try await h.post(
                "/signup/v1.0/continue",
                ["continuation_token": ct, "grant_type": "oob", "oob": code]
            )
            #expect(oob["error"] == "credential_required")
            ct = oob.string["continuation_token"] ?? ""
            ct =
                try await h.post("/signup/v1.0/challenge", ["continuation_token": ct]).string["continuation_token"]
                ?? ""
            _ = try await h.post(
                "/signup/v1.0/continue",
                ["continuation_token": ct, "grant_type": "password", "password": "Late-Passw0rd!"]
            )
            // reset: a new password submitted (even one the policy refuses)
            var r = try await h.post(
                "/resetpassword/v1.0/start",
                ["username": ann.0, "challenge_type": "oob redirect"]
            )
            r = try await h.post(
                "/resetpassword/v1.0/challenge",
                ["continuation_token": r.string["continuation_token"] ?? ""]
            )
            r = try await h.post(
                "/resetpassword/v1.0/continue",
                [
                    "continuation_token": r.string["continuation_token"] ?? "", "grant_type": "oob",
                    "oob": try await h.lastCode(ann.0),
                ]
            )
            let weak = try await h.post(
                "/resetpassword/v1.0/submit",
                ["continuation_token": r.string["continuation_token"] ?? "", "new_password": "password1"]
            )
            #expect(weak["suberror"] == "password_banned")
            #expect(try await h.control("GET", "counters")["password_presentations"] == 3)
        }
    }
}

@Suite struct RequestLogTests {
    @Test func entriesCarryTheClientRequestID() async throws {
        try await withEmulator { h in
            _ = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": ann.0, "challenge_type": Harness.types],
                headers: [("client-request-id", "11111111-2222-3333-4444-555555555555")]
            )
            var o = HTTPClientOptions()
            o.addClientRequestID = false
            _ = try await h.send(
                HTTPRequest(url: h.authority + "/v2.0/.well-known/openid-configuration"),
                client: CurlHTTPClient(options: o)
            )
            let entries = try #require(try await h.control("GET", "requests")["requests"]?.arrayValue)
            #expect(entries.count == 2)
            #expect(entries[0]["client_request_id"] == "11111111-2222-3333-4444-555555555555")
            #expect(entries[1]["client_request_id"] == .null)
            #expect(entries[0]["fields"]?["username"] == .string(ann.0))
        }
    }
}
