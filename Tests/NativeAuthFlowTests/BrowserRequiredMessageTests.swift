import NativeAuthCABI
import NativeAuthJSON
import Testing

/// `browser_required`'s message says what would have let the sign-in continue in the app, when the server's answer
/// tells: the capability a redirect names (MFA, strong-auth registration), a redirect right after a correct first
/// factor from a client that sends no capabilities, or challenge types the client left out — and nothing it already
/// sends. Through the C ABI against the emulator.
@Suite struct BrowserRequiredMessageTests {
    /// The configuration line the message gives.
    static let capabilitiesLine = #""capabilities":["mfa_required","registration_required"]"#

    static func message(_ r: (rc: Int32, doc: JSONValue)) -> String {
        #expect(r.rc == NA_EINTERACTION && r.doc.errorCode == "browser_required", "\(r.doc)")
        return r.doc["error"]?["message"]?.stringValue ?? ""
    }

    /// The message of a password sign-in that must answer `browser_required`.
    static func message(_ client: ABIClient, _ username: String, _ password: String) -> String {
        message(client.call(na_sign_in, ["username": .string(username), "password": .string(password)]))
    }

    @Test func mfaWithoutTheCapabilitySaysWhichToSend() throws {
        let emu = try EmulatorProcess()
        let noCaps = try ABIClient(emu, ["capabilities": []])
        let r = noCaps.call(na_sign_in, ["username": "mike@contoso.com", "password": "Mfa-Passw0rd!"])
        let message = Self.message(r)
        #expect(message.contains("multi-factor authentication"), "\(message)")
        #expect(message.contains(Self.capabilitiesLine), "\(message)")
        #expect(message.contains("browser"), "\(message)")
        // the server's own words stay in their member
        #expect(r.doc["error"]?["redirect_reason"]?.stringValue?.contains("mfa_required") == true)
        #expect(r.doc["error"]?["login_hint"] == "mike@contoso.com")
    }

    @Test func registrationWithoutTheCapabilitySaysWhichToSend() throws {
        let emu = try EmulatorProcess()
        // rita has no strong-auth method yet: registration first, which this client (MFA only) cannot do in-app
        let mfaOnly = try ABIClient(emu, ["capabilities": ["mfa_required"]])
        let message = Self.message(mfaOnly, "rita@contoso.com", "Reg-Passw0rd!")
        #expect(message.contains("register a strong authentication method"), "\(message)")
        #expect(message.contains(Self.capabilitiesLine), "\(message)")
        #expect(!message.contains("multi-factor authentication, and"), "\(message)")
    }

    @Test func anUnexplainedRedirectAfterTheFirstFactorPointsAtTheCapabilitiesOnlyWhenMissing() throws {
        let emu = try EmulatorProcess()
        let redirect: JSONValue = ["path": "/oauth2/v2.0/token", "body": ["challenge_type": "redirect"]]
        // the service's documented redirect answer carries no redirect_reason
        try emu.control("POST", "faults", redirect)
        let noCaps = try ABIClient(emu, ["capabilities": []])
        let hinted = Self.message(noCaps, annEmail, annPassword)
        #expect(hinted.contains(Self.capabilitiesLine) && hinted.contains("multi-factor"), "\(hinted)")
        // a client that already sends both is not told to send them
        try emu.control("POST", "faults", redirect)
        let full = try ABIClient(emu)
        let plain = Self.message(full, annEmail, annPassword)
        #expect(!plain.contains("capabilities") && !plain.contains("challenge_types"), "\(plain)")
        #expect(plain.contains("browser"), "\(plain)")
    }

    @Test func aRedirectBeforeTheFirstFactorNamesTheChallengeTypesLeftOut() throws {
        let emu = try EmulatorProcess()
        let oobOnly = try ABIClient(emu, ["challenge_types": ["oob"]])
        let message = Self.message(oobOnly, annEmail, annPassword)
        #expect(message.contains(#""challenge_types":["oob","password"]"#), "\(message)")
        #expect(!message.contains("capabilities"), "\(message)")
        // the tenant's sign-up takes a password; a reset sends a code
        let signUp = Self.message(
            oobOnly.call(na_sign_up, ["username": "newcomer@contoso.com", "password": "Fresh-Passw0rd!"])
        )
        #expect(signUp.contains(#""challenge_types":["oob"]"#) && signUp.contains("password\"]"), "\(signUp)")
        let passwordOnly = try ABIClient(emu, ["challenge_types": ["password"]])
        let reset = Self.message(passwordOnly.call(na_reset_password, ["username": .string(annEmail)]))
        #expect(reset.contains(#""challenge_types":["password"]"#), "\(reset)")
    }

    @Test func aUserWhoMustUseTheBrowserGetsNoConfigurationAdvice() throws {
        let emu = try EmulatorProcess()
        try emu.control(
            "POST",
            "users",
            ["email": .string(annEmail), "requires_browser": true, "redirect_reason": "Use the web."]
        )
        let full = try ABIClient(emu)
        let message = Self.message(full, annEmail, annPassword)
        #expect(!message.contains("capabilities") && !message.contains("challenge_types"), "\(message)")
        #expect(message.contains("browser"), "\(message)")
    }
}
