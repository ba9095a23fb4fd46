import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import Testing

@Suite struct TokenAnswerTests {
    func refresh(_ h: Harness, _ rt: String, scope: String = "openid offline_access") async throws -> Harness.Reply {
        try await h.post("/oauth2/v2.0/token", ["grant_type": "refresh_token", "refresh_token": rt, "scope": scope])
    }

    @Test func removeAndSetMembersOfTheNextAnswers() async throws {
        try await withEmulator { h in
            let rule = try await h.control(
                "POST",
                "token_answers",
                [
                    "count": 2, "remove": ["client_info", "refresh_token"],
                    "set": ["expires_in": "3600", "scope": "openid", "ext_expires_in": .null],
                ]
            )
            #expect(rule.status == 200 && rule["rule"]?["remaining"] == 2)
            #expect(try await h.control("GET", "token_answers")["token_answers"]?.arrayValue?.count == 1)
            for _ in 0..<2 {
                let t = try await h.passwordSignIn(ann.0, ann.1, scope: "\(notesRead) openid offline_access")
                #expect(t.status == 200 && t["client_info"] == nil && t["refresh_token"] == nil)
                #expect(t["expires_in"] == "3600" && t["scope"] == "openid" && t["ext_expires_in"] == .null)
                #expect(t.text.contains("\"ext_expires_in\":null"))
                // The server granted what it granted: the access token still carries the API permission.
                #expect(try JWT(decoding: t.string["access_token"] ?? "").claims["scp"] == "Notes.Read")
            }
            let normal = try await h.passwordSignIn(ann.0, ann.1)
            #expect(normal["expires_in"] == 3600 && normal["refresh_token"] != nil && normal["client_info"] != nil)
            #expect(try await h.control("GET", "token_answers")["token_answers"]?.arrayValue?.isEmpty == true)
            #expect(try await h.control("GET", "counters")["token_answers_rewritten"] == 2)
        }
    }

    @Test func hostileNumbersAndRawText() async throws {
        try await withEmulator { h in
            let values: [JSONValue] = [.int(9_223_372_036_854_775_807), .double(1e300), .int(-5), "abc", [1], true]
            for v in values {
                _ = try await h.control("POST", "token_answers", ["set": ["expires_in": v]])
                let t = try await h.passwordSignIn(ann.0, ann.1)
                #expect(t.status == 200 && t["expires_in"] == v, "\(v)")
            }
            // Verbatim text: a number no JSON library holds, and a member that breaks the document.
            _ = try await h.control("POST", "token_answers", ["set_raw": ["expires_in": "1e999"]])
            let huge = try await h.passwordSignIn(ann.0, ann.1)
            #expect(huge.text.hasSuffix(",\"expires_in\":1e999}") && !huge.text.contains("\"expires_in\":3600"))
            _ = try await h.control("POST", "token_answers", ["set_raw": ["refresh_in": "18446744073709551616"]])
            #expect(try await h.passwordSignIn(ann.0, ann.1).text.contains("\"refresh_in\":18446744073709551616}"))
        }
    }

    @Test func onlyTheChosenGrant() async throws {
        try await withEmulator { h in
            _ = try await h.control(
                "POST",
                "token_answers",
                ["grant_type": "refresh_token", "set": ["token_type": "pop"]]
            )
            let signIn = try await h.passwordSignIn(ann.0, ann.1)
            #expect(signIn["token_type"] == "Bearer")
            let rt = try #require(signIn.string["refresh_token"])
            let refreshed = try await refresh(h, rt)
            #expect(refreshed["token_type"] == "pop")
            // The rotated refresh token in the rewritten answer is real: it works.
            let rt2 = try #require(refreshed.string["refresh_token"])
            #expect(try await refresh(h, rt2)["token_type"] == "Bearer")
        }
    }

    @Test func idTokenReMintedWithClaimsAndSignedWithTheSameKey() async throws {
        try await withEmulator { h in
            _ = try await h.control(
                "POST",
                "token_answers",
                [
                    "id_token_claims": ["aud": "x", "exp": 1, "nonce": ["not": "a string"]],
                    "id_token_remove_claims": ["tid"],
                ]
            )
            let t = try await h.passwordSignIn(ann.0, ann.1)
            let original = try await h.passwordSignIn(ann.0, ann.1)
            let id = try JWT(decoding: t.string["id_token"] ?? "")
            let plain = try JWT(decoding: original.string["id_token"] ?? "")
            #expect(id.claims["aud"] == "x" && id.claims["exp"] == 1 && id.claims["nonce"]?["not"] == "a string")
            #expect(id.claims["tid"] == nil && id.claims["preferred_username"] == .string(ann.0))
            #expect(id.header["kid"] != nil && id.header["kid"] == plain.header["kid"])
            let jwks = try await h.get("/contoso.onmicrosoft.com/discovery/v2.0/keys")
            let key = try #require(jwks["keys"]?.arrayValue?.first)
            let pub = try RSAPublicKey(
                modulus: Base64.decode(key["n"]?.stringValue ?? "") ?? [],
                exponent: Base64.decode(key["e"]?.stringValue ?? "") ?? []
            )
            #expect(id.verify(with: pub))
            // No ID token in the answer (no openid): one is minted for the client.
            _ = try await h.control("POST", "token_answers", ["id_token_claims": ["iss": "https://evil.example/v2.0"]])
            let noOpenID = try await h.passwordSignIn(ann.0, ann.1, scope: notesRead)
            let minted = try JWT(decoding: noOpenID.string["id_token"] ?? "")
            #expect(minted.claims["iss"] == "https://evil.example/v2.0" && minted.claims["aud"] == .string(h.clientID))
            #expect(minted.verify(with: pub))
        }
    }

    @Test func listClearAndRefuseNonsense() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "token_answers", ["remove": ["scope"], "count": 100_000])
            #expect(try await h.control("GET", "token_answers")["token_answers"]?[0]?["remaining"] == 100_000)
            #expect(try await h.control("DELETE", "token_answers").status == 200)
            #expect(try await h.passwordSignIn(ann.0, ann.1)["scope"] != nil)
            #expect(try await h.control("POST", "token_answers", [:]).status == 400)
            #expect(try await h.control("POST", "token_answers", ["remvoe": ["scope"]]).status == 400)
            #expect(try await h.control("POST", "token_answers", ["set": ["x": 1], "count": 0]).status == 400)
            #expect(try await h.control("POST", "token_answers", ["set_raw": ["x": 1]]).status == 400)
            // Error answers are not rewritten and do not use the rule up.
            _ = try await h.control("POST", "token_answers", ["set": ["x": 1]])
            #expect(try await h.passwordSignIn(ann.0, "Wrong-Passw0rd!")["x"] == nil)
            #expect(try await h.passwordSignIn(ann.0, ann.1)["x"] == 1)
        }
    }
}

extension JSONValue {
    fileprivate subscript(_ i: Int) -> JSONValue? {
        guard let a = arrayValue, i < a.count else { return nil }
        return a[i]
    }
}

@Suite struct TokenErrorTests {
    func refresh(_ h: Harness, _ rt: String, scope: String) async throws -> Harness.Reply {
        try await h.post(
            "/oauth2/v2.0/token",
            ["grant_type": "refresh_token", "refresh_token": rt, "scope": "\(scope) openid profile offline_access"]
        )
    }

    @Test func errorsForOneScopeLeaveTheRefreshTokenUntouched() async throws {
        try await withEmulator { h in
            let rule = try await h.control(
                "POST",
                "token_errors",
                [
                    "scope": .string(notesRead.uppercased()), "grant_type": "refresh_token", "error": "invalid_grant",
                    "suberror": "consent_required", "error_codes": [65001],
                ]
            )
            #expect(rule["rule"]?["remaining"] == .null)
            // Another grant with the scope: not matched.
            let signIn = try await h.passwordSignIn(ann.0, ann.1, scope: "\(notesRead) openid offline_access")
            #expect(signIn.status == 200)
            let rt = try #require(signIn.string["refresh_token"])
            for _ in 0..<3 {  // until DELETE
                let e = try await refresh(h, rt, scope: notesRead)
                #expect(e.status == 400 && e["error"] == "invalid_grant" && e["suberror"] == "consent_required")
                #expect(e["error_codes"] == [65001] && e["trace_id"] != nil && e["correlation_id"] != nil)
                #expect(e["timestamp"] != nil)
                let d = e.string["error_description"] ?? ""
                #expect(
                    d.hasPrefix("AADSTS65001: The user or administrator has not consented") && d.contains("Trace ID:")
                )
            }
            // Not processed: the same refresh token still works (not rotated, not used), for another scope.
            #expect(try await h.control("GET", "counters")["refresh_grants"] == nil)
            let todo = try await refresh(h, rt, scope: todoRead)
            #expect(todo.status == 200)
            let rt2 = try #require(todo.string["refresh_token"])
            _ = try await h.control("DELETE", "token_errors")
            #expect(try await refresh(h, rt2, scope: notesRead).status == 200)
            let c = try await h.control("GET", "counters")
            #expect(c["refresh_token_reuse_detected"] == nil && c["token_errors_injected"] == 3)
        }
    }

    @Test func countStatusAndDefaultDescriptions() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            let cases: [(Int, String)] = [
                (50076, "AADSTS50076: Due to a configuration change"),
                (700082, "AADSTS700082: The refresh token has expired due to inactivity"),
                (70008, "AADSTS70008: The provided authorization code or refresh token has expired"),
                (700084, "AADSTS700084: The refresh token was issued to a single page app (SPA)"),
                (50173, "AADSTS50173: The provided grant has expired due to it being revoked"),
                (123_456, "AADSTS123456: Injected token endpoint error."),
            ]
            for (code, prefix) in cases {
                _ = try await h.control(
                    "POST",
                    "token_errors",
                    ["error": "invalid_grant", "error_codes": [.int(Int64(code))], "count": 1]
                )
                let e = try await refresh(h, rt, scope: todoRead)
                #expect(e["error_codes"] == [.int(Int64(code))])
                #expect(e.string["error_description"]?.hasPrefix(prefix) == true, "\(code)")
            }
            _ = try await h.control(
                "POST",
                "token_errors",
                [
                    "error": "invalid_client", "status": 401, "count": 2, "error_description": "AADSTS7000215: nope.",
                    "grant_type": "password",
                ]
            )
            for _ in 0..<2 {
                let e = try await h.passwordSignIn(ann.0, ann.1)
                #expect(e.status == 401 && e["error"] == "invalid_client")
                #expect(e.string["error_description"]?.hasPrefix("AADSTS7000215: nope.\r\nTrace ID: ") == true)
            }
            #expect(try await h.passwordSignIn(ann.0, ann.1).status == 200)
            #expect(try await refresh(h, rt, scope: todoRead).status == 200)  // every error left rt alone
            #expect(try await h.control("POST", "token_errors", ["scope": "x"]).status == 400)  // error is required
            #expect(try await h.control("POST", "token_errors", ["error": "x", "status": 200]).status == 400)
            #expect(try await h.control("GET", "token_errors")["token_errors"]?.arrayValue?.isEmpty == true)
        }
    }
}
