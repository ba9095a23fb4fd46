import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Testing

@Suite(.serialized) struct FlowTests {
    @Test func otpSignInWithResend() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_sign_in, ["username": "olivia@contoso.com"])
        #expect(
            start.doc["status"] == "code_required" && start.doc["channel"] == "email" && start.doc["code_length"] == 8
        )
        #expect(start.doc["sent_to"]?.stringValue?.contains("***") == true)
        let flow = try #require(start.doc["flow"]?.stringValue)
        let old = try emu.lastCode("olivia@contoso.com")
        let resent = c.call(na_flow_submit, ["flow": .string(flow), "action": "resend_code"])
        #expect(resent.doc["status"] == "code_required" && resent.doc["flow"] == .string(flow))
        let new = try emu.lastCode("olivia@contoso.com")
        #expect(old != new)
        let stale = c.call(na_flow_submit, ["flow": .string(flow), "code": .string(old)])
        #expect(
            stale.rc == NA_EAUTH && stale.doc.errorCode == "invalid_code"
                && stale.doc["error"]?["server"]?["suberror"] == "invalid_oob_value"
        )
        let ok = c.call(na_flow_submit, ["flow": .string(flow), "code": .string(new)])
        #expect(ok.rc == NA_OK && ok.doc["status"] == "signed_in")
    }

    @Test func signUpPasswordLateWithRequiredAndInvalidAttributes() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_sign_up, ["username": "newbie@contoso.com", "attributes": ["city": "Oslo"]])
        #expect(start.doc["status"] == "code_required" && start.doc["flow_type"] == "sign_up", "\(start.doc)")
        let flow = try #require(start.doc["flow"]?.stringValue)
        let pw = c.call(
            na_flow_submit,
            ["flow": .string(flow), "code": .string(try emu.lastCode("newbie@contoso.com"))]
        )
        #expect(pw.doc["status"] == "password_required", "\(pw.doc)")
        let weak = c.call(na_flow_submit, ["flow": .string(flow), "password": "weakweak"])
        #expect(
            weak.rc == NA_EAUTH && weak.doc.errorCode == "invalid_password"
                && weak.doc["error"]?["reason"] == "password_too_weak"
        )
        let attrs = c.call(na_flow_submit, ["flow": .string(flow), "password": "Str0ng-Passw0rd!"])
        #expect(attrs.doc["status"] == "attributes_required")
        #expect(attrs.doc["required_attributes"] == [["name": "displayName", "type": "string", "required": true]])
        let invalid = c.call(
            na_flow_submit,
            ["flow": .string(flow), "attributes": ["displayName": "N", "postalCode": "abc"]]
        )
        #expect(
            invalid.rc == NA_EAUTH && invalid.doc.errorCode == "attributes_invalid"
                && invalid.doc["error"]?["attributes"] == ["postalCode"]
        )
        #expect(invalid.doc["error"]?["flow"] == .string(flow))
        let done = c.call(
            na_flow_submit,
            [
                "flow": .string(flow), "action": "submit_attributes",
                "attributes": ["displayName": "New Bie", "postalCode": 12345],
            ]
        )
        #expect(done.doc["status"] == "sign_up_completed", "\(done.doc)")
        let signedIn = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "sign_in", "scopes": [.string(emu.apiScopes.notes)]]
        )
        #expect(
            signedIn.doc["status"] == "signed_in" && signedIn.doc["account"]?["username"] == "newbie@contoso.com",
            "\(signedIn.doc)"
        )
        let exists = c.call(na_sign_up, ["username": "newbie@contoso.com", "password": "Str0ng-Passw0rd!"])
        #expect(exists.rc == NA_EAUTH && exists.doc.errorCode == "user_already_exists")
    }

    @Test func signUpWithPasswordUpFront() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(
            na_sign_up,
            [
                "username": "early@contoso.com", "password": "Str0ng-Passw0rd!",
                "attributes": ["displayName": "Early Bird"],
            ]
        )
        let flow = try #require(start.doc["flow"]?.stringValue)
        let done = c.call(
            na_flow_submit,
            ["flow": .string(flow), "code": .string(try emu.lastCode("early@contoso.com"))]
        )
        #expect(done.doc["status"] == "sign_up_completed")
        #expect(c.call(na_flow_submit, ["flow": .string(flow), "action": "sign_in"]).doc["status"] == "signed_in")
        let weak = c.call(na_sign_up, ["username": "weak@contoso.com", "password": "weakweak"])
        #expect(weak.doc.errorCode == "invalid_password" && weak.doc["error"]?["flow"] == nil)
    }

    @Test func resetPasswordWithPollingThenSignIn() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        try emu.control("POST", "settings", ["reset_poll_interval": 0, "reset_in_progress_polls": 2])
        let start = c.call(na_reset_password, ["username": .string(annEmail)])
        #expect(start.doc["status"] == "code_required" && start.doc["flow_type"] == "reset_password")
        let flow = try #require(start.doc["flow"]?.stringValue)
        let pw = c.call(na_flow_submit, ["flow": .string(flow), "code": .string(try emu.lastCode(annEmail))])
        #expect(pw.doc["status"] == "password_required")
        let reused = c.call(na_flow_submit, ["flow": .string(flow), "password": .string(annPassword)])
        #expect(
            reused.doc.errorCode == "invalid_password" && reused.doc["error"]?["reason"] == "password_recently_used"
        )
        let done = c.call(na_flow_submit, ["flow": .string(flow), "password": "N3w-Passw0rd!"])
        #expect(done.doc["status"] == "password_reset_completed", "\(done.doc)")
        #expect(try emu.requests("/poll_completion").count == 3)  // in_progress, in_progress, succeeded
        let signedIn = c.call(na_flow_submit, ["flow": .string(flow), "action": "sign_in"])
        #expect(signedIn.doc["status"] == "signed_in")
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": "N3w-Passw0rd!"]).rc == NA_OK)
        let otpUser = c.call(na_reset_password, ["username": "olivia@contoso.com"])
        #expect(otpUser.rc == NA_EAUTH && otpUser.doc.errorCode == "user_has_no_password")
    }

    @Test func mfa() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(
            na_sign_in,
            ["username": "mike@contoso.com", "password": "Mfa-Passw0rd!", "scopes": [.string(emu.apiScopes.todo)]]
        )
        #expect(start.doc["status"] == "mfa_required", "\(start.doc)")
        let flow = try #require(start.doc["flow"]?.stringValue)
        let method = try #require(start.doc["methods"]?.arrayValue?.first)
        #expect(method["channel"] == "email" && method["login_hint"] != nil)
        let early = c.call(na_flow_submit, ["flow": .string(flow), "code": "12345678"])
        #expect(
            early.rc == NA_ESTATE && early.doc.errorCode == "flow_invalid"
                && early.doc["error"]?["expected"] == "request_challenge"
        )
        let ch = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "request_challenge", "method_id": method["id"] ?? .null]
        )
        #expect(ch.doc["status"] == "code_required")
        let resend = c.call(na_flow_submit, ["flow": .string(flow), "action": "resend_code"])
        #expect(resend.doc["status"] == "code_required")
        let ok = c.call(
            na_flow_submit,
            ["flow": .string(flow), "code": .string(try emu.lastCode("mike.backup@fabrikam.com"))]
        )
        #expect(ok.doc["status"] == "signed_in", "\(ok.doc)")
        #expect(ok.doc["token"]?["scopes"]?.arrayValue?.contains(.string(emu.apiScopes.todo)) == true)
    }

    @Test func registration() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_sign_in, ["username": "rita@contoso.com", "password": "Reg-Passw0rd!"])
        #expect(start.doc["status"] == "registration_required", "\(start.doc)")
        let flow = try #require(start.doc["flow"]?.stringValue)
        let bad = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "register_method", "contact": "not-an-email"]
        )
        #expect(bad.rc == NA_EAUTH && bad.doc.errorCode == "invalid_contact")
        let blocked = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "register_method", "contact": "blocked@fabrikam.com"]
        )
        #expect(blocked.doc.errorCode == "contact_blocked")
        let ch = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "register_method", "contact": "rita.phone@fabrikam.com"]
        )
        #expect(ch.doc["status"] == "code_required" && ch.doc["sent_to"] == "rita.phone@fabrikam.com", "\(ch.doc)")
        let ok = c.call(
            na_flow_submit,
            ["flow": .string(flow), "code": .string(try emu.lastCode("rita.phone@fabrikam.com"))]
        )
        #expect(ok.doc["status"] == "signed_in", "\(ok.doc)")
        // preverified: registering the sign-in address itself needs no code
        _ = try emu.control(
            "POST",
            "users",
            ["email": "rob@contoso.com", "password": "Rob-Passw0rd!", "requires_registration": true]
        )
        let rob = c.call(na_sign_in, ["username": "rob@contoso.com", "password": "Rob-Passw0rd!"])
        let robFlow = try #require(rob.doc["flow"]?.stringValue)
        let pre = c.call(
            na_flow_submit,
            ["flow": .string(robFlow), "action": "register_method", "contact": "rob@contoso.com"]
        )
        #expect(pre.doc["status"] == "signed_in", "\(pre.doc)")
    }

    @Test func browserRequiredAndCapabilities() throws {
        let emu = try EmulatorProcess()
        let oobOnly = try ABIClient(emu, ["challenge_types": ["oob"]])
        let r = oobOnly.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        #expect(
            r.rc == NA_EINTERACTION && r.doc.errorCode == "browser_required"
                && r.doc["error"]?["redirect_reason"] != nil
        )
        let noCaps = try ABIClient(emu, ["capabilities": []])
        let m = noCaps.call(na_sign_in, ["username": "mike@contoso.com", "password": "Mfa-Passw0rd!"])
        #expect(
            m.doc.errorCode == "browser_required"
                && m.doc["error"]?["redirect_reason"]?.stringValue?.contains("mfa_required") == true
        )
        // capabilities and challenge types went on the wire as the spec says
        let initiate = try #require(try emu.requests("/oauth2/v2.0/initiate").first)
        #expect(initiate["fields"]?["challenge_type"] == "oob redirect")
        #expect(initiate["fields"]?["client_id"] == .string(emu.clientID))
        let full = try ABIClient(emu)
        try emu.clearLog()
        _ = full.call(
            na_sign_in,
            ["username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(emu.apiScopes.todo)]]
        )
        let log = try emu.requests().filter { !($0["path"]?.stringValue ?? "").contains("openid-configuration") }
        #expect(log.first?["fields"]?["challenge_type"] == "oob password redirect")
        #expect(log.first?["fields"]?["capabilities"] == "mfa_required registration_required")
        #expect(log.last?["fields"]?["scope"] == .string("\(emu.apiScopes.todo) openid profile offline_access"))
        // native-auth token requests send client_info=true, as MSAL's native-auth SDKs do
        #expect(log.last?["fields"]?["client_info"] == "true")
        #expect(log.last?["headers"]?["x-client-sku"] == "NativeAuth.Linux")
        // one client-request-id for every request of the sign-in
        #expect(log.count == 3 && Set(log.compactMap { $0["client_request_id"]?.stringValue }).count == 1)
    }

    @Test func flowsExpireAndAreSingleUse() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_sign_in, ["username": "olivia@contoso.com"])
        let flow = try #require(start.doc["flow"]?.stringValue)
        try emu.control("POST", "clock", ["advance_seconds": 700])
        let expired = c.call(
            na_flow_submit,
            ["flow": .string(flow), "code": .string(try emu.lastCode("olivia@contoso.com"))]
        )
        #expect(expired.rc == NA_ESTATE && expired.doc.errorCode == "flow_expired")
        let gone = c.call(na_flow_submit, ["flow": .string(flow), "action": "resend_code"])
        #expect(gone.doc.errorCode == "flow_invalid")
        #expect(c.call(na_flow_submit, ["flow": "f_unknown", "action": "resend_code"]).doc.errorCode == "flow_invalid")
        let s2 = c.call(na_sign_in, ["username": "olivia@contoso.com"])
        let f2 = try #require(s2.doc["flow"]?.stringValue)
        #expect(c.call(na_flow_submit, ["flow": .string(f2), "action": "cancel"]).doc["status"] == "cancelled")
        #expect(c.call(na_flow_submit, ["flow": .string(f2), "action": "resend_code"]).doc.errorCode == "flow_invalid")
    }
}
