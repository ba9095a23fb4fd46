import Foundation
import NativeAuthEmulator
import NativeAuthJSON
import Testing

@Suite struct SignUpTests {
    @Test func passwordGivenEarlyWithAttributes() async throws {
        try await withEmulator { h in
            let start = try await h.post(
                "/signup/v1.0/start",
                [
                    "username": "new1@contoso.com", "challenge_type": Harness.types,
                    "password": "Str0ng-Passw0rd!", "attributes": #"{"displayName":"New One","city":"Oslo"}"#,
                ]
            )
            #expect(start.status == 200)
            let ch = try await h.post(
                "/signup/v1.0/challenge",
                [
                    "continuation_token": start.string["continuation_token"] ?? "",
                    "challenge_type": Harness.types,
                ]
            )
            #expect(ch["challenge_type"] == "oob" && ch["interval"] != nil && ch["code_length"] == 8)
            let bad = try await h.post(
                "/signup/v1.0/continue",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "",
                    "grant_type": "oob", "oob": "99999999",
                ]
            )
            #expect(bad["error"] == "invalid_grant" && bad["suberror"] == "invalid_oob_value")
            let done = try await h.post(
                "/signup/v1.0/continue",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "",
                    "grant_type": "oob", "oob": try await h.lastCode("new1@contoso.com"),
                ]
            )
            #expect(done.status == 200 && done["continuation_token"] != nil && done["expires_in"] != nil)
            let tok = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": done.string["continuation_token"] ?? "",
                    "grant_type": "continuation_token", "username": "new1@contoso.com",
                    "scope": "openid offline_access", "client_info": "true",
                ]
            )
            #expect(tok.status == 200 && tok["id_token"] != nil)
            // and the new account signs in with its password
            #expect(try await h.passwordSignIn("new1@contoso.com", "Str0ng-Passw0rd!").status == 200)
            let again = try await h.post(
                "/signup/v1.0/start",
                ["username": "new1@contoso.com", "challenge_type": Harness.types]
            )
            #expect(again["error"] == "user_already_exists")
        }
    }

    @Test func passwordLateViaCredentialRequiredThenAttributes() async throws {
        try await withEmulator { h in
            let start = try await h.post(
                "/signup/v1.0/start",
                ["username": "new2@contoso.com", "challenge_type": Harness.types]
            )
            let ch = try await h.post(
                "/signup/v1.0/challenge",
                ["continuation_token": start.string["continuation_token"] ?? ""]
            )
            let v = try await h.post(
                "/signup/v1.0/continue",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "",
                    "grant_type": "oob", "oob": try await h.lastCode("new2@contoso.com"),
                ]
            )
            #expect(v.status == 400 && v["error"] == "credential_required" && v["error_codes"] == [55103])
            let pch = try await h.post(
                "/signup/v1.0/challenge",
                [
                    "continuation_token": v.string["continuation_token"] ?? "",
                    "challenge_type": Harness.types,
                ]
            )
            #expect(pch["challenge_type"] == "password")
            let pct = pch.string["continuation_token"] ?? ""
            for (pw, sub) in [
                ("Ab1!", "password_too_short"), ("password123", "password_banned"),
                ("alllowercaseletters", "password_too_weak"),
                (String(repeating: "Aa1!", count: 70), "password_too_long"),
            ] {
                let r = try await h.post(
                    "/signup/v1.0/continue",
                    ["continuation_token": pct, "grant_type": "password", "password": pw]
                )
                #expect(r["error"] == "invalid_grant" && r.string["suberror"] == sub, "\(pw): \(r.text)")
            }
            let attrs = try await h.post(
                "/signup/v1.0/continue",
                ["continuation_token": pct, "grant_type": "password", "password": "Str0ng-Passw0rd!"]
            )
            #expect(attrs["error"] == "attributes_required" && attrs["error_codes"] == [55106])
            let required = try #require(attrs["required_attributes"]?.arrayValue)
            #expect(required.map { $0["name"] } == ["displayName"])
            #expect(required.first?["type"] == "string" && required.first?["required"] == true)
            let act = attrs.string["continuation_token"] ?? ""
            let invalid = try await h.post(
                "/signup/v1.0/continue",
                [
                    "continuation_token": act, "grant_type": "attributes",
                    "attributes": #"{"displayName":"N","postalCode":"abc"}"#,
                ]
            )
            #expect(invalid["error"] == "invalid_grant" && invalid["suberror"] == "attribute_validation_failed")
            #expect(invalid["invalid_attributes"] == [["name": "postalCode"]])
            let done = try await h.post(
                "/signup/v1.0/continue",
                [
                    "continuation_token": act, "grant_type": "attributes",
                    "attributes": #"{"displayName":"New Two","postalCode":"12345"}"#,
                ]
            )
            #expect(done.status == 200, "\(done.text)")
        }
    }

    @Test func startValidatesPasswordAndAttributes() async throws {
        try await withEmulator { h in
            let weak = try await h.post(
                "/signup/v1.0/start",
                ["username": "x@contoso.com", "challenge_type": Harness.types, "password": "weakweak"]
            )
            #expect(weak["suberror"] == "password_too_weak")
            let attrs = try await h.post(
                "/signup/v1.0/start",
                [
                    "username": "x@contoso.com", "challenge_type": Harness.types,
                    "attributes": #"{"postalCode":"x"}"#,
                ]
            )
            #expect(attrs["suberror"] == "attribute_validation_failed")
            let junk = try await h.post(
                "/signup/v1.0/start",
                ["username": "x@contoso.com", "challenge_type": Harness.types, "attributes": "{"]
            )
            #expect(junk["error"] == "invalid_request")
            let badName = try await h.post("/signup/v1.0/start", ["username": "x", "challenge_type": Harness.types])
            #expect(badName["error_codes"] == [90100])
        }
    }
}

@Suite struct ResetPasswordTests {
    @Test func resetWithPollingThenSignIn() async throws {
        try await withEmulator { h in
            let start = try await h.post(
                "/resetpassword/v1.0/start",
                ["username": ann.0, "challenge_type": "oob redirect"]
            )
            let ch = try await h.post(
                "/resetpassword/v1.0/challenge",
                [
                    "continuation_token": start.string["continuation_token"] ?? "",
                    "challenge_type": "oob redirect",
                ]
            )
            #expect(ch["challenge_type"] == "oob")
            let cont = try await h.post(
                "/resetpassword/v1.0/continue",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "",
                    "grant_type": "oob", "oob": try await h.lastCode(ann.0),
                ]
            )
            #expect(cont["expires_in"] == 600)
            let reused = try await h.post(
                "/resetpassword/v1.0/submit",
                [
                    "continuation_token": cont.string["continuation_token"] ?? "",
                    "new_password": ann.1,
                ]
            )
            #expect(reused["suberror"] == "password_recently_used")
            let submit = try await h.post(
                "/resetpassword/v1.0/submit",
                [
                    "continuation_token": cont.string["continuation_token"] ?? "",
                    "new_password": "N3w-Passw0rd!",
                ]
            )
            #expect(submit["poll_interval"] != nil)
            let sct = submit.string["continuation_token"] ?? ""
            let p1 = try await h.post("/resetpassword/v1.0/poll_completion", ["continuation_token": sct])
            #expect(p1["status"] == "in_progress")
            let p2 = try await h.post("/resetpassword/v1.0/poll_completion", ["continuation_token": sct])
            #expect(p2["status"] == "succeeded" && p2["continuation_token"] != nil)
            let tok = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": p2.string["continuation_token"] ?? "",
                    "grant_type": "continuation_token", "username": ann.0, "scope": "openid",
                ]
            )
            #expect(tok.status == 200)
            #expect(try await h.passwordSignIn(ann.0, ann.1).status == 400)
            #expect(try await h.passwordSignIn(ann.0, "N3w-Passw0rd!").status == 200)
        }
    }

    @Test func resetStartErrors() async throws {
        try await withEmulator { h in
            let none = try await h.post(
                "/resetpassword/v1.0/start",
                ["username": "nobody@contoso.com", "challenge_type": "oob redirect"]
            )
            #expect(none["error"] == "user_not_found")
            let otp = try await h.post(
                "/resetpassword/v1.0/start",
                ["username": olivia, "challenge_type": "oob redirect"]
            )
            #expect(otp["error"] == "invalid_request" && otp["error_codes"] == [500222])
        }
    }
}
