import NativeAuthTOML
import Testing

/// The profile file's TOML subset: what it reads (checked against the values TOML 1.0 — and Python's tomllib, which
/// the Python command's tests compared it with — gives the same text), and what it refuses, naming the line.
@Suite("TOML subset")
struct TOMLTests {
    static let sample = #"""
        default_profile = "work"   # a comment
        [profiles.default]
        authority = "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"
        client_id = 'literal\not-escaped'
        cache = false
        connect_timeout_ms = 10_000

        [profiles."with.dot"]
        scopes = [
            "api://a/Read",  # comment inside
            'api://b/Write',
        ]
        escaped = "tab\tquote\" \u00e9 \U0001F600"
        nested.key = -5
        registries = { "registry.example" = ["api://r/Pull"], "other.example:5000" = [] }
        """#

    @Test("a sample file reads as TOML 1.0 says")
    func sample() throws {
        let doc = try TOMLParser.parse(Self.sample)
        let profiles = try #require(doc["profiles"]?.table)
        #expect(doc["default_profile"] == .string("work"))
        #expect(
            profiles["default"]
                == .table([
                    "authority": .string("https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
                    "client_id": .string("literal\\not-escaped"),
                    "cache": .boolean(false),
                    "connect_timeout_ms": .integer(10000),
                ])
        )
        let dot = try #require(profiles["with.dot"]?.table)
        #expect(dot["scopes"] == .array([.string("api://a/Read"), .string("api://b/Write")]))
        #expect(dot["escaped"] == .string("tab\tquote\" é 😀"))
        #expect(dot["nested"] == .table(["key": .integer(-5)]))
        #expect(
            dot["registries"]
                == .table(["registry.example": .array([.string("api://r/Pull")]), "other.example:5000": .array([])])
        )
    }

    @Test("line ends: LF and CR LF; comments and blank lines anywhere")
    func lineEnds() throws {
        let doc = try TOMLParser.parse("# top\r\n\r\na = 1 # one\r\n[t] # table\r\nb = [\r\n 1, # x\r\n 2\r\n]\r\n")
        #expect(doc == ["a": .integer(1), "t": .table(["b": .array([.integer(1), .integer(2)])])])
        #expect(try TOMLParser.parse("") == [:])
        #expect(
            try TOMLParser.parse("a = -0\nb = +7\nc = 9_223_372_036_854_775_807") == [
                "a": .integer(0), "b": .integer(7), "c": .integer(.max),
            ]
        )
    }

    @Test(
        "valid TOML outside the subset is refused, saying so",
        arguments: [
            ("a = 1.5", "unexpected '.'"), ("[[t]]", "arrays of tables"), ("a = \"\"\"x\"\"\"", "multi-line"),
            ("a = '''x'''", "multi-line"), ("a = 1979-05-27", "unexpected"), ("a = inf", "unsupported value"),
            ("a = 0x1f", "unexpected"),
        ]
    )
    func outsideTheSubset(text: String, words: String) {
        #expect(throws: TOMLError.self) { try TOMLParser.parse(text) }
        do { _ = try TOMLParser.parse(text) } catch { #expect(error.message.contains(words), "\(error)") }
    }

    @Test(
        "invalid TOML is refused (as tomllib refuses it)",
        arguments: [
            "a = ", "[a]\n[a]\n", "a = 1\na = 2\n", "a = \"x", "a = 01", "a = [1 2]", "a = tru", "a = 1_", "a = 1__0",
            "a.b = 1\na = 2", "a = 1\na.b = 2", "= 1", "a = \"\\q\"", "a = \"\\u12\"", "a = \"\\uD800\"", "[a",
            "a = { b = 1", "a = { b = 1, }", "a = 1 b = 2", "a = 99999999999999999999", "a = 'x\ny'",
        ]
    )
    func invalid(text: String) {
        #expect(throws: TOMLError.self) { try TOMLParser.parse(text) }
    }

    @Test("control characters are refused in strings (tab is allowed), escapes give them")
    func controls() throws {
        #expect(try TOMLParser.parse("a = \"x\ty\"") == ["a": .string("x\ty")])
        #expect(try TOMLParser.parse("a = \"\\u001b\\u007f\"") == ["a": .string("\u{1b}\u{7f}")])
        for c: UInt8 in [0x00, 0x01, 0x1B, 0x7F, 0x0D] {
            #expect(throws: TOMLError.self) { try TOMLParser.parse([0x61, 0x3D, 0x22, c, 0x22]) }
            #expect(throws: TOMLError.self) { try TOMLParser.parse([0x61, 0x3D, 0x27, c, 0x27]) }
        }
    }

    @Test("errors name the line")
    func lines() {
        do {
            _ = try TOMLParser.parse("a = 1\n\n[profiles.x]\nb = oops\n")
            Issue.record("no error")
        } catch {
            #expect(error.line == 4)
            #expect(error.description.hasPrefix("line 4: "))
        }
    }

    @Test("bounds: bytes that are not UTF-8, more than 1 MiB, nesting deeper than 32")
    func bounds() throws {
        #expect(throws: TOMLError.self) { try TOMLParser.parse([0x61, 0x3D, 0x22, 0xFF, 0x22]) }
        let big = "a = \"" + String(repeating: "x", count: TOMLParser.maxBytes) + "\""
        #expect(throws: TOMLError.self) { try TOMLParser.parse(big) }
        let deep = "a = " + String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(throws: TOMLError.self) { try TOMLParser.parse(deep) }
        let ok = "a = " + String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(throws: Never.self) { try TOMLParser.parse(ok) }
        let tables = "a = " + String(repeating: "{b = ", count: 40) + "1" + String(repeating: "}", count: 40)
        #expect(throws: TOMLError.self) { try TOMLParser.parse(tables) }
    }
}
