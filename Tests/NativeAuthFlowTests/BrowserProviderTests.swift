import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Synchronization
import Testing

/// The browser flows against the emulator's browser session (every `prompt`), its end-session log, claims
/// challenges, device-code edge cases, and the generic OpenID Connect provider (`"authority_type":"oidc"`).
@Suite struct BrowserProviderTests {
    /// The last authorize request the emulator saw.
    func lastAuthorize(_ emu: EmulatorProcess, idp: String = "entra") throws -> JSONValue {
        try #require(try emu.control("GET", "authorize_log?idp=\(idp)")["requests"]?.arrayValue?.last)
    }

    @Test func everyPromptBehavesAsEntraDoes() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let browser = FakeBrowser()
        browser.codeFor = { try? emu.lastCode($0) }
        browser.install(on: c)
        // prompt=none without a browser session: the provider cannot sign anyone in silently.
        let none = c.call(na_sign_in_interactive, ["prompt": "none"])
        #expect(none.rc == NA_EINTERACTION && none.doc.errorCode == "interaction_required", "\(none.doc)")
        // A first sign-in with the page; its request carried every parameter the library sends.
        let first = c.call(
            na_sign_in_interactive,
            [
                "scopes": [.string(emu.apiScopes.todo)], "login_hint": .string(annEmail), "domain_hint": "contoso.com",
                "claims": ["id_token": ["auth_time": ["essential": true]]],
                "extra_query_parameters": ["ui_locales": "nb-NO"],
            ]
        )
        #expect(first.doc["status"] == "signed_in", "\(first.doc)")
        let log = try lastAuthorize(emu)
        #expect(log["code_challenge_method"] == "S256" && log["client_info"] == "1" && log["has_nonce"] == true)
        #expect(log["login_hint"]?.stringValue == annEmail && log["domain_hint"] == "contoso.com")
        #expect(log["claims"]?.stringValue?.contains("auth_time") == true && log["params"]?["ui_locales"] == "nb-NO")
        #expect(log["page"] == "sign_in")
        // The session now signs Ann in: prompt=none and no prompt need no page.
        for prompt: JSONValue in ["none", .null] {
            var request: [String: JSONValue] = [:]
            if prompt != .null { request["prompt"] = prompt }
            let r = c.call(na_sign_in_interactive, .object(request))
            #expect(r.doc["status"] == "signed_in", "\(prompt): \(r.doc)")
            #expect(try lastAuthorize(emu)["page"] == .null, "\(prompt): single sign-on without a page")
        }
        // login: the page again, even with a session.
        #expect(c.call(na_sign_in_interactive, ["prompt": "login"]).doc["status"] == "signed_in")
        #expect(try lastAuthorize(emu)["page"] == "sign_in")
        // select_account: the picker, then the chosen account.
        browser.pick = annEmail
        #expect(c.call(na_sign_in_interactive, ["prompt": "select_account"]).doc["status"] == "signed_in")
        #expect(browser.pages.withLock { $0 }.contains("select_account"))
        // consent: the consent page; cancelling it is access_denied.
        #expect(c.call(na_sign_in_interactive, ["prompt": "consent"]).doc["status"] == "signed_in")
        #expect(try lastAuthorize(emu)["page"] == "consent")
        browser.consent = false
        let refused = c.call(na_sign_in_interactive, ["prompt": "consent"])
        #expect(refused.rc == NA_EAUTH && refused.doc.errorCode == "access_denied", "\(refused.doc)")
        // create: the sign-up page makes a new account, signed in at once.
        let newcomer = FakeBrowser(email: "nova@contoso.com", password: "N0va-Passw0rd!")
        newcomer.codeFor = { try? emu.lastCode($0) }
        newcomer.install(on: c)
        let created = c.call(na_sign_in_interactive, ["prompt": "create"])
        #expect(created.doc["account"]?["username"] == "nova@contoso.com", "\(created.doc)")
        #expect(newcomer.pages.withLock { $0 }.contains("sign_up"))
        #expect(c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue?.count == 2)
    }

    @Test func browserSignOutReachesEndSessionWithTheRightParameters() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu, ["post_logout_redirect_uri": "http://localhost:9/signed-out"])
        let browser = FakeBrowser()
        browser.install(on: c)
        #expect(c.call(na_sign_in_interactive, [:]).rc == NA_OK)
        let out = c.call(na_sign_out, ["browser": "system"])
        #expect(out.doc["browser_opened"] == true, "\(out.doc)")
        let deadline = Date().addingTimeInterval(10)
        var entry: JSONValue? = nil
        while entry == nil && Date() < deadline {
            entry = try emu.control("GET", "end_session_log")["requests"]?.arrayValue?.last
            if entry == nil { usleep(10_000) }
        }
        let e = try #require(entry)
        #expect(e["id_token_hint"] == "valid" && e["client_id"]?.stringValue == emu.clientID)
        #expect(e["post_logout_redirect_uri"] == "http://localhost:9/signed-out")
        #expect(e["logout_hint_user"]?.stringValue == annEmail, "logout_hint from the ID token's login_hint claim")
        #expect(e["signed_out"]?.arrayValue?.contains(.string(annEmail)) == true)
        #expect(c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue?.isEmpty == true)
    }

    @Test func aClaimsChallengeReachesTheAppForTheInteractiveRetry() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        let challenge = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
        try emu.control(
            "POST",
            "token_errors",
            [
                "error": "interaction_required", "error_codes": [50076], "scope": .string(emu.apiScopes.notes),
                "claims": .string(challenge),
            ]
        )
        let r = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])
        #expect(r.rc == NA_EINTERACTION && r.doc.errorCode == "interaction_required", "\(r.doc)")
        #expect(r.doc["error"]?["claims"]?.stringValue == challenge)
        #expect(r.doc["error"]?["login_hint"]?.stringValue != nil)
        // The other API's token is unaffected: the user stays signed in.
        #expect(c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]]).rc == NA_OK)
    }

    @Test func deviceCodeWithoutAnEndpointIsNotSupported() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let authority = emu.authority
        try emu.control(
            "POST",
            "faults",
            [
                "path": "/.well-known/openid-configuration", "count": 10,
                "body": [
                    "issuer": .string(authority + "/v2.0"), "token_endpoint": .string(authority + "/oauth2/v2.0/token"),
                    "authorization_endpoint": .string(authority + "/oauth2/v2.0/authorize"),
                ],
            ]
        )
        let r = c.call(na_sign_in_device_code, [:])
        #expect(r.rc == NA_EINVAL && r.doc.errorCode == "not_supported", "\(r.doc)")
    }

    @Test func deviceCodeSlowDownAndExpiry() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_sign_in_device_code, [:])
        let flow = try #require(start.doc["flow"]?.stringValue)
        try emu.control("POST", "device/slow_down", ["count": 1])
        // The first poll is answered slow_down: the interval grows by 5 s and the flow waits on.
        let pending = c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 2500])
        #expect(pending.doc["status"] == "device_code_required", "\(pending.doc)")
        #expect((pending.doc["interval"]?.intValue ?? 0) >= 6, "\(pending.doc)")
        #expect((try emu.control("GET", "counters")["slow_down_answers"]?.intValue ?? 0) == 1)
        // The code expires on the server: flow_expired, flow gone.
        try emu.control("POST", "clock", ["advance_seconds": 3600])
        let expired = c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 30_000])
        #expect(expired.rc == NA_ESTATE && expired.doc.errorCode == "flow_expired", "\(expired.doc)")
    }
}

/// `"authority_type":"oidc"` against the emulator's generic OpenID Connect provider, which behaves unlike Entra.
@Suite struct GenericOIDCFlowTests {
    func client(_ emu: EmulatorProcess, _ extra: [String: JSONValue] = [:]) throws -> (ABIClient, JSONValue) {
        let oidc = try #require(emu.ready["oidc"])
        var config: [String: JSONValue] = [
            "authority": try #require(oidc["authority"]), "client_id": try #require(oidc["client_id"]),
            "authority_type": "oidc",
        ]
        for (k, v) in extra { config[k] = v }
        return (try ABIClient(emu, config), oidc)
    }

    @Test func interactiveRefreshWithRotationAndTheOneCallFallback() throws {
        let emu = try EmulatorProcess()
        let (c, oidc) = try client(emu)
        let browser = FakeBrowser()
        browser.install(on: c)
        let todo = try #require(oidc["apis"]?.arrayValue?.first?["scopes"]?.arrayValue?.first?.stringValue)
        let notes = try #require(oidc["apis"]?.arrayValue?.last?["scopes"]?.arrayValue?.first?.stringValue)
        let r = c.call(na_sign_in_interactive, ["scopes": [.string(todo)], "response_mode": "form_post"])
        #expect(r.doc["status"] == "signed_in", "\(r.doc)")
        let account = try #require(r.doc["account"])
        let ann = oidc["users"]?.arrayValue?.first { $0["email"]?.stringValue == annEmail }
        let sub = try #require(ann?["sub"]?.stringValue)
        let id = try #require(account["home_account_id"]?.stringValue)
        #expect(id.hasPrefix(sub + ".") && id.count == sub.count + 23, "(iss, sub) → \(id)")
        #expect(account["username"] == "ann", "preferred_username")
        let log = try #require(try emu.control("GET", "authorize_log?idp=oidc")["requests"]?.arrayValue?.last)
        #expect(log["client_info"] == .null, "no client_info for other providers")
        // Opaque access tokens; a forced refresh rotates the refresh token (the old one is never presented again).
        let t1 = c.call(na_get_access_token, ["scopes": [.string(todo)]])
        #expect(t1.doc["access_token"]?.stringValue?.hasPrefix("oat_") == true && t1.doc["from_cache"] == true)
        let t2 = c.call(na_get_access_token, ["scopes": [.string(todo)], "force_refresh": true])
        #expect(t2.rc == NA_OK && t2.doc["access_token"] != t1.doc["access_token"], "\(t2.doc)")
        let t3 = c.call(na_get_access_token, ["scopes": [.string(todo)], "force_refresh": true])
        #expect(t3.rc == NA_OK, "the rotated refresh token works: \(t3.doc)")
        #expect((try emu.control("GET", "counters")["refresh_token_reuse_detected"]?.intValue ?? 0) == 0)
        let todoURL = try #require(oidc["apis"]?.arrayValue?.first?["url"]?.stringValue)
        #expect(c.call(na_call_api, ["url": .string(todoURL), "scopes": [.string(todo)]]).doc["status"] == 200)
        // Widening the grant on refresh is refused by such providers: interaction_required with the login hint.
        let wider = c.call(na_get_access_token, ["scopes": [.string(notes)]])
        #expect(wider.rc == NA_EINTERACTION && wider.doc.errorCode == "interaction_required", "\(wider.doc)")
        let hint = try #require(wider.doc["error"]?["login_hint"]?.stringValue)
        let again = c.call(na_sign_in_interactive, ["scopes": [.string(notes)], "login_hint": .string(hint)])
        #expect(again.doc["account"]?["home_account_id"]?.stringValue == id, "the same account: \(again.doc)")
        #expect(c.call(na_get_access_token, ["scopes": [.string(notes)]]).rc == NA_OK)
        // An error answer with an empty body is a server error, and the user stays signed in.
        try emu.control("POST", "faults", ["path": "/oidc/token", "status": 400, "body": "", "content_type": ""])
        // (The second sign-in replaced the account's grant: it now covers the notes scope.)
        let empty = c.call(na_get_access_token, ["scopes": [.string(notes)], "force_refresh": true])
        #expect(empty.rc == NA_ESERVER && empty.doc.errorCode == "server", "\(empty.doc)")
        #expect(c.call(na_get_access_token, ["scopes": [.string(notes)], "force_refresh": true]).rc == NA_OK)
        // Native auth does not exist here.
        let native = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        #expect(native.rc == NA_EINVAL && native.doc.errorCode == "not_supported")
    }

    @Test func deviceCodeWithoutMessageOrIDToken() throws {
        let emu = try EmulatorProcess()
        try emu.control("POST", "settings", ["oidc_device_id_token": false])
        let (c, oidc) = try client(emu)
        let start = c.call(na_sign_in_device_code, [:])
        #expect(start.doc["status"] == "device_code_required", "\(start.doc)")
        let code = try #require(start.doc["user_code"]?.stringValue)
        let uri = try #require(start.doc["verification_uri"]?.stringValue)
        #expect(uri == oidc["device_verification_uri"]?.stringValue, "passed through untouched")
        #expect(
            start.doc["message"]?.stringValue?.contains(code) == true
                && start.doc["message"]?.stringValue?.contains(uri) == true
        )
        #expect(start.doc["verification_uri_complete"]?.stringValue?.contains("user_code=") == true)
        try emu.control("POST", "device/approve", ["user_code": .string(code), "email": .string(annEmail)])
        let done = c.call(na_flow_submit, ["flow": .string(start.doc["flow"]?.stringValue ?? ""), "action": "wait"])
        #expect(done.doc["status"] == "signed_in", "\(done.doc)")
        #expect(done.doc["account"]?["username"] == "ann", "from userinfo")
        #expect((try emu.control("GET", "counters")["userinfo_requests"]?.intValue ?? 0) >= 1)
        // Denial.
        let d2 = c.call(na_sign_in_device_code, [:])
        try emu.control(
            "POST",
            "device/approve",
            ["user_code": .string(d2.doc["user_code"]?.stringValue ?? ""), "deny": true]
        )
        let denied = c.call(na_flow_submit, ["flow": .string(d2.doc["flow"]?.stringValue ?? ""), "action": "wait"])
        #expect(denied.doc.errorCode == "access_denied", "\(denied.doc)")
    }

    @Test func aCustomSchemeRedirectHasNoListenerAndTakesSubmitRedirect() throws {
        let emu = try EmulatorProcess(config: ["oidc": ["redirect_uris": ["com.example.app://auth"]]])
        let (c, _) = try client(emu, ["redirect_uri": "com.example.app://auth"])
        let system = c.call(na_sign_in_interactive, [:])
        #expect(system.rc == NA_EINVAL && system.doc["error"]?["field"] == "browser", "\(system.doc)")
        let pending = c.call(na_sign_in_interactive, ["browser": "none"])
        #expect(pending.doc["redirect_uri"] == "com.example.app://auth", "\(pending.doc)")
        let flow = try #require(pending.doc["flow"]?.stringValue)
        let wait = c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 100])
        #expect(wait.doc.errorCode == "flow_invalid", "no listener to wait on: \(wait.doc)")
        let browser = FakeBrowser(captureRedirect: true)
        browser.visit(try #require(pending.doc["authorization_url"]?.stringValue))
        let redirect = try #require(browser.captured.withLock { $0 })
        #expect(redirect.hasPrefix("com.example.app://auth?"))
        let r = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(redirect)]
        )
        #expect(r.doc["status"] == "signed_in", "\(r.doc)")
    }

    @Test func anIssuerParameterFromAnotherIssuerIsRefused() throws {
        let emu = try EmulatorProcess()
        let (c, _) = try client(emu)
        let pending = c.call(na_sign_in_interactive, ["browser": "none"])
        let flow = try #require(pending.doc["flow"]?.stringValue)
        let browser = FakeBrowser(captureRedirect: true)
        browser.visit(try #require(pending.doc["authorization_url"]?.stringValue))
        let redirect = try #require(browser.captured.withLock { $0 })
        let iss = try #require(queryParameters(redirect)["iss"])
        #expect(!iss.isEmpty, "the provider sends RFC 9207's iss")
        let forged = redirect.replacingOccurrences(of: "iss=", with: "iss=https%3A%2F%2Fevil.example%2F")
        let r = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(forged)]
        )
        #expect(r.rc == NA_ESERVER && r.doc["error"]?["message"]?.stringValue?.contains("issuer") == true, "\(r.doc)")
        #expect(c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue?.isEmpty == true)
    }

    @Test func aDiscoveryIssuerOtherThanTheAuthorityIsRefused() throws {
        let emu = try EmulatorProcess()
        // The provider's issuer is <base>/oidc: an authority of <base>/oidc/ (slash) is the same issuer, <base> is not.
        let oidc = try #require(emu.ready["oidc"])
        let authority = try #require(oidc["authority"]?.stringValue)
        let (slash, _) = try client(emu, ["authority": .string(authority + "/")])
        let pending = slash.call(na_sign_in_interactive, ["browser": "none"])
        #expect(pending.doc["status"] == "browser_pending", "\(pending.doc)")
        let base = String(authority.dropLast("/oidc".count))
        let (wrong, _) = try client(emu, ["authority": .string(base + "/contoso.onmicrosoft.com/v2.0")])
        let r = wrong.call(na_sign_in_interactive, ["browser": "none"])
        #expect(r.rc == NA_ESERVER, "\(r.doc)")
    }
}
