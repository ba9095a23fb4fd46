import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Testing

@Suite(.serialized) struct SecretsTests {
    /// Every flow at the most verbose level into a capturing callback: no password, code, continuation token,
    /// access/refresh/ID token or email address may appear in a log line or an error message.
    @Test func nothingSecretInLogsOrErrors() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        c.enableLogging()
        try emu.control("POST", "settings", ["reset_poll_interval": 0])
        let passwords = [
            annPassword, "Mfa-Passw0rd!", "Reg-Passw0rd!", "Str0ng-Passw0rd!", "N3w-Passw0rd!", "wrong-Passw0rd!",
            "weakweak",
        ]
        var tokens: [String] = []
        // password sign-in, wrong then right
        _ = c.call(na_sign_in, ["username": .string(annEmail), "password": "wrong-Passw0rd!"])
        let s = c.call(
            na_sign_in,
            ["username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(emu.apiScopes.todo)]]
        )
        tokens.append(s.doc["token"]?["access_token"]?.stringValue ?? "")
        let t = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)], "force_refresh": true])
        tokens.append(t.doc["access_token"]?.stringValue ?? "")
        _ = c.call(na_call_api, ["url": .string(emu.apiURLs.todo), "scopes": [.string(emu.apiScopes.todo)]])
        tokens.append(c.call(na_get_account, ["include_id_token": true]).doc["account"]?["id_token"]?.stringValue ?? "")
        // OTP with a wrong code and a resend
        let o = c.call(na_sign_in, ["username": "olivia@contoso.com"])
        _ = c.call(na_flow_submit, ["flow": o.doc["flow"] ?? .null, "code": "11111111"])
        _ = c.call(na_flow_submit, ["flow": o.doc["flow"] ?? .null, "action": "resend_code"])
        _ = c.call(
            na_flow_submit,
            ["flow": o.doc["flow"] ?? .null, "code": .string(try emu.lastCode("olivia@contoso.com"))]
        )
        // sign-up with a weak password, attributes, completion
        let u = c.call(na_sign_up, ["username": "secret.user@contoso.com", "attributes": ["city": "Oslo"]])
        _ = c.call(
            na_flow_submit,
            ["flow": u.doc["flow"] ?? .null, "code": .string(try emu.lastCode("secret.user@contoso.com"))]
        )
        _ = c.call(na_flow_submit, ["flow": u.doc["flow"] ?? .null, "password": "weakweak"])
        _ = c.call(na_flow_submit, ["flow": u.doc["flow"] ?? .null, "password": "Str0ng-Passw0rd!"])
        _ = c.call(
            na_flow_submit,
            ["flow": u.doc["flow"] ?? .null, "attributes": ["displayName": "S", "postalCode": "x"]]
        )
        _ = c.call(na_flow_submit, ["flow": u.doc["flow"] ?? .null, "attributes": ["displayName": "S"]])
        _ = c.call(na_flow_submit, ["flow": u.doc["flow"] ?? .null, "action": "sign_in"])
        // reset
        let r = c.call(na_reset_password, ["username": .string(annEmail)])
        _ = c.call(na_flow_submit, ["flow": r.doc["flow"] ?? .null, "code": .string(try emu.lastCode(annEmail))])
        _ = c.call(na_flow_submit, ["flow": r.doc["flow"] ?? .null, "password": .string(annPassword)])
        _ = c.call(na_flow_submit, ["flow": r.doc["flow"] ?? .null, "password": "N3w-Passw0rd!"])
        // MFA and registration
        let m = c.call(na_sign_in, ["username": "mike@contoso.com", "password": "Mfa-Passw0rd!"])
        _ = c.call(na_flow_submit, ["flow": m.doc["flow"] ?? .null, "action": "request_challenge"])
        _ = c.call(
            na_flow_submit,
            ["flow": m.doc["flow"] ?? .null, "code": .string(try emu.lastCode("mike.backup@fabrikam.com"))]
        )
        let g = c.call(na_sign_in, ["username": "rita@contoso.com", "password": "Reg-Passw0rd!"])
        _ = c.call(
            na_flow_submit,
            ["flow": g.doc["flow"] ?? .null, "action": "register_method", "contact": "rita.alt@fabrikam.com"]
        )
        _ = c.call(
            na_flow_submit,
            ["flow": g.doc["flow"] ?? .null, "code": .string(try emu.lastCode("rita.alt@fabrikam.com"))]
        )
        // refresh failures
        try emu.control("POST", "users/revoke", ["email": "rita@contoso.com"])
        _ = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)], "force_refresh": true])
        _ = c.call(na_sign_out, ["v": 1])

        let lines = c.logs.all
        #expect(lines.count > 30)
        let codes = try emu.allCodes()
        let secrets = passwords + codes + tokens.filter { !$0.isEmpty }
        let patterns = ["CT.", "RT.", "eyJ", "@contoso.com", "@fabrikam.com"]
        for line in lines {
            for secret in secrets { #expect(!line.contains(secret), "log line holds a secret: \(line)") }
            for p in patterns { #expect(!line.contains(p), "log line holds \(p): \(line)") }
        }
        let errors = c.outputs.withLock { $0 }.compactMap { try? JSONValue.parse($0) }.filter { $0["error"] != nil }
        #expect(errors.count >= 6)
        for e in errors {
            let message = e["error"]?["message"]?.stringValue ?? ""
            let whole = e.serialized()
            for secret in secrets { #expect(!whole.contains(secret), "error holds a secret: \(whole)") }
            for p in patterns { #expect(!message.contains(p), "error message holds \(p): \(message)") }
            #expect(!whole.contains("CT.") && !whole.contains("RT."), "\(whole)")
        }
    }
}
