import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Testing

/// Second factors through the C ABI against the emulator: MFA by SMS, a user without a default method (the server's
/// `introspect_required`), blocked methods and contacts, registering a phone; and which parameter an AADSTS90100
/// answer names (a username, the client id, or neither).
@Suite(.serialized) struct StrongMethodFlowTests {
    static let sam = ("sam@contoso.com", "Sam-Passw0rd!")
    static let samPhone = "+15555550123"

    /// Adds sam: a password user with an email and an SMS method (and `extra`).
    func addSam(_ emu: EmulatorProcess, _ extra: [String: JSONValue] = [:]) throws {
        var body: [String: JSONValue] = [
            "email": .string(Self.sam.0), "password": .string(Self.sam.1),
            "mfa_email": "sam.backup@fabrikam.com", "mfa_phone": .string(Self.samPhone),
        ]
        body.merge(extra) { _, new in new }
        try emu.control("POST", "users", .object(body))
    }

    func signInSam(_ c: ABIClient) throws -> (flow: String, methods: [JSONValue]) {
        let start = c.call(na_sign_in, ["username": .string(Self.sam.0), "password": .string(Self.sam.1)])
        #expect(start.doc["status"] == "mfa_required", "\(start.doc)")
        return (try #require(start.doc["flow"]?.stringValue), start.doc["methods"]?.arrayValue ?? [])
    }

    @Test func withoutADefaultMethodTheLibraryIntrospectsAndAsksForAChoice() throws {
        let emu = try EmulatorProcess()
        try addSam(emu)
        let c = try ABIClient(emu)
        let (flow, methods) = try signInSam(c)
        #expect(methods.map { $0["channel"] } == ["email", "sms"])
        try emu.clearLog()
        // No method_id: the challenge names none; the server has no default, so the methods are listed again.
        let again = c.call(na_flow_submit, ["flow": .string(flow), "action": "request_challenge"])
        #expect(again.rc == NA_OK && again.doc["status"] == "mfa_required", "\(again.doc)")
        #expect(again.doc["flow"] == .string(flow) && again.doc["methods"]?.arrayValue?.count == 2)
        let steps = try emu.requests().map { r in
            (r["path"]?.stringValue?.split(separator: "/").last.map(String.init) ?? "", r["fields"]?["id"])
        }
        #expect(steps.map(\.0) == ["challenge", "introspect"] && steps.first?.1 == nil, "\(steps)")
        // The SMS method, chosen: a code to the phone.
        let sms = try #require(again.doc["methods"]?.arrayValue?.first(where: { $0["channel"] == "sms" }))
        let code = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "request_challenge", "method_id": sms["id"] ?? .null]
        )
        #expect(code.doc["status"] == "code_required" && code.doc["channel"] == "sms", "\(code.doc)")
        #expect(code.doc["sent_to"]?.stringValue?.contains("0123") == false)
        let ok = c.call(na_flow_submit, ["flow": .string(flow), "code": .string(try emu.lastCode("%2B15555550123"))])
        #expect(ok.doc["status"] == "signed_in", "\(ok.doc)")
    }

    @Test func theDefaultMethodIsUsedWhenTheAppNamesNone() throws {
        let emu = try EmulatorProcess()
        try addSam(emu, ["mfa_default": "sms"])
        let c = try ABIClient(emu)
        let (flow, _) = try signInSam(c)
        let code = c.call(na_flow_submit, ["flow": .string(flow), "action": "request_challenge"])
        #expect(code.doc["status"] == "code_required" && code.doc["channel"] == "sms", "\(code.doc)")
    }

    @Test func aBlockedMethodKeepsTheFlowForAnother() throws {
        let emu = try EmulatorProcess()
        try addSam(emu, ["mfa_email": "blocked@fabrikam.com"])
        let c = try ABIClient(emu)
        let (flow, methods) = try signInSam(c)
        let blocked = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "request_challenge", "method_id": methods.first?["id"] ?? .null]
        )
        #expect(blocked.rc == NA_EAUTH && blocked.doc.errorCode == "auth_method_blocked", "\(blocked.doc)")
        #expect(blocked.doc["error"]?["flow"] == .string(flow))
        #expect(blocked.doc["error"]?["server"]?["suberror"] == "provider_blocked_by_rep")
        let sms = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "request_challenge", "method_id": methods.last?["id"] ?? .null]
        )
        #expect(sms.doc["status"] == "code_required" && sms.doc["channel"] == "sms", "\(sms.doc)")
    }

    @Test func registeringAPhoneNumber() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_sign_in, ["username": "rita@contoso.com", "password": "Reg-Passw0rd!"])
        #expect(start.doc["status"] == "registration_required", "\(start.doc)")
        let flow = try #require(start.doc["flow"]?.stringValue)
        let sms = try #require(start.doc["methods"]?.arrayValue?.first(where: { $0["channel"] == "sms" }))
        func register(_ contact: String) -> (rc: Int32, doc: JSONValue) {
            c.call(
                na_flow_submit,
                [
                    "flow": .string(flow), "action": "register_method", "contact": .string(contact),
                    "method_id": sms["id"] ?? .null,
                ]
            )
        }
        #expect(register("rita@contoso.com").doc.errorCode == "invalid_contact")
        let blocked = register("+15555550100")
        #expect(blocked.rc == NA_EAUTH && blocked.doc.errorCode == "contact_blocked", "\(blocked.doc)")
        let code = register("+15555550177")
        #expect(code.doc["status"] == "code_required" && code.doc["channel"] == "sms", "\(code.doc)")
        #expect(code.doc["sent_to"] == "+15555550177")
        let ok = c.call(na_flow_submit, ["flow": .string(flow), "code": .string(try emu.lastCode("%2B15555550177"))])
        #expect(ok.doc["status"] == "signed_in", "\(ok.doc)")
    }

    @Test func ninetyOneHundredIsTheUsernameOnlyWhenTheServerSaysSo() throws {
        let emu = try EmulatorProcess()
        // A client id the service reads as malformed: AADSTS90100 naming client_id.
        let bad = try ABIClient(emu, ["client_id": "not-a-guid"])
        let refused = bad.call(na_sign_in, ["username": "ann@contoso.com"])
        #expect(refused.rc == NA_EINVAL && refused.doc.errorCode == "invalid_client", "\(refused.doc)")
        #expect(refused.doc["error"]?["server"]?["error_codes"] == [90100])
        let c = try ABIClient(emu)
        let username = c.call(na_sign_in, ["username": "not-an-email"])
        #expect(username.rc == NA_EAUTH && username.doc.errorCode == "invalid_username", "\(username.doc)")
        // Another parameter: neither the user's input nor the registration.
        try emu.control(
            "POST",
            "faults",
            [
                "path": "/oauth2/v2.0/initiate", "status": 400,
                "body": [
                    "error": "invalid_request", "error_codes": [90100],
                    "error_description": "AADSTS90100: challenge_type parameter is empty or not valid.",
                ],
            ]
        )
        let other = c.call(na_sign_in, ["username": "ann@contoso.com"])
        #expect(other.rc == NA_ESERVER && other.doc.errorCode == "server", "\(other.doc)")
        #expect(other.doc["error"]?["message"]?.stringValue?.contains("challenge_type") == false)
    }
}
