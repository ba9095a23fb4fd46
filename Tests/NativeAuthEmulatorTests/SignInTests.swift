import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthJSON
import Testing

@Suite struct SignInTests {
    @Test func passwordSignInReturnsAWellFormedTokenResponse() async throws {
        try await withEmulator { h in
            let r = try await h.passwordSignIn(ann.0, ann.1, scope: "\(todoRead) openid profile offline_access")
            #expect(r.status == 200)
            #expect(r["token_type"] == "Bearer")
            #expect(r.string["scope"]?.split(separator: " ").contains(Substring(todoRead)) == true)
            #expect((r["expires_in"]?.intValue ?? 0) > 0)
            #expect(r["refresh_token"] != nil && r["id_token"] != nil)
            // client_info ↔ id token consistency
            let clientInfo = try #require(r.string["client_info"])
            let info = try JSONValue.parse(try #require(Base64.decode(clientInfo)))
            let id = try JWT(decoding: try #require(r.string["id_token"]))
            #expect(info["uid"] == id.claims["oid"] && info["utid"] == id.claims["tid"])
            #expect(id.claims["aud"]?.stringValue == h.clientID)
            #expect(id.claims["preferred_username"] == "ann@contoso.com")
            #expect(id.claims["ver"] == "2.0")
            for claim in ["iss", "iat", "nbf", "exp", "sub", "name"] { #expect(id.claims[claim] != nil, "\(claim)") }
            let at = try JWT(decoding: try #require(r.string["access_token"]))
            #expect(at.claims["aud"] == "11112222-bbbb-3333-cccc-4444dddd5555")
            #expect(at.claims["scp"] == "ToDoList.Read")
            #expect(at.header["kid"] != nil)
            // signature verifies with the published JWKS
            let keys = try await h.get("/contoso.onmicrosoft.com/discovery/v2.0/keys")
            let jwk = try #require(keys["keys"]?.arrayValue?.first)
            let pub = try RSAPublicKey(jwk: try #require(jwk["n"]?.stringValue), try #require(jwk["e"]?.stringValue))
            #expect(at.verify(with: pub) && id.verify(with: pub))
            // headers: echo client-request-id, send x-ms-request-id
            #expect(r.response.header("client-request-id") != nil && r.response.header("x-ms-request-id") != nil)
        }
    }

    @Test func refreshAndIDTokensOnlyWhenAsked() async throws {
        try await withEmulator { h in
            let r = try await h.passwordSignIn(ann.0, ann.1, scope: todoRead)
            #expect(r.status == 200 && r["refresh_token"] == nil && r["id_token"] == nil && r["client_info"] != nil)
        }
    }

    @Test func wrongPasswordKeepsTheFlowUsable() async throws {
        try await withEmulator { h in
            let ct = try await h.passwordChallenge(ann.0)
            let bad = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ct, "grant_type": "password", "password": "nope",
                    "scope": "openid",
                ]
            )
            #expect(bad.status == 400 && bad["error"] == "invalid_grant" && bad["error_codes"] == [50126])
            for key in ["error_description", "timestamp", "trace_id", "correlation_id"] { #expect(bad[key] != nil) }
            #expect(bad.string["error_description"]?.hasPrefix("AADSTS50126:") == true)
            let good = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ct, "grant_type": "password", "password": ann.1,
                    "scope": "openid",
                ]
            )
            #expect(good.status == 200)
            // the token is single-use
            let again = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ct, "grant_type": "password", "password": ann.1,
                    "scope": "openid",
                ]
            )
            #expect(again.status == 400 && again["error_codes"] == [55200])
        }
    }

    @Test func otpSignInAndResendInvalidatesTheOldCode() async throws {
        try await withEmulator { h in
            let i = try await h.post("/oauth2/v2.0/initiate", ["username": olivia, "challenge_type": "oob redirect"])
            let c1 = try await h.post(
                "/oauth2/v2.0/challenge",
                ["continuation_token": i.string["continuation_token"] ?? ""]
            )
            #expect(
                c1["challenge_type"] == "oob" && c1["binding_method"] == "prompt" && c1["challenge_channel"] == "email"
            )
            #expect(c1["code_length"] == 8)
            #expect(c1.string["challenge_target_label"]?.contains("***") == true)
            #expect(c1.string["challenge_target_label"]?.contains(olivia) == false)
            let old = try await h.lastCode(olivia)
            let c2 = try await h.post(
                "/oauth2/v2.0/challenge",
                ["continuation_token": c1.string["continuation_token"] ?? ""]
            )  // resend
            let new = try await h.lastCode(olivia)
            #expect(old != new)
            let ct = c2.string["continuation_token"] ?? ""
            let stale = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct, "grant_type": "oob", "oob": old, "scope": "openid"]
            )
            #expect(stale.status == 400 && stale["suberror"] == "invalid_oob_value")
            let ok = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ct, "grant_type": "oob", "oob": new, "scope": "openid offline_access",
                    "client_info": "true",
                ]
            )
            #expect(ok.status == 200 && ok["refresh_token"] != nil)
        }
    }

    @Test func startErrors() async throws {
        try await withEmulator { h in
            let types = Harness.types
            let unknownUser = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": "nobody@contoso.com", "challenge_type": types]
            )
            #expect(unknownUser["error"] == "user_not_found" && unknownUser["error_codes"] == [50034])
            let badName = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": "not-an-email", "challenge_type": types]
            )
            #expect(badName["error"] == "invalid_request" && badName["error_codes"] == [90100])
            #expect(badName.string["error_description"]?.contains("username parameter is empty or not valid") == true)
            let noClient = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": ann.0, "challenge_type": types],
                addClient: false
            )
            #expect(noClient.string["error_description"]?.contains("client_id parameter is empty or not valid") == true)
            let unknownClient = try await h.post(
                "/oauth2/v2.0/initiate",
                ["client_id": "12345678-0000-4000-8000-00000000abcd", "username": ann.0, "challenge_type": types]
            )
            #expect(unknownClient["error"] == "unauthorized_client")
            let confidential = try await h.post(
                "/oauth2/v2.0/initiate",
                [
                    "client_id": "99990000-ffff-8888-eeee-7777dddd6666",
                    "username": ann.0, "challenge_type": types,
                ]
            )
            #expect(confidential["error"] == "invalid_client" && confidential["suberror"] == "nativeauthapi_disabled")
            let disabled = try await h.post(
                "/oauth2/v2.0/initiate",
                [
                    "client_id": "55556666-bbbb-7777-cccc-8888dddd9999",
                    "username": ann.0, "challenge_type": types,
                ]
            )
            #expect(disabled["error"] == "invalid_client" && disabled["suberror"] == "nativeauthapi_disabled")
            let noRedirect = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": ann.0, "challenge_type": "oob password"]
            )
            #expect(
                noRedirect["error"] == "invalid_request"
                    && noRedirect.string["error_description"]?.contains("'redirect'") == true
            )
            let unsupported = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": ann.0, "challenge_type": "oob sms redirect"]
            )
            #expect(unsupported.string["error_description"]?.contains("contains an unsupported challenge type") == true)
            let get = try await h.get(h.authority + "/oauth2/v2.0/initiate")
            #expect(get.status == 405)
            let grant = try await h.post("/oauth2/v2.0/token", ["grant_type": "client_credentials"])
            #expect(grant["error"] == "unsupported_grant_type" && grant["error_codes"] == [70003])
            let noGrant = try await h.post("/oauth2/v2.0/token", [:])
            #expect(noGrant["error"] == "invalid_request" && noGrant["error_codes"] == [90100])
            let noToken = try await h.post("/oauth2/v2.0/challenge", ["challenge_type": Harness.types])
            #expect(
                noToken.string["error_description"]?.contains("continuation_token parameter is empty or not valid")
                    == true
            )
        }
    }

    @Test func redirectWhenTheClientCannotDoWhatTheUserNeeds() async throws {
        try await withEmulator { h in
            // A password user needs password (and oob) challenge types.
            let r1 = try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": "oob redirect"])
            #expect(
                r1.status == 200 && r1["challenge_type"] == "redirect" && r1["redirect_reason"] != nil
                    && r1["continuation_token"] == nil
            )
            // An OTP-only user needs oob.
            let r2 = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": olivia, "challenge_type": "password redirect"]
            )
            #expect(r2["challenge_type"] == "redirect")
            // MFA needed but capability not advertised → redirect at /token.
            let ct = try await h.passwordChallenge(mike.0, caps: "")
            let r3 = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct, "grant_type": "password", "password": mike.1, "scope": "openid"]
            )
            #expect(r3.status == 200 && r3["challenge_type"] == "redirect")
            #expect(r3.string["redirect_reason"]?.contains("mfa_required") == true)
            // Registration needed without registration_required → redirect.
            let ct2 = try await h.passwordChallenge(rita.0, caps: "mfa_required")
            let r4 = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct2, "grant_type": "password", "password": rita.1, "scope": "openid"]
            )
            #expect(r4["challenge_type"] == "redirect")
            // sign-up / reset without oob
            let r5 = try await h.post(
                "/signup/v1.0/start",
                ["username": "new@contoso.com", "challenge_type": "password redirect"]
            )
            #expect(r5["challenge_type"] == "redirect")
            let r6 = try await h.post(
                "/resetpassword/v1.0/start",
                ["username": ann.0, "challenge_type": "password redirect"]
            )
            #expect(r6["challenge_type"] == "redirect")
        }
    }

    @Test func mfaSequence() async throws {
        try await withEmulator { h in
            let ct = try await h.passwordChallenge(mike.0)
            let t1 = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ct, "grant_type": "password", "password": mike.1,
                    "scope": "openid offline_access", "client_info": "true",
                ]
            )
            #expect(t1.status == 400 && t1["suberror"] == "mfa_required")
            let ct1 = try #require(t1.string["continuation_token"])
            let intro = try await h.post("/oauth2/v2.0/introspect", ["continuation_token": ct1])
            let method = try #require(intro["methods"]?.arrayValue?.first)
            #expect(
                method["challenge_type"] == "oob" && method["challenge_channel"] == "email"
                    && method["login_hint"] != nil
            )
            let id = try #require(method["id"]?.stringValue)
            let bogus = try await h.post(
                "/oauth2/v2.0/challenge",
                [
                    "continuation_token": intro.string["continuation_token"] ?? "", "id": "nope",
                    "challenge_type": Harness.types,
                ]
            )
            #expect(bogus.status == 400)
            let ch = try await h.post(
                "/oauth2/v2.0/challenge",
                [
                    "continuation_token": intro.string["continuation_token"] ?? "", "id": id,
                    "challenge_type": Harness.types,
                ]
            )
            #expect(ch["challenge_type"] == "oob" && ch["code_length"] == 8)
            let code = try await h.lastCode("mike.backup@fabrikam.com")
            let wrong = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "", "grant_type": "mfa_oob",
                    "oob": "00000000", "scope": "openid",
                ]
            )
            #expect(wrong["suberror"] == "invalid_oob_value")
            // docs' grant_type=oob for the second factor is accepted too
            let ok = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "", "grant_type": "oob",
                    "oob": code, "scope": "openid offline_access", "client_info": "true",
                ]
            )
            #expect(ok.status == 200 && ok["access_token"] != nil)
        }
    }

    @Test func strongAuthRegistration() async throws {
        try await withEmulator { h in
            let ct = try await h.passwordChallenge(rita.0)
            let t1 = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct, "grant_type": "password", "password": rita.1, "scope": "openid"]
            )
            #expect(t1["suberror"] == "registration_required")
            let intro = try await h.post(
                "/register/v1.0/introspect",
                ["continuation_token": t1.string["continuation_token"] ?? ""]
            )
            #expect(intro["methods"]?.arrayValue?.first?["id"] == "email")
            let ctI = intro.string["continuation_token"] ?? ""
            let invalid = try await h.post(
                "/register/v1.0/challenge",
                [
                    "continuation_token": ctI, "challenge_type": "oob",
                    "challenge_target": "not-an-email", "challenge_channel": "email",
                ]
            )
            #expect(invalid["error"] == "invalid_request" && invalid["error_codes"] == [901001])
            let blocked = try await h.post(
                "/register/v1.0/challenge",
                [
                    "continuation_token": ctI, "challenge_type": "oob",
                    "challenge_target": "blocked@fabrikam.com", "challenge_channel": "email",
                ]
            )
            #expect(blocked["error"] == "access_denied" && blocked["suberror"] == "provider_blocked_by_rep")
            let ch = try await h.post(
                "/register/v1.0/challenge",
                [
                    "continuation_token": ctI, "challenge_type": "oob",
                    "challenge_target": "rita.backup@fabrikam.com", "challenge_channel": "email",
                ]
            )
            #expect(
                ch["challenge_type"] == "oob" && ch["challenge_target"] == "rita.backup@fabrikam.com"
                    && ch["code_length"] == 8
            )
            let cont = try await h.post(
                "/register/v1.0/continue",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "",
                    "grant_type": "oob", "oob": try await h.lastCode("rita.backup@fabrikam.com"),
                ]
            )
            #expect(cont.status == 200)
            let tok = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": cont.string["continuation_token"] ?? "",
                    "grant_type": "continuation_token", "scope": "openid",
                ]
            )
            #expect(tok.status == 200 && tok["access_token"] != nil)
            // Next sign-in: the registered method makes it a regular MFA sign-in.
            let ct2 = try await h.passwordChallenge(rita.0)
            let t2 = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct2, "grant_type": "password", "password": rita.1, "scope": "openid"]
            )
            #expect(t2["suberror"] == "mfa_required")
        }
    }

    @Test func preverifiedRegistration() async throws {
        try await withEmulator { h in
            let ct = try await h.passwordChallenge(rita.0)
            let t1 = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct, "grant_type": "password", "password": rita.1, "scope": "openid"]
            )
            let intro = try await h.post(
                "/register/v1.0/introspect",
                ["continuation_token": t1.string["continuation_token"] ?? ""]
            )
            let ch = try await h.post(
                "/register/v1.0/challenge",
                [
                    "continuation_token": intro.string["continuation_token"] ?? "",
                    "challenge_type": "oob", "challenge_target": rita.0,
                ]
            )
            #expect(ch["challenge_type"] == "preverified")
            let cont = try await h.post(
                "/register/v1.0/continue",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "",
                    "grant_type": "continuation_token",
                ]
            )
            #expect(cont.status == 200)
        }
    }

    @Test func continuationTokensExpireAndAreBoundToTheirStep() async throws {
        try await withEmulator { h in
            let ct = try await h.passwordChallenge(ann.0)
            // misplaced: a sign-in token at a sign-up endpoint
            let misplaced = try await h.post(
                "/signup/v1.0/continue",
                ["continuation_token": ct, "grant_type": "oob", "oob": "1"]
            )
            #expect(misplaced["error"] == "invalid_request" && misplaced["error_codes"] == [55200])
            // wrong step: password token used for an oob grant
            let wrongStep = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct, "grant_type": "oob", "oob": "1", "scope": "openid"]
            )
            #expect(wrongStep["error_codes"] == [55200])
            let unknown = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": "CT.bogus", "grant_type": "password", "password": "x"]
            )
            #expect(unknown["error_codes"] == [55200])
            _ = try await h.control("POST", "clock", ["advance_seconds": 601])
            let expired = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct, "grant_type": "password", "password": ann.1, "scope": "openid"]
            )
            #expect(expired["error"] == "expired_token" && expired["error_codes"] == [552003])
        }
    }

    @Test func invalidScopes() async throws {
        try await withEmulator { h in
            let ct = try await h.passwordChallenge(ann.0)
            let two = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ct, "grant_type": "password", "password": ann.1,
                    "scope": "\(todoRead) \(notesRead)",
                ]
            )
            #expect(two["error"] == "invalid_scope" && two["error_codes"] == [28000])
            let unknown = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ct, "grant_type": "password", "password": ann.1,
                    "scope": "api://11112222-bbbb-3333-cccc-4444dddd5555/Nope",
                ]
            )
            #expect(unknown["error"] == "invalid_scope")
            let ok = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct, "grant_type": "password", "password": ann.1, "scope": "openid"]
            )
            #expect(ok.status == 200)  // scope errors leave the flow usable
        }
    }
}
