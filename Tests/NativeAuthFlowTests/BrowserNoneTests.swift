import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Testing

/// `"browser":"none"` (issue 28, defect 8): the app is shown the provider's authorize URL itself — it may load it in
/// its own web view, or the user may open it on another device and paste the redirect back — and continues with
/// `submit_redirect` (no listener needed) or `wait` (the listener, with its rules). The one-time start page is only
/// for browsers the library launches.
@Suite struct BrowserNoneTests {
    /// A `browser_pending` sign-in: its flow, authorization URL and redirect URI.
    func pending(_ c: ABIClient, _ request: JSONValue = ["browser": "none"]) throws -> (String, String, String) {
        let p = c.call(na_sign_in_interactive, request)
        #expect(p.doc["status"] == "browser_pending", "\(p.doc.serialized())")
        return (
            try #require(p.doc["flow"]?.stringValue), try #require(p.doc["authorization_url"]?.stringValue),
            try #require(p.doc["redirect_uri"]?.stringValue)
        )
    }

    /// The redirect a browser on another device reaches by following `url` (no cookie of this machine), captured
    /// without loading it.
    func redirectFromAnotherDevice(_ url: String) throws -> String {
        let device = FakeBrowser(captureRedirect: true)
        device.visit(url)
        return try #require(device.captured.withLock { $0 }, "finished: \(device.finished.withLock { $0 })")
    }

    @Test func theAppIsShownTheAuthorizeURLAndAPastedRedirectSignsIn() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (flow, url, redirectURI) = try pending(
            c,
            ["browser": "none", "scopes": [.string(emu.apiScopes.todo)], "login_hint": .string(annEmail)]
        )
        let port = try #require(redirectPort(redirectURI))
        #expect(redirectURI.hasPrefix("http://localhost:"))
        try #require(url.hasPrefix(emu.authority + "/oauth2/v2.0/authorize?"), "the provider's URL: \(url)")
        let q = queryParameters(url)
        #expect(q["response_type"] == "code" && q["client_id"] == emu.clientID && q["redirect_uri"] == redirectURI)
        #expect((q["state"]?.count ?? 0) >= 32 && (q["nonce"]?.count ?? 0) >= 32)
        #expect((q["code_challenge"]?.count ?? 0) == 43 && q["code_challenge_method"] == "S256")
        #expect(q["login_hint"] == annEmail && q["client_info"] == "1")
        let scopes = (q["scope"] ?? "").split(separator: " ").map(String.init)
        #expect(scopes.contains("openid") && scopes.contains("offline_access") && scopes.contains(emu.apiScopes.todo))
        // The user signs in on another device; nothing serves the listener meanwhile (no wait runs).
        let redirect = try redirectFromAnotherDevice(url)
        #expect(redirect.hasPrefix(redirectURI + "?") && queryParameters(redirect)["state"] == q["state"])
        let r = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(redirect)]
        )
        #expect(r.doc["status"] == "signed_in" && r.doc["flow_type"] == "interactive", "\(r.doc.serialized())")
        #expect(r.doc["account"]?["username"]?.stringValue == annEmail)
        #expect(!listeningPorts().contains(port), "the listener closed with the sign-in")
    }

    /// A redirect pasted with the line break (or spaces) around it, as fgets or a terminal copy gives it: the
    /// whitespace is not part of the last parameter (the `state` would not match and the sign-in would end).
    @Test func aPastedRedirectWithSurroundingWhitespaceSignsIn() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (flow, url, _) = try pending(c)
        try #require(url.hasPrefix(emu.authority), "the provider's URL: \(url)")
        var redirect = try redirectFromAnotherDevice(url)
        // The state last, as a browser's address bar may show it.
        let q = queryParameters(redirect)
        let state = try #require(q["state"])
        redirect = String(redirect.prefix { $0 != "?" }) + "?code=" + (q["code"] ?? "") + "&state=" + state
        let r = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(" \t" + redirect + " \r\n")]
        )
        #expect(r.doc["status"] == "signed_in", "\(r.doc.serialized())")
    }

    @Test func aTamperedStateIsRefused() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (flow, url, _) = try pending(c)
        try #require(url.hasPrefix(emu.authority), "the provider's URL: \(url)")
        let redirect = try redirectFromAnotherDevice(url)
        let state = try #require(queryParameters(redirect)["state"])
        let tampered = redirect.replacingOccurrences(of: "state=\(state)", with: "state=\(state.dropLast())A")
        #expect(tampered != redirect)
        let r = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(tampered)]
        )
        #expect(r.rc == NA_ESERVER && r.doc["error"]?["message"]?.stringValue?.contains("state") == true, "\(r.doc)")
        #expect(!r.doc.serialized().contains(state), "the state is not repeated")
        #expect(c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue?.isEmpty == true)
        // The sign-in is over: the genuine redirect cannot be used after it.
        let after = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(redirect)]
        )
        #expect(after.doc.errorCode == "flow_invalid")
    }

    /// `wait` after `"browser":"none"`: the listener takes the redirect of the browser the user opened the URL in —
    /// no start page, so no cookie to ask for — but still refuses another path, another state, and (as root can
    /// show) a connection from another user's socket.
    @Test func waitStillServesTheListenerWithItsRules() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (flow, url, redirectURI) = try pending(c)
        try #require(url.hasPrefix(emu.authority), "the provider's URL: \(url)")
        let port = try #require(redirectPort(redirectURI))
        let redirect = try redirectFromAnotherDevice(url)
        let wait = Background {
            c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 30_000])
        }
        let wrongState = redirect.replacingOccurrences(of: "state=", with: "state=x")
        #expect(try FakeBrowser().send("GET", wrongState).status == 400)
        let query = try #require(redirect.firstIndex(of: "?").map { redirect[$0...] })
        let wrongPath = "http://localhost:\(port)/elsewhere" + query
        #expect(try FakeBrowser().send("GET", wrongPath).status == 404)
        if geteuid() == 0 { #expect(try fetchAsNobody(redirect) == "403") }
        #expect(!wait.isDone)
        let delivered = try FakeBrowser().send("GET", redirect)
        #expect(delivered.status == 200)
        #expect(try wait.answer().doc["status"] == "signed_in")
        #expect(!listeningPorts().contains(port))
    }

    /// With a `form_post` response mode the provider's page posts the redirect: a web view captures the form.
    @Test func aFormPostRedirectCapturedByTheAppSignsIn() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (flow, url, redirectURI) = try pending(c, ["browser": "none", "response_mode": "form_post"])
        try #require(url.hasPrefix(emu.authority), "the provider's URL: \(url)")
        #expect(queryParameters(url)["response_mode"] == "form_post")
        let redirect = try redirectFromAnotherDevice(url)
        #expect(redirect.hasPrefix(redirectURI))
        let r = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(redirect)]
        )
        #expect(r.doc["status"] == "signed_in", "\(r.doc.serialized())")
    }

    /// Sign-out with `"browser":"none"` answers the provider's end-session URL itself, which another device can open.
    @Test func signOutWithoutABrowserAnswersTheProvidersEndSessionURL() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (flow, url, _) = try pending(c)
        let redirect = try redirectFromAnotherDevice(url)
        let s = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(redirect)]
        )
        #expect(s.doc["status"] == "signed_in", "\(s.doc.serialized())")
        let out = c.call(na_sign_out, ["browser": "none"])
        #expect(out.rc == NA_OK && out.doc["browser_opened"] == false, "\(out.doc.serialized())")
        let end = try #require(out.doc["end_session_url"]?.stringValue)
        #expect(end.hasPrefix(emu.authority + "/oauth2/v2.0/logout?"), "\(end)")
        #expect(queryParameters(end)["id_token_hint"]?.split(separator: ".").count == 3)
        let page = try FakeBrowser().send("GET", end)
        #expect(page.status == 200 || page.status == 302)
        let log = try emu.control("GET", "end_session_log")["requests"]?.arrayValue ?? []
        #expect(log.last?["id_token_hint_valid"] == true && log.last?["id_token_hint_user"] != nil, "\(log)")
    }
}
