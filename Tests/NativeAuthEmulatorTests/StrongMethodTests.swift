import NativeAuthJSON
import Testing

/// Strong-authentication methods over raw HTTP: SMS as an MFA and a registration channel, a user without a default
/// method (`introspect_required`), blocked addresses and numbers (`access_denied` + `provider_blocked_by_rep`), and
/// which parameter an AADSTS90100 names.
@Suite struct StrongMethodTests {
    static let sam = ("sam@contoso.com", "Sam-Passw0rd!")
    static let samMail = "sam.backup@fabrikam.com"
    static let samPhone = "+15555550123"

    /// A password user with an email and an SMS method (and `extra` settings).
    func addSam(_ h: Harness, _ extra: [String: JSONValue] = [:]) async throws {
        var body: [String: JSONValue] = [
            "email": .string(Self.sam.0), "password": .string(Self.sam.1), "mfa_email": .string(Self.samMail),
            "mfa_phone": .string(Self.samPhone),
        ]
        body.merge(extra) { _, new in new }
        let r = try await h.control("POST", "users", .object(body))
        try expect(r.status == 200, "users: \(r.text)")
    }

    /// Password sign-in up to `mfa_required`, then `/introspect`: its continuation token and methods.
    func introspected(_ h: Harness, _ user: (String, String)) async throws -> (String, [JSONValue]) {
        let ct = try await h.passwordChallenge(user.0)
        let t = try await h.post(
            "/oauth2/v2.0/token",
            ["continuation_token": ct, "grant_type": "password", "password": user.1, "scope": "openid"]
        )
        try expect(t["suberror"] == "mfa_required", "token: \(t.text)")
        let intro = try await h.post(
            "/oauth2/v2.0/introspect",
            ["continuation_token": t.string["continuation_token"] ?? ""]
        )
        try expect(intro.status == 200, "introspect: \(intro.text)")
        return (intro.string["continuation_token"] ?? "", intro["methods"]?.arrayValue ?? [])
    }

    func challenge(_ h: Harness, _ ct: String, id: String?) async throws -> Harness.Reply {
        var f = ["continuation_token": ct, "challenge_type": Harness.types]
        if let id { f["id"] = id }
        return try await h.post("/oauth2/v2.0/challenge", f)
    }

    @Test func withoutADefaultMethodTheChallengeAsksForIntrospection() async throws {
        try await withEmulator { h in
            try await addSam(h)
            let (ct, methods) = try await introspected(h, Self.sam)
            #expect(methods.map { $0["challenge_channel"] } == ["email", "sms"])
            #expect(methods.last?["login_hint"]?.stringValue?.hasSuffix("***") == true)
            #expect(methods.last?["login_hint"]?.stringValue?.contains("0123") == false)
            let noID = try await challenge(h, ct, id: nil)
            #expect(noID.status == 400 && noID["error"] == "invalid_request")
            #expect(noID["suberror"] == "introspect_required" && noID["continuation_token"] == nil)
            // The token the challenge was sent with introspects again (as MSAL Android does) …
            let again = try await h.post("/oauth2/v2.0/introspect", ["continuation_token": ct])
            #expect(again.status == 200 && again["methods"]?.arrayValue?.count == 2)
            // … and a chosen method gets its code: SMS, to the phone, with a masked label.
            let sms = try #require(again["methods"]?.arrayValue?.last?["id"]?.stringValue)
            let ch = try await challenge(h, again.string["continuation_token"] ?? "", id: sms)
            #expect(ch["challenge_type"] == "oob" && ch["challenge_channel"] == "sms" && ch["code_length"] == 8)
            let label = try #require(ch.string["challenge_target_label"])
            #expect(label.hasPrefix("+1") && label.hasSuffix("*") && !label.contains("0123"))
            let outbox = try await h.control("GET", "outbox?to=%2B15555550123")
            #expect(outbox["messages"]?.arrayValue?.last?["channel"] == "sms")
            let ok = try await h.post(
                "/oauth2/v2.0/token",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "", "grant_type": "mfa_oob",
                    "oob": try await h.lastCode("%2B15555550123"), "scope": "openid",
                ]
            )
            #expect(ok.status == 200 && ok["access_token"] != nil)
        }
    }

    @Test func aDefaultMethodOrTheOnlyOneIsUsedWithoutAnID() async throws {
        try await withEmulator { h in
            try await addSam(h, ["mfa_default": "sms"])
            let (ct, _) = try await introspected(h, Self.sam)
            let ch = try await challenge(h, ct, id: nil)
            #expect(ch["challenge_channel"] == "sms")
            let (ct2, _) = try await introspected(h, mike)  // one method: no id needed
            #expect(try await challenge(h, ct2, id: nil)["challenge_channel"] == "email")
            let bad = try await h.control("POST", "users", ["email": "x@contoso.com", "mfa_phone": "555-0100"])
            #expect(bad.status == 400)
        }
    }

    @Test func aBlockedMethodIsRefusedAndTheFlowGoesOn() async throws {
        try await withEmulator { h in
            try await addSam(h, ["mfa_email": "blocked@fabrikam.com"])
            let (ct, methods) = try await introspected(h, Self.sam)
            let blocked = try await challenge(h, ct, id: methods.first?["id"]?.stringValue)
            #expect(blocked.status == 400 && blocked["error"] == "access_denied")
            #expect(blocked["suberror"] == "provider_blocked_by_rep")
            let sms = try await challenge(h, ct, id: methods.last?["id"]?.stringValue)
            #expect(sms["challenge_channel"] == "sms")
        }
    }

    @Test func registeringAPhoneNumber() async throws {
        try await withEmulator { h in
            let ct = try await h.passwordChallenge(rita.0)
            let t = try await h.post(
                "/oauth2/v2.0/token",
                ["continuation_token": ct, "grant_type": "password", "password": rita.1, "scope": "openid"]
            )
            let intro = try await h.post(
                "/register/v1.0/introspect",
                ["continuation_token": t.string["continuation_token"] ?? ""]
            )
            #expect(intro["methods"]?.arrayValue?.map { $0["challenge_channel"] } == ["email", "sms"])
            let ctI = intro.string["continuation_token"] ?? ""
            func register(_ target: String) async throws -> Harness.Reply {
                try await h.post(
                    "/register/v1.0/challenge",
                    [
                        "continuation_token": ctI, "challenge_type": "oob", "challenge_target": target,
                        "challenge_channel": "sms",
                    ]
                )
            }
            #expect(try await register("rita@contoso.com")["error_codes"] == [901001])  // not a phone number
            let blocked = try await register("+15555550100")
            #expect(blocked["error"] == "access_denied" && blocked["suberror"] == "provider_blocked_by_rep")
            let ch = try await register("+15555550177")
            #expect(ch["challenge_channel"] == "sms" && ch["challenge_target"] == "+15555550177")
            let cont = try await h.post(
                "/register/v1.0/continue",
                [
                    "continuation_token": ch.string["continuation_token"] ?? "", "grant_type": "oob",
                    "oob": try await h.lastCode("%2B15555550177"),
                ]
            )
            #expect(cont.status == 200)
            // The next sign-in's second factor goes to that phone.
            let (ct2, methods) = try await introspected(h, rita)
            #expect(methods.map { $0["challenge_channel"] } == ["sms"])
            #expect(try await challenge(h, ct2, id: nil)["challenge_channel"] == "sms")
        }
    }

    @Test func aMalformedClientIDIsNinetyOneHundredAnUnknownOneUnauthorized() async throws {
        try await withEmulator { h in
            let start = ["username": ann.0, "challenge_type": Harness.types]
            var malformed = start
            malformed["client_id"] = "not-a-guid"
            let r = try await h.post("/oauth2/v2.0/initiate", malformed)
            #expect(r["error"] == "invalid_request" && r["error_codes"] == [90100])
            #expect(r.string["error_description"]?.contains("client_id parameter is empty or not valid") == true)
            var unknown = start
            unknown["client_id"] = "12345678-aaaa-bbbb-cccc-1234567890ab"
            #expect(try await h.post("/oauth2/v2.0/initiate", unknown)["error"] == "unauthorized_client")
        }
    }
}
