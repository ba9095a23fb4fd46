import Foundation
import NativeAuthEmulator
import NativeAuthJSON
import Testing

extension Harness {
    /// start → challenge → continue with the emailed code: the continuation token /submit takes.
    func resetToSubmit(_ user: String) async throws -> String {
        let start = try await post("/resetpassword/v1.0/start", ["username": user, "challenge_type": "oob redirect"])
        let ch = try await post(
            "/resetpassword/v1.0/challenge",
            ["continuation_token": start.string["continuation_token"] ?? ""]
        )
        let cont = try await post(
            "/resetpassword/v1.0/continue",
            [
                "continuation_token": ch.string["continuation_token"] ?? "", "grant_type": "oob",
                "oob": try await lastCode(user),
            ]
        )
        try expect(cont.status == 200, "continue: \(cont.text)")
        return cont.string["continuation_token"] ?? ""
    }

    func submit(_ ct: String, _ password: String) async throws -> Reply {
        try await post("/resetpassword/v1.0/submit", ["continuation_token": ct, "new_password": password])
    }

    func poll(_ ct: String) async throws -> Reply {
        try await post("/resetpassword/v1.0/poll_completion", ["continuation_token": ct])
    }
}

@Suite struct ResetPollSettingsTests {
    @Test func pollFailsThenTheNewPasswordCanBeSubmittedAgain() async throws {
        try await withEmulator { h in
            #expect(try await h.control("POST", "settings", ["reset_poll_result": "failed"]).status == 200)
            let ct = try await h.resetToSubmit(ann.0)
            let pollToken = try #require(try await h.submit(ct, "N3w-Passw0rd!").string["continuation_token"])
            #expect(try await h.poll(pollToken)["status"] == "in_progress")
            let failed = try await h.poll(pollToken)
            #expect(failed.status == 200 && failed["status"] == "failed" && failed["continuation_token"] == nil)
            #expect(try await h.passwordSignIn(ann.0, ann.1).status == 200)  // unchanged
            // As MSAL iOS does: submit again with the token submit answered.
            _ = try await h.control(
                "POST",
                "settings",
                ["reset_poll_result": "succeeded", "reset_in_progress_polls": 0]
            )
            let again = try #require(try await h.submit(pollToken, "N3w-Passw0rd!").string["continuation_token"])
            #expect(try await h.submit(ct, "Other-Passw0rd!")["error_codes"] == [55200])  // both retired by one use
            let done = try await h.poll(again)
            #expect(done["status"] == "succeeded" && done["continuation_token"] != nil)
            #expect(try await h.passwordSignIn(ann.0, "N3w-Passw0rd!").status == 200)
        }
    }

    @Test func pollAnswersAPasswordPolicyError() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "settings", ["reset_poll_policy_error": "password_banned"])
            let ct = try await h.resetToSubmit(ann.0)
            let pollToken = try #require(try await h.submit(ct, "N3w-Passw0rd!").string["continuation_token"])
            #expect(try await h.poll(pollToken)["status"] == "in_progress")
            let refused = try await h.poll(pollToken)
            #expect(
                refused.status == 400 && refused["error"] == "invalid_grant" && refused["suberror"] == "password_banned"
            )
            #expect(refused["error_codes"] == [399246] && refused["trace_id"] != nil)
            #expect(try await h.passwordSignIn(ann.0, "N3w-Passw0rd!").status == 400)  // not changed
            // The library's way: submit again with the token it submitted with.
            _ = try await h.control(
                "POST",
                "settings",
                ["reset_poll_policy_error": .null, "reset_in_progress_polls": 0]
            )
            let again = try #require(try await h.submit(ct, "Better-Passw0rd!").string["continuation_token"])
            #expect(try await h.submit(pollToken, "Other-Passw0rd!")["error_codes"] == [55200])
            #expect(try await h.poll(again)["status"] == "succeeded")
            #expect(try await h.passwordSignIn(ann.0, "Better-Passw0rd!").status == 200)
        }
    }

    @Test func pollSucceedsWithoutAContinuationToken() async throws {
        try await withEmulator { h in
            _ = try await h.control(
                "POST",
                "settings",
                ["reset_completion_without_token": true, "reset_in_progress_polls": 0]
            )
            let pollToken = try #require(
                try await h.submit(try await h.resetToSubmit(ann.0), "N3w-Passw0rd!").string["continuation_token"]
            )
            let done = try await h.poll(pollToken)
            #expect(done.status == 200 && done.json == ["status": "succeeded"])
            #expect(try await h.poll(pollToken)["error_codes"] == [55200])  // the flow is over
            #expect(try await h.passwordSignIn(ann.0, "N3w-Passw0rd!").status == 200)
        }
    }

    @Test func settingsAreAllOrNothing() async throws {
        try await withEmulator { h in
            let refused: [JSONValue] = [
                ["access_token_lifetime": 5, "reset_poll_result": "maybe"],
                ["access_token_lifetime": 5, "reset_poll_policy_error": "password_ugly"],
            ]
            for bad in refused {
                let r = try await h.control("POST", "settings", bad)
                #expect(r.status == 400)
            }
            #expect(try await h.passwordSignIn(ann.0, ann.1)["expires_in"] == 3600)
        }
    }
}

@Suite struct SignUpSettingsTests {
    @Test func signUpCompletesWithoutAContinuationToken() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "settings", ["sign_up_completion_without_token": true])
            let start = try await h.post(
                "/signup/v1.0/start",
                [
                    "username": "new@contoso.com", "challenge_type": Harness.types, "password": "New-Passw0rd!",
                    "attributes": #"{"displayName":"New"}"#,
                ]
            )
            let ch = try await h.post(
                "/signup/v1.0/challenge",
                ["continuation_token": start.string["continuation_token"] ?? ""]
            )
            let done = try await h.post(
                "/signup/v1.0/continue",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "", "grant_type": "oob",
                    "oob": try await h.lastCode("new@contoso.com"),
                ]
            )
            #expect(done.status == 200 && done["continuation_token"] == nil && done.json == [:])
            #expect(try await h.passwordSignIn("new@contoso.com", "New-Passw0rd!").status == 200)
        }
    }
}

@Suite struct FlowSettingsConfigTests {
    @Test func theConfigurationFileCarriesTheSameSettings() throws {
        let c = try EmulatorConfig.load(
            json: [
                "reset_password": [
                    "poll_result": "failed", "poll_policy_error": "password_too_weak", "completion_without_token": true,
                ],
                "sign_up": ["completion_without_token": true],
            ]
        )
        #expect(c.resetPollResult == "failed" && c.resetPollPolicyError == "password_too_weak")
        #expect(c.resetCompletionWithoutToken && c.signUpCompletionWithoutToken)
        #expect(throws: JSONFieldError.self) { try EmulatorConfig.load(json: ["reset_password": ["poll_result": "x"]]) }
        #expect(throws: JSONFieldError.self) {
            try EmulatorConfig.load(json: ["reset_password": ["poll_policy_error": "nope"]])
        }
    }
}
