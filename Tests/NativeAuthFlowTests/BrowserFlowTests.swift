import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Synchronization
import Testing

/// Browser sign-in (authorization code + PKCE through a loopback listener), driven through the C ABI by a browser
/// callback that follows the emulator's pages.
@Suite struct BrowserFlowTests {
    @Test func browserSignInWithQueryAndFormPost() throws {
        let emu = try EmulatorProcess()
        for mode in ["query", "form_post"] {
            let c = try ABIClient(emu)
            let browser = FakeBrowser()
            browser.install(on: c)
            let r = c.call(
                na_sign_in_interactive,
                ["scopes": [.string(emu.apiScopes.todo)], "response_mode": .string(mode)]
            )
            #expect(r.rc == NA_OK, "\(r.doc.serialized())")
            #expect(r.doc["status"] == "signed_in" && r.doc["flow_type"] == "interactive")
            #expect(r.doc["account"]?["username"]?.stringValue == annEmail)
            #expect(browser.waitFinished() == [200])
            #expect(browser.opened.withLock { $0.first }?.contains("state=") == false, "a one-time start URL")
            let url = try #require(browser.authorizationURL)
            let q = queryParameters(url)
            #expect(q["code_challenge_method"] == "S256" && q["client_info"] == "1" && q["nonce"] != nil)
            #expect(q["response_type"] == "code" && (q["state"]?.count ?? 0) >= 32)
            #expect(mode == "query" ? q["response_mode"] == nil : q["response_mode"] == "form_post")
            let port = try #require(q["redirect_uri"].flatMap(redirectPort))
            #expect(!listeningPorts().contains(port), "the listener closed")
            // The browser-signed-in account renews silently like any other.
            let t = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])
            #expect(t.rc == NA_OK && t.doc["from_cache"] == false, "\(t.doc.serialized())")
        }
    }

    @Test func browserNoneWaitsIgnoresAWrongStateAndSubmitsTheRightOne() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let pending = c.call(na_sign_in_interactive, ["scopes": [.string(emu.apiScopes.todo)], "browser": "none"])
        #expect(pending.doc["status"] == "browser_pending", "\(pending.doc.serialized())")
        let flow = try #require(pending.doc["flow"]?.stringValue)
        let authURL = try #require(pending.doc["authorization_url"]?.stringValue)
        let redirect = try #require(pending.doc["redirect_uri"]?.stringValue)
        let port = try #require(redirectPort(redirect))
        #expect(authURL.hasPrefix(emu.authority + "/oauth2/v2.0/authorize?"), "the provider's URL: \(authURL)")
        #expect(listeningPorts().contains(port))
        // A short wait with nothing arriving: pending again, flow intact.
        let again = c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 100])
        #expect(again.doc["status"] == "browser_pending" && again.doc["flow"]?.stringValue == flow)
        // A stray request with a wrong state, then the real browser.
        let stray = FakeBrowser()
        let browser = FakeBrowser()
        let t = Thread {
            let u = redirect + "?code=forged&state=not-the-state"
            _ = try? stray.http.send(.init(url: u))
            _ = try? stray.http.send(.init(url: "http://127.0.0.1:\(port)/favicon.ico"))
            browser.visit(authURL)
        }
        t.start()
        let done = c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 20_000])
        #expect(done.doc["status"] == "signed_in", "\(done.doc.serialized())")
        #expect(!listeningPorts().contains(port))
        #expect(c.call(na_flow_submit, ["flow": .string(flow), "action": "wait"]).doc.errorCode == "flow_invalid")
    }

    @Test func submitRedirectForAppsThatCaptureIt() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let pending = c.call(na_sign_in_interactive, ["browser": "none"])
        let flow = try #require(pending.doc["flow"]?.stringValue)
        let browser = FakeBrowser(captureRedirect: true)
        // The provider's URL: the listener need not be served.
        browser.visit(try #require(pending.doc["authorization_url"]?.stringValue))
        let redirect = try #require(browser.captured.withLock { $0 })
        // Another URI than the flow's is refused, the flow stays.
        let wrong = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": "http://localhost:1/?code=x&state=y"]
        )
        #expect(wrong.doc.errorCode == "invalid_argument")
        let r = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(redirect)]
        )
        #expect(r.doc["status"] == "signed_in", "\(r.doc.serialized())")
        let port = try #require(redirectPort(redirect))
        #expect(!listeningPorts().contains(port))
    }

    @Test func redirectErrorsMapToCodes() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        for (error, code) in [
            ("access_denied", "access_denied"), ("login_required", "interaction_required"),
            ("temporarily_unavailable", "server"),
        ] {
            let pending = c.call(na_sign_in_interactive, ["browser": "none"])
            let flow = try #require(pending.doc["flow"]?.stringValue)
            let state = try #require(queryParameters(pending.doc["authorization_url"]?.stringValue ?? "")["state"])
            let redirect = try #require(pending.doc["redirect_uri"]?.stringValue)
            let r = c.call(
                na_flow_submit,
                [
                    "flow": .string(flow), "action": "submit_redirect",
                    "redirect_url": .string(
                        "\(redirect)?error=\(error)&error_description=Ann%20said%20no&state=\(state)"
                    ),
                ]
            )
            #expect(r.doc.errorCode == code, "\(r.doc.serialized())")
            #expect(!r.doc.serialized().contains("Ann said"), "the description is never repeated")
        }
    }

    @Test func timeoutAndCancelLeaveNoListeningSocket() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        // The sign-in's own lifetime ends during a wait: timeout, flow gone, socket closed.
        let p1 = c.call(na_sign_in_interactive, ["browser": "none", "timeout_ms": 1000])
        let f1 = try #require(p1.doc["flow"]?.stringValue)
        let port1 = try #require(redirectPort(p1.doc["redirect_uri"]?.stringValue ?? ""))
        let w = c.call(na_flow_submit, ["flow": .string(f1), "action": "wait", "timeout_ms": 60_000])
        #expect(w.rc == NA_ENETWORK && w.doc.errorCode == "timeout", "\(w.doc.serialized())")
        #expect(!listeningPorts().contains(port1))
        // Cancel from another thread while a wait blocks: cancelled, promptly, socket closed.
        let p2 = c.call(na_sign_in_interactive, ["browser": "none"])
        let f2 = try #require(p2.doc["flow"]?.stringValue)
        let port2 = try #require(redirectPort(p2.doc["redirect_uri"]?.stringValue ?? ""))
        let result = Mutex<(Int32, JSONValue)?>(nil)
        let t = Thread {
            let r = c.call(na_flow_submit, ["flow": .string(f2), "action": "wait", "timeout_ms": 60_000])
            result.withLock { $0 = (r.rc, r.doc) }
        }
        t.start()
        usleep(200_000)
        let cancelledAt = Date()
        #expect(c.call(na_flow_submit, ["flow": .string(f2), "action": "cancel"]).rc == NA_OK)
        while result.withLock({ $0 }) == nil && Date().timeIntervalSince(cancelledAt) < 10 { usleep(2000) }
        #expect(Date().timeIntervalSince(cancelledAt) < 2, "the wait ended promptly")
        #expect(result.withLock { $0 }?.0 == NA_ESTATE && result.withLock { $0 }?.1.errorCode == "cancelled")
        #expect(!listeningPorts().contains(port2))
        // Cancel of an idle flow closes its socket at once.
        let p3 = c.call(na_sign_in_interactive, ["browser": "none"])
        let port3 = try #require(redirectPort(p3.doc["redirect_uri"]?.stringValue ?? ""))
        #expect(listeningPorts().contains(port3))
        c.call(na_flow_submit, ["flow": .string(p3.doc["flow"]?.stringValue ?? ""), "action": "cancel"])
        #expect(!listeningPorts().contains(port3))
    }

    @Test func aBrowserThatCannotOpenAnswersBrowserUnavailableWithTheURL() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let browser = FakeBrowser()
        browser.callbackResult = 1
        browser.install(on: c)
        let r = c.call(na_sign_in_interactive, [:])
        #expect(r.rc == NA_EINTERACTION && r.doc.errorCode == "browser_unavailable")
        let url = try #require(r.doc["error"]?["authorization_url"]?.stringValue)
        #expect(url.hasPrefix("http://localhost:") && !url.contains("state="), "the start page the browser was given")
        let port = try #require(redirectPort(url))
        #expect(!listeningPorts().contains(port), "no listener is left behind")
    }

    @Test func tamperedOrForeignIDTokensAreRefused() throws {
        let emu = try EmulatorProcess()
        let header = Base64URL.encode(#"{"alg":"RS256","kid":"nope","typ":"JWT"}"#)
        let now = Int(Date().timeIntervalSince1970)
        let forged =
            header + "."
            + Base64URL.encode(
                #"{"aud":"\#(emu.clientID)","iss":"x","exp":\#(now + 3600),"sub":"s","nonce":"n"}"#
            ) + ".AAAA"
        let cases: [(JSONValue, String)] = [
            (["grant_type": "authorization_code", "set": ["id_token": .string(forged)]], "signature"),
            (["grant_type": "authorization_code", "id_token_claims": ["nonce": "another"]], "nonce"),
            (["grant_type": "authorization_code", "id_token_claims": ["aud": "someone-else"]], "aud"),
            (["grant_type": "authorization_code", "remove": ["id_token"]], "no ID token"),
        ]
        for (rule, what) in cases {
            let c = try ABIClient(emu)
            let browser = FakeBrowser()
            browser.install(on: c)
            try emu.control("POST", "token_answers", rule)
            let r = c.call(na_sign_in_interactive, [:])
            #expect(r.rc == NA_ESERVER && r.doc.errorCode == "id_token_invalid", "\(what): \(r.doc.serialized())")
            #expect(c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue?.isEmpty == true, "\(what)")
            try emu.control("DELETE", "token_answers")
        }
    }

    @Test func nativeBrowserRequiredFallsBackToTheBrowserInOneCall() throws {
        let emu = try EmulatorProcess()
        try emu.control(
            "POST",
            "users",
            ["email": "bea@contoso.com", "password": "Bea-Passw0rd!", "requires_browser": true]
        )
        let c = try ABIClient(emu)
        let r = c.call(na_sign_in, ["username": "bea@contoso.com", "password": "Bea-Passw0rd!"])
        #expect(r.rc == NA_EINTERACTION && r.doc.errorCode == "browser_required")
        let hint = try #require(r.doc["error"]?["login_hint"]?.stringValue)
        #expect(hint == "bea@contoso.com")
        let browser = FakeBrowser(email: "bea@contoso.com", password: "Bea-Passw0rd!")
        browser.install(on: c)
        let s = c.call(na_sign_in_interactive, ["login_hint": .string(hint)])
        #expect(s.doc["status"] == "signed_in", "\(s.doc.serialized())")
        #expect(queryParameters(browser.authorizationURL ?? "")["login_hint"] == hint)
    }

    @Test func twoAccountsOneNativeOneBrowser() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        let browser = FakeBrowser(email: "mike@contoso.com", password: "Mfa-Passw0rd!")
        try emu.control("POST", "users", ["email": "bo@contoso.com", "password": "Bo-Passw0rd!"])
        let bo = FakeBrowser(email: "bo@contoso.com", password: "Bo-Passw0rd!")
        _ = browser
        bo.install(on: c)
        let s = c.call(na_sign_in_interactive, ["scopes": [.string(emu.apiScopes.todo)]])
        #expect(s.doc["status"] == "signed_in", "\(s.doc.serialized())")
        let list = c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue ?? []
        #expect(list.compactMap { $0["username"]?.stringValue } == [annEmail, "bo@contoso.com"])
        let scope: JSONValue = ["scopes": [.string(emu.apiScopes.todo)]]
        let ambiguous = c.call(na_get_access_token, scope)
        #expect(ambiguous.rc == NA_EINVAL && ambiguous.doc.errorCode == "account_required")
        #expect(ambiguous.doc["error"]?["accounts"]?.arrayValue?.count == 2)
        #expect(c.call(na_get_account, [:]).doc.errorCode == "account_required")
        #expect(c.call(na_sign_out, [:]).doc.errorCode == "account_required")
        let annToken = c.call(
            na_get_access_token,
            ["scopes": [.string(emu.apiScopes.todo)], "account": "ANN@contoso.com"]
        )
        let boID = try #require(list.last?["home_account_id"]?.stringValue)
        let boToken = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)], "account": .string(boID)])
        #expect(annToken.rc == NA_OK && boToken.rc == NA_OK)
        #expect(annToken.doc["access_token"] != boToken.doc["access_token"])
        let api = c.call(
            na_call_api,
            ["url": .string(emu.apiURLs.todo), "scopes": [.string(emu.apiScopes.todo)], "account": .string(boID)]
        )
        #expect(api.doc["status"] == 200, "\(api.doc.serialized())")
        let out = c.call(na_sign_out, ["account": .string(boID)])
        #expect(out.doc["accounts"] == [.string(boID)])
        #expect(c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue?.count == 1)
        #expect(c.call(na_get_access_token, scope).rc == NA_OK, "one account left: no selector needed")
        #expect(c.call(na_get_account, ["account": .string(boID)]).doc.errorCode == "no_account")
    }

    @Test func silentRenewalAndRevocationCarryTheLoginHint() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let browser = FakeBrowser()
        browser.install(on: c)
        try emu.control("POST", "settings", ["access_token_lifetime": 300])  // never served from the cache
        #expect(c.call(na_sign_in_interactive, ["scopes": [.string(emu.apiScopes.todo)]]).rc == NA_OK)
        let before = try emu.control("GET", "counters")["refresh_grants"]?.intValue ?? 0
        let renewed = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]])
        #expect(renewed.rc == NA_OK && renewed.doc["from_cache"] == false)
        #expect((try emu.control("GET", "counters")["refresh_grants"]?.intValue ?? 0) == before + 1)
        try emu.control("POST", "users/revoke", ["email": .string(annEmail)])
        let revoked = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]])
        #expect(revoked.rc == NA_EINTERACTION && revoked.doc.errorCode == "interaction_required")
        // The ID token's login_hint claim (Entra issues it for this), else the username.
        let claim = c.call(na_get_account, [:]).doc["account"]?["claims"]?["login_hint"]?.stringValue
        #expect(claim != nil)
        #expect(revoked.doc["error"]?["login_hint"]?.stringValue == claim, "\(revoked.doc.serialized())")
        // The one-call fallback: that hint signs the same user in again.
        let again = c.call(na_sign_in_interactive, ["login_hint": .string(claim ?? ""), "prompt": "login"])
        #expect(again.doc["account"]?["username"]?.stringValue == annEmail, "\(again.doc.serialized())")
    }

    @Test func browserSignOutOpensTheEndSessionPage() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu, ["post_logout_redirect_uri": "http://localhost/signed-out"])
        let browser = FakeBrowser()
        browser.install(on: c)
        #expect(c.call(na_sign_in_interactive, [:]).rc == NA_OK)
        let out = c.call(na_sign_out, ["browser": "system"])
        #expect(out.rc == NA_OK && out.doc["browser_opened"] == true, "\(out.doc.serialized())")
        let url = try #require(out.doc["end_session_url"]?.stringValue)
        let q = queryParameters(url)
        #expect(q["client_id"] == emu.clientID && q["post_logout_redirect_uri"] == "http://localhost/signed-out")
        #expect(q["id_token_hint"]?.split(separator: ".").count == 3)
        // The browser was given a one-time URL on 127.0.0.1, which sent it to the end-session URL.
        #expect(browser.opened.withLock { $0.last }?.contains("id_token_hint") == false)
        #expect(browser.waitAuthorizationURLs(2).last == url)
        #expect(c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue?.isEmpty == true)
        #expect(c.call(na_get_access_token, [:]).doc.errorCode == "no_account")
    }
}

/// Device-code sign-in through the C ABI.
@Suite struct DeviceCodeTests {
    @Test func approvalPendingDenialAndCancel() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_sign_in_device_code, ["scopes": [.string(emu.apiScopes.todo)]])
        #expect(start.doc["status"] == "device_code_required", "\(start.doc.serialized())")
        let flow = try #require(start.doc["flow"]?.stringValue)
        let code = try #require(start.doc["user_code"]?.stringValue)
        #expect(start.doc["message"]?.stringValue?.contains(code) == true)
        #expect(start.doc["verification_uri"]?.stringValue?.hasPrefix("http") == true)
        // Nobody approved yet: the wait times out with the flow intact.
        let pending = c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 1500])
        #expect(pending.doc["status"] == "device_code_required" && pending.doc["flow"]?.stringValue == flow)
        try emu.control("POST", "device/approve", ["user_code": .string(code), "email": .string(annEmail)])
        let done = c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 20_000])
        #expect(done.doc["status"] == "signed_in" && done.doc["flow_type"] == "device_code", "\(done.doc.serialized())")
        #expect(done.doc["account"]?["username"]?.stringValue == annEmail)

        let d2 = c.call(na_sign_in_device_code, [:])
        try emu.control(
            "POST",
            "device/approve",
            ["user_code": .string(d2.doc["user_code"]?.stringValue ?? ""), "deny": true]
        )
        let denied = c.call(na_flow_submit, ["flow": .string(d2.doc["flow"]?.stringValue ?? ""), "action": "wait"])
        #expect(denied.rc == NA_EAUTH && denied.doc.errorCode == "access_denied", "\(denied.doc.serialized())")

        let d3 = c.call(na_sign_in_device_code, [:])
        let f3 = try #require(d3.doc["flow"]?.stringValue)
        let result = Mutex<JSONValue?>(nil)
        let t = Thread {
            let r = c.call(na_flow_submit, ["flow": .string(f3), "action": "wait"])
            result.withLock { $0 = r.doc }
        }
        t.start()
        usleep(300_000)
        c.call(na_flow_submit, ["flow": .string(f3), "action": "cancel"])
        let deadline = Date().addingTimeInterval(5)
        while result.withLock({ $0 }) == nil && Date() < deadline { usleep(5000) }
        #expect(result.withLock { $0 }?.errorCode == "cancelled")
    }
}

/// Base64url without padding, for forged tokens.
enum Base64URL {
    static func encode(_ s: String) -> String {
        Data(s.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
