import NativeAuthCore
import NativeAuthJSON
import NativeAuthNet
import Synchronization
import Testing

@Suite struct AuthorityTests {
    @Test(arguments: [
        ("https://contoso.ciamlogin.com", "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
        ("https://contoso.ciamlogin.com/", "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
        ("HTTPS://Contoso.CiamLogin.COM", "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
        (
            "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/",
            "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"
        ),
        (
            "https://contoso.ciamlogin.com/aaaabbbb-0000-cccc-1111-dddd2222eeee",
            "https://contoso.ciamlogin.com/aaaabbbb-0000-cccc-1111-dddd2222eeee"
        ),
        ("http://127.0.0.1:8080/contoso.onmicrosoft.com", "http://127.0.0.1:8080/contoso.onmicrosoft.com"),
        ("http://localhost:1/t#frag", "http://localhost:1/t"),
    ])
    func normalises(input: String, expected: String) throws {
        #expect(try Authority(input).url == expected)
    }

    @Test(arguments: [
        "http://contoso.ciamlogin.com/contoso.onmicrosoft.com", "https://login.contoso.com",
        "https://contoso.ciamlogin.com/t?dc=x", "contoso.ciamlogin.com/t", "ftp://contoso.ciamlogin.com/t",
        "https://user@contoso.ciamlogin.com/t", "",
    ])
    func refuses(input: String) {
        #expect(throws: NativeAuthError.self) { try Authority(input) }
    }

    @Test func tenantSubdomain() throws {
        #expect(
            try Authority(tenantSubdomain: "contoso").url == "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"
        )
        for bad in ["", "Contoso", "con toso", "-x", "a.b", String(repeating: "a", count: 64)] {
            #expect(throws: NativeAuthError.self) { try Authority(tenantSubdomain: bad) }
        }
    }

    @Test func endpoints() throws {
        let a = try Authority("https://contoso.ciamlogin.com")
        #expect(
            a.endpoint("/oauth2/v2.0/initiate")
                == "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/oauth2/v2.0/initiate"
        )
    }
}

@Suite struct LoggerTests {
    @Test func filtersByLevelAndIsSilentByDefault() {
        let lines = Mutex<[String]>([])
        let logger = Logger()
        logger.log(.error, "dropped: no sink")
        logger.configure(level: .warning) { level, message, _ in
            lines.withLock { $0.append("\(level.name):\(message)") }
        }
        logger.log(.error, "e")
        logger.log(.warning, "w")
        logger.log(.info, "i")
        logger.log(.verbose, "v")
        #expect(lines.withLock { $0 } == ["error:e", "warning:w"])
    }
}

/// Which commands open a URL, in order: the configured browser_command, each of $BROWSER, then xdg-open (on a
/// desktop: with a display and outside an SSH session; BrowserHostTests has the other machines).
@Suite struct BrowserLauncherTests {
    @Test func candidatesInOrderWithTheURLAsOneArgument() {
        let url = "https://login.example/authorize?a=1&b=two words"
        let env: @Sendable (String) -> String? = {
            ["BROWSER": "firefox:chromium --incognito %s", "DISPLAY": ":0"][$0]
        }
        let l = SystemBrowserLauncher(command: "/opt/b/open --new-window", environment: env)
        #expect(
            l.candidates(for: url) == [
                ["/opt/b/open", "--new-window", url], ["firefox", url], ["chromium", "--incognito", url],
                ["xdg-open", url],
            ]
        )
        let bare = SystemBrowserLauncher(command: nil, environment: { $0 == "WAYLAND_DISPLAY" ? "wayland-0" : nil })
        #expect(bare.candidates(for: url) == [["xdg-open", url]])
        let headless = SystemBrowserLauncher(command: nil, environment: { _ in nil })
        #expect(headless.candidates(for: url).filter { $0.first == "xdg-open" }.isEmpty)
    }

    @Test func aCommandThatFailsIsReportedAndTheNextIsTried() {
        // `false` exits 1 (not opened), `true` exits 0 (opened); a missing program cannot be spawned. `false` is given
        // a minute to exit (`open`'s two seconds are short for a spawn on a machine as loaded as a sanitizer run).
        let env: @Sendable (String) -> String? = { $0 == "BROWSER" ? "/nonexistent/browser:true" : nil }
        #expect(
            SystemBrowserLauncher(command: "false", environment: env, fallback: "false")
                .open("https://x.example", within: 60)
        )
        let none: @Sendable (String) -> String? = { $0 == "BROWSER" ? "/nonexistent/browser" : nil }
        #expect(
            !SystemBrowserLauncher(command: "false", environment: none, fallback: "false")
                .open("https://x.example", within: 60)
        )
    }
}
