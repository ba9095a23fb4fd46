import NativeAuthHTTP
import NativeAuthNet
import Testing

/// The proxy address parser, the no-proxy list (libcurl's rules) and the plan the environment makes.
@Suite struct ProxyURLTests {
    @Test func addresses() throws {
        let p = try ProxyURL("http://alice:s3cret%40pw%3A@Proxy.Corp:3128/")
        #expect(p.scheme == .http && p.host == "proxy.corp" && p.port == 3128)
        #expect(p.username == "alice" && p.password == "s3cret@pw:")
        #expect(p.display == "http://proxy.corp:3128" && p.hasCredentials)
        #expect(try ProxyURL("proxy.corp").display == "http://proxy.corp:1080")
        #expect(try ProxyURL("HTTPS://[FD00::1]").display == "https://[fd00::1]:443")
        #expect(try ProxyURL("socks5h://10.0.0.1:9050").resolvesLocally == false)
        #expect(try ProxyURL("socks5://10.0.0.1:9050").resolvesLocally == true)
        let negotiate = try ProxyURL("http://:@proxy:8080")
        #expect(negotiate.username == "" && negotiate.password == "" && negotiate.hasCredentials)
        #expect(try ProxyURL("http://user@proxy:8080").password == nil)
    }

    @Test func refusals() {
        let cases: [(String, ProxyURL.ParseError)] = [
            ("", .empty), ("ftp://proxy:21", .unsupportedScheme), ("http://pro xy:1", .badCharacter),
            ("http://proxy:0", .badPort), ("http://proxy:65536", .badPort), ("http://proxy:", .badPort),
            ("http://proxy:1/path", .pathNotAllowed), ("http://proxy:1?x", .pathNotAllowed),
            ("http://u:p%zz@proxy:1", .badUserInfo), ("http://u:p%00@proxy:1", .badUserInfo),
            ("http://[zz]:1", .badHost), ("http://:1", .badHost), ("http://a..b:1", .badHost),
            ("http://prøxy:1", .badCharacter), (String(repeating: "a", count: 2049), .tooLong),
        ]
        for (text, expected) in cases {
            #expect(throws: expected, "\(text)") { try ProxyURL(text) }
        }
    }

    /// The password never leaves through the value's descriptions, and a parse error never repeats its text.
    @Test func credentialsStayInside() throws {
        let p = try ProxyURL("http://alice:Hunter2-Secret@proxy:3128")
        for text in ["\(p)", String(reflecting: p), String(describing: p), p.display] {
            #expect(!text.contains("Hunter2-Secret") && !text.contains("alice"))
        }
        var dumped = ""
        dump(p, to: &dumped)
        #expect(!dumped.contains("Hunter2-Secret"))
        do {
            _ = try ProxyURL("http://alice:Hunter2-Secret@proxy:99999")
            Issue.record("accepted")
        } catch {
            #expect(!error.description.contains("Hunter2"))
        }
    }
}

@Suite struct NoProxyListTests {
    @Test func namesAsLibcurlReadsThem() {
        let n = NoProxyList(" .corp.example ,internal. localhost")
        #expect(n.matches(host: "corp.example") && n.matches(host: "login.corp.example"))
        #expect(n.matches(host: "internal") && n.matches(host: "a.internal") && n.matches(host: "LOCALHOST"))
        #expect(!n.matches(host: "notcorp.example") && !n.matches(host: "example") && !n.matches(host: "internal2"))
        #expect(NoProxyList("*").matches(host: "anything.example"))
        #expect(!NoProxyList("*.corp").matches(host: "a.corp"))  // libcurl: "*" only alone
        #expect(!NoProxyList("").matches(host: "a"))
    }

    @Test func addresses() {
        let n = NoProxyList("10.0.0.0/8, 192.168.1.7, fd00::/8")
        #expect(n.matches(host: "10.20.30.40") && n.matches(host: "192.168.1.7"))
        #expect(!n.matches(host: "11.0.0.1") && !n.matches(host: "192.168.1.8"))
        #expect(n.matches(host: "[fd12::1]") && !n.matches(host: "[fe80::1]"))
        // Addresses match only hosts written as addresses: no name is resolved.
        #expect(!NoProxyList("127.0.0.1").matches(host: "login.example"))
        #expect(!NoProxyList("10.0.0.0/40").matches(host: "10.0.0.1"))
    }
}

@Suite struct ProxyPlanTests {
    private func url(_ s: String) throws -> HTTPURL { try HTTPURL(s) }

    @Test func environmentOrder() throws {
        let env: [String: String] = [
            "HTTPS_PROXY": "http://upper:1", "all_proxy": "http://all:2", "http_proxy": "http://plain:3",
            "NO_PROXY": "skip.example",
        ]
        let plan = ProxyPlan.environment { env[$0] }
        #expect(plan.proxySource == "HTTPS_PROXY" && plan.noProxySource == "NO_PROXY")
        #expect(
            try plan.route(for: url("https://login.example/t"))
                == .proxy(ProxyURL("http://upper:1"), source: "HTTPS_PROXY")
        )
        #expect(try plan.route(for: url("https://a.skip.example/t")) == .direct)
        // Loopback never goes through a proxy, whatever the lists say.
        #expect(try plan.route(for: url("http://localhost:8080/t")) == .direct)
        #expect(try plan.route(for: url("https://[::1]/t")) == .direct)
        let lower = ProxyPlan.environment { ["https_proxy": "http://lower:1", "HTTPS_PROXY": "http://upper:1"][$0] }
        #expect(lower.proxySource == "https_proxy")
        // http_proxy plays no part (plain http goes only to loopback hosts).
        #expect(ProxyPlan.environment { ["http_proxy": "http://plain:3"][$0] }.proxy == nil)
        #expect(ProxyPlan.environment { ["https_proxy": ""][$0] }.proxy == nil)
    }

    @Test func invalidEnvironmentValueFailsTheRequestNotTheClient() throws {
        let plan = ProxyPlan.environment { ["https_proxy": "http://u:Hunter2@proxy:0"][$0] }
        guard case .invalid(let e, let source) = try plan.route(for: url("https://login.example/t")) else {
            Issue.record("not invalid")
            return
        }
        #expect(e == .badPort && source == "https_proxy")
    }

    @Test func configuredProxyKeepsTheEnvironmentsNoProxyUnlessGivenOne() throws {
        let env: (String) -> String? = { ["no_proxy": "corp.example", "https_proxy": "http://env:1"][$0] }
        let p = try ProxyURL("http://cfg:3128")
        let plan = ProxyPlan.configured(p, noProxy: nil, environment: env)
        #expect(plan.proxySource == "config" && plan.noProxySource == "no_proxy")
        #expect(try plan.route(for: url("https://a.corp.example/")) == .direct)
        #expect(try plan.route(for: url("https://b.example/")) == .proxy(p, source: "config"))
        let own = ProxyPlan.configured(p, noProxy: "", environment: env)
        #expect(try own.route(for: url("https://a.corp.example/")) == .proxy(p, source: "config"))
    }
}

@Suite struct SystemTrustTests {
    @Test func fallbackWhenLibcurlsFileIsMissing() {
        let fedora: Set<String> = ["/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"]
        let d = SystemTrust.choose(
            curlFile: "/etc/ssl/certs/ca-certificates.crt",
            curlDirectory: "/etc/ssl/certs",
            exists: fedora.contains
        )
        #expect(d.file == "/etc/pki/tls/certs/ca-bundle.crt" && d.isFallback)
        let debian = SystemTrust.choose(
            curlFile: "/etc/ssl/certs/ca-certificates.crt",
            curlDirectory: nil,
            exists: { $0 == "/etc/ssl/certs/ca-certificates.crt" }
        )
        #expect(debian.file == "/etc/ssl/certs/ca-certificates.crt" && !debian.isFallback)
        // libcurl without a built-in file (or too old to say): left alone.
        let none = SystemTrust.choose(curlFile: nil, curlDirectory: nil, exists: { _ in true })
        #expect(none.file == nil && !none.isFallback)
        // Nothing well-known either: libcurl's own path stays (its error will name it).
        let bare = SystemTrust.choose(curlFile: "/missing.crt", curlDirectory: nil, exists: { _ in false })
        #expect(bare.file == "/missing.crt" && !bare.isFallback)
    }

    @Test func thisMachinesDefaultsExist() {
        let d = SystemTrust.current
        if let f = d.file { #expect(d.curlFile != nil && !f.isEmpty) }
    }
}
