import Testing

@testable import NativeAuthHTTP

/// The URL parser (bytes, not Characters): what it keeps, lowercases and refuses.
@Suite struct HTTPURLTests {
    @Test(
        arguments: [
            (
                "HTTPS://Login.Example.COM:8443/Tenant/Path?x=1&Y=2#frag", "https", "login.example.com", 8443,
                "/Tenant/Path",
                "x=1&Y=2"
            ),
            ("http://127.0.0.1", "http", "127.0.0.1", nil, "", nil),
            ("http://[::1]:65535/", "http", "[::1]", 65535, "/", nil),
            ("https://[FE80::1]/a", "https", "[fe80::1]", nil, "/a", nil),
            ("https://a_b-c.d/?", "https", "a_b-c.d", nil, "/", ""),
            ("https://h#x?y", "https", "h", nil, "", nil),
        ] as [(String, String, String, Int?, String, String?)]
    )
    func parses(_ text: String, scheme: String, host: String, port: Int?, path: String, query: String?) throws {
        let u = try HTTPURL(text)
        #expect(u.scheme == scheme && u.host == host && u.port == port && u.path == path && u.query == query)
    }

    @Test(
        arguments: [
            ("example.com/x", HTTPURL.ParseError.notAbsolute),
            ("FTP://x", .unsupportedScheme("ftp")),
            ("https://user@host/", .userInfo),
            ("https:///path", .badHost),
            ("https://.host", .badHost),
            ("https://a..b", .badHost),
            ("https://h\u{e9}st", .badCharacter),
            ("https://host /", .badCharacter),
            ("https://[::1", .badHost),
            ("https://[]", .badHost),
            ("https://[::1]x", .badHost),
            ("https://[g::1]", .badHost),
            ("https://host:", .badPort),
            ("https://host:0", .badPort),
            ("https://host:65536", .badPort),
            ("https://host:123456", .badPort),
            ("https://host:8a", .badPort),
            ("https://[::1]:", .badPort),
        ] as [(String, HTTPURL.ParseError)]
    )
    func refuses(_ text: String, _ expected: HTTPURL.ParseError) {
        #expect(throws: expected) { try HTTPURL(text) }
    }
}
