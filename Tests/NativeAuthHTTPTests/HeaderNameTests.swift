import NativeAuthHTTP
import Testing

/// Header names match in any ASCII case, and only in ASCII case.
@Suite struct HeaderNameTests {
    @Test(arguments: ["dpop", "DPoP", "DPOP", "dPoP"]) func matchesInAnyASCIICase(name: String) {
        #expect(HeaderName.matches(name, "dpop"))
    }

    @Test(arguments: ["", "dpo", "dpopx", "xdpop", "dpop ", " dpop", "d-pop", "DPO\u{0050}\u{0301}", "\u{1D5BD}pop"])
    func refusesOtherNames(name: String) {
        #expect(!HeaderName.matches(name, "dpop"))
    }

    @Test func asciiFoldingOnly() {
        // U+212A KELVIN SIGN lowercases to "k" in Unicode; a header name is ASCII, so it is not "k".
        #expect(!HeaderName.matches("\u{212A}", "k"))
        #expect(HeaderName.matches("Client-Request-ID", "client-request-id"))
        #expect(HeaderName.matches("CONTENT-TYPE", "content-type"))
        // Bytes beside the letters are not folded: "@" (0x40) and "[" (0x5B) are not "`" and "{".
        #expect(!HeaderName.matches("@", "`"))
        #expect(!HeaderName.matches("[", "{"))
        // A name that is not a native String (made from a Substring) compares the same.
        let long = "x-Header: value"
        #expect(HeaderName.matches(String(long.split(separator: ":")[0]), "x-header"))
    }
}
