import Foundation
import NativeAuthCABI
import NativeAuthHTTP
import NativeAuthJSON
import Synchronization
import Testing

/// Binds [::1]:port (and closes it at once): 0 when it could, else errno.
func bindIPv6Loopback(_ port: Int) -> Int32 {
    let s = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    guard s >= 0 else { return errno }
    defer { close(s) }
    var one: Int32 = 1
    setsockopt(s, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
    var addr = sockaddr_in6()
    addr.sin6_family = sa_family_t(AF_INET6)
    addr.sin6_port = UInt16(port).bigEndian
    addr.sin6_addr = in6addr_loopback
    let rc = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
    }
    return rc == 0 ? 0 : errno
}

/// The loopback listener and what the browser is given (security issue #18): a `localhost` redirect holds ::1 as
/// well as 127.0.0.1; browsers the library launches get a one-time start URL on the listener (no state, nonce, PKCE
/// challenge or login hint on a command line); their redirect needs the start page's cookie; a second fetch of the
/// start page ends the sign-in; connections from other users' sockets are refused.
@Suite struct BrowserSurfaceTests {
    @Test func aLocalhostListenerHoldsIPv6LoopbackToo() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)  // Entra: the default redirect URI is http://localhost
        let pending = c.call(na_sign_in_interactive, ["browser": "none"])
        let redirect = try #require(pending.doc["redirect_uri"]?.stringValue)
        #expect(redirect.hasPrefix("http://localhost:"))
        let port = try #require(redirectPort(redirect))
        let taken = bindIPv6Loopback(port)
        // EADDRNOTAVAIL: this machine has no ::1, so nobody can listen there.
        #expect(taken == EADDRINUSE || taken == EADDRNOTAVAIL, "another user could bind [::1]:\(port): \(taken)")
        // http://127.0.0.1 means IPv4 only: the library leaves ::1 alone.
        let v4 = try ABIClient(emu, ["redirect_uri": "http://127.0.0.1"])
        let p4 = v4.call(na_sign_in_interactive, ["browser": "none"])
        let port4 = try #require(redirectPort(p4.doc["redirect_uri"]?.stringValue ?? ""))
        #expect(bindIPv6Loopback(port4) != EADDRINUSE)
    }

    @Test func theBrowserGetsAOneTimeStartURLWithoutSecrets() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu, ["post_logout_redirect_uri": "http://localhost/signed-out"])
        let browser = FakeBrowser()
        browser.install(on: c)
        let r = c.call(na_sign_in_interactive, ["login_hint": .string(annEmail)])
        #expect(r.doc["status"] == "signed_in", "\(r.doc)")
        let opened = try #require(browser.opened.withLock { $0.first })
        #expect(opened.hasPrefix("http://localhost:") && !opened.contains("?"), "\(opened)")
        let path = opened.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        #expect(path.count >= 22, "at least 128 random bits")
        for secret in ["state", "nonce", "code_challenge", "login_hint", annEmail] {
            #expect(!opened.contains(secret), "\(secret) in the browser's command line")
        }
        let real = try #require(browser.authorizationURL)
        #expect(real.hasPrefix(emu.authority) && queryParameters(real)["state"] != nil)
        #expect(queryParameters(real)["login_hint"] == annEmail)
        // Sign-out: the end-session URL (id_token_hint) is behind a one-time URL too.
        let out = c.call(na_sign_out, ["browser": "system"])
        #expect(out.doc["browser_opened"] == true, "\(out.doc)")
        let endSession = try #require(out.doc["end_session_url"]?.stringValue)
        let signOutURL = try #require(browser.opened.withLock { $0.last })
        #expect(signOutURL.hasPrefix("http://127.0.0.1:") && !signOutURL.contains("id_token_hint"), "\(signOutURL)")
        #expect(browser.waitAuthorizationURLs(2).last == endSession)
    }

    @Test func aForgedRedirectWithoutTheCookieIsRefused() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (wait, start, browser) = try signInWithAnUnopenedStartPage(c)
        let first = try browser.send("GET", start)
        #expect(first.status == 302)
        #expect(first.header("cache-control") == "no-store" && first.header("referrer-policy") == "no-referrer")
        let cookie = try #require(first.header("set-cookie"))
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax") && cookie.contains("Path=/"))
        let real = try #require(first.header("location"))
        let state = try #require(queryParameters(real)["state"])
        let redirect = try #require(queryParameters(real)["redirect_uri"])
        // Someone who learnt the state (but has no cookie) sends a redirect: refused, the wait goes on.
        let forged = try FakeBrowser().send("GET", redirect + "?code=forged&state=" + state)
        #expect(forged.status == 400)
        #expect(!wait.isDone)
        browser.visit(real)
        #expect(try wait.answer().doc["status"] == "signed_in")
    }

    @Test func aSecondFetchOfTheStartURLEndsTheSignIn() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (wait, start, _) = try signInWithAnUnopenedStartPage(c)
        let port = try #require(redirectPort(start))
        #expect(try FakeBrowser().send("GET", start).status == 302)
        let again = try FakeBrowser().send("GET", start)
        #expect(again.status != 302 && again.header("location") == nil)
        let r = try wait.answer()
        #expect(r.rc == NA_ESTATE && r.doc.errorCode == "flow_invalid", "\(r.doc)")
        #expect(r.doc["error"]?["message"]?.stringValue?.contains("twice") == true, "\(r.doc)")
        #expect(!listeningPorts().contains(port))
    }

    @Test func aConnectionFromAnotherUsersSocketIsRefused() throws {
        guard geteuid() == 0 else {
            print("skipped: creating a socket as another user needs root (setuid)")
            return
        }
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (wait, start, browser) = try signInWithAnUnopenedStartPage(c)
        // nobody (65534) fetches the start page: 403, and it is not used up.
        #expect(try fetchAsNobody(start) == "403")
        #expect(!wait.isDone)
        browser.visit(start)
        #expect(try wait.answer().doc["status"] == "signed_in")
    }

    @Test func aMistypedSubmitRedirectKeepsTheFlowAndItsListener() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let pending = c.call(na_sign_in_interactive, ["browser": "none"])
        let flow = try #require(pending.doc["flow"]?.stringValue)
        let port = try #require(redirectPort(pending.doc["redirect_uri"]?.stringValue ?? ""))
        let typo = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_redirect", "redirect_url": "http://localhst:1/?code=x&state=y"]
        )
        #expect(typo.doc.errorCode == "invalid_argument" && typo.doc["error"]?["flow"]?.stringValue == flow)
        #expect(listeningPorts().contains(port), "the listener is still open")
        let wait = Background {
            c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 30_000])
        }
        FakeBrowser().visit(try #require(pending.doc["authorization_url"]?.stringValue))
        #expect(try wait.answer().doc["status"] == "signed_in")
    }
}

/// GETs `url` from a process running as nobody (65534); its HTTP status, as text.
func fetchAsNobody(_ url: String) throws -> String {
    let script = """
        import os, sys, urllib.parse, http.client
        os.setgid(65534); os.setuid(65534)
        u = urllib.parse.urlsplit(sys.argv[1])
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
        c.request("GET", u.path)
        print(c.getresponse().status)
        """
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    p.arguments = ["-c", script, url]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}
