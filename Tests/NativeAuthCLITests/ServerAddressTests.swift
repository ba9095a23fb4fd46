import Testing

@testable import nativeauth_cli

/// The credential helpers' address parser and comparison (issue 28; end to end: test_helper_scoping.py).
@Suite("Server addresses")
struct ServerAddressTests {
    @Test(
        "a bare host[:port] or http(s):// + host[:port] + a path",
        arguments: [
            ("registry.example", "registry.example"), ("REGISTRY.Example:5000", "registry.example:5000"),
            ("https://registry.example", "registry.example"), ("HTTP://registry.example:80/v1/", "registry.example:80"),
            ("https://registry.example:5000/v2/x/y-z_~.%41", "registry.example:5000"), ("127.0.0.1:1", "127.0.0.1:1"),
            ("[::1]:4567", "[::1]:4567"), ("https://[FE80::1]/", "[fe80::1]"), ("a_b-c.d", "a_b-c.d"),
            ("x:65535", "x:65535"),
        ]
    )
    func parsed(text: String, hostPort: String) {
        #expect(ServerAddress.parse(text)?.hostPort == hostPort, "\(text)")
    }

    @Test(
        "anything else is no address",
        arguments: [
            "", " ", "evil.example/https://registry.example/", "evil.example#://registry.example",
            "https://registry.example@evil.example", "https://u:p@registry.example", "registry.example@evil.example",
            "https://registry.example?x", "https://registry.example/v2?x", "https://registry.example#x",
            "registry.example/v2/", "registry.example/", " registry.example", "registry.example ",
            "https://registry.example /", "https://registry.example/ x", "https://registry.example\\evil",
            "https://registry.example/\\evil", "ftp://registry.example", "https:registry.example",
            "https:/registry.example", "https:///registry.example", "//registry.example", "://registry.example",
            "https://", "x:", "x:0", "x:00", "x:080", "x:65536", "x:99999", "x:+1", "x:-1", "x:1:2", "x:a", "x%2ey",
            "x.", ".x", "x..y", "registry.ex\u{430}mple", "x\u{0}", "x\u{1b}", "[::1", "[::1]x", "[x]", "[]", "[:]",
            "[::1%eth0]", "https://x:5000evil", String(repeating: "a", count: 64) + ".example",
            "https://x/\u{202e}", "https://x/\u{7f}",
        ]
    )
    func refused(text: String) {
        #expect(ServerAddress.parse(text) == nil, "\(text.debugDescription)")
    }

    @Test("a name without a port is the scheme's default port; case aside, hosts compare exactly")
    func names() throws {
        let dev = try #require(ServerAddress.hostPort("dev.contoso.com"))
        let explicit = try #require(ServerAddress.hostPort("Dev.Contoso.com:443"))
        let other = try #require(ServerAddress.hostPort("dev.contoso.com:8443"))
        #expect(dev.names(explicit, over: "https") && explicit.names(dev, over: "https"))
        #expect(!dev.names(explicit, over: "http") && !dev.names(other, over: "https"))
        let local = try #require(ServerAddress.hostPort("localhost"))
        let local80 = try #require(ServerAddress.hostPort("localhost:80"))
        let v6 = try #require(ServerAddress.hostPort("[::1]:1"))
        let near = try #require(ServerAddress.hostPort("127.0.0.2"))
        #expect(local.names(local80, over: "http") && !local.names(local80, over: "https"))
        #expect(local.isLoopback && v6.isLoopback && !dev.isLoopback && !near.isLoopback)
    }
}
