import Foundation
import NativeAuthHTTP
import NativeAuthNet
import NativeAuthTestSupport
import Testing

/// The transport's header guard (`CurlHTTPClient.headerList`, the last check before libcurl for every request the
/// library sends): the bytes each accepted header puts on the wire, and every header it must refuse — a name is an
/// HTTP token (RFC 9110 tchar), a value holds no control character but HTAB (RFC 9110 §5.5).
@Suite struct HeaderLineTests {
    /// The header lines a request carried, as received (the request line left out).
    func sent(_ headers: [(name: String, value: String)], body: [UInt8]? = nil) throws -> [[UInt8]] {
        let server = try TestHTTPServer { _ in .json("{}") }
        defer { server.stop() }
        let request = HTTPRequest(
            method: body == nil ? "GET" : "POST",
            url: server.baseURL + "/h",
            headers: headers,
            body: body ?? []
        )
        #expect(try CurlHTTPClient().send(request).status == 200)
        return Array(try #require(server.requests.first).rawLines.dropFirst())
    }

    func line(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func acceptedHeadersGoOnTheWireByteForByte() throws {
        let made = String("xx-from-substring".dropFirst(2))
        let cases: [(name: String, value: String)] = [
            ("X-Plain", "plain"),
            ("X-Utf8", "Zoë ✓ 日本"),
            ("X-Tab", "a\tb"),
            ("X-C1", "a\u{85}\u{9f}b"),
            ("X-Spaces", "  lead and trail  "),
            ("!#$%&'*+-.^_`|~", "token characters"),
            (made, made),
            ("X-Big", String(repeating: "v", count: 60_000)),
        ]
        let lines = try sent(cases)
        for (name, value) in cases {
            #expect(lines.contains(line(name + ": " + value)), "\(name.prefix(20))")
        }
    }

    @Test func thousandsOfHeadersAreAllSent() throws {
        let cases: [(name: String, value: String)] = (0..<3000).map { ("X-N\($0)", "v\($0)") }
        let lines = try sent(cases)
        for (name, value) in cases { #expect(lines.contains(line(name + ": " + value))) }
    }

    /// An empty value is a header with an empty value, not libcurl's "remove this header" (`Name:`): the app's
    /// `{"X-Empty": ""}` reaches the server; the transport's own `Expect:` still removes curl's 100-continue.
    @Test func anEmptyValueIsSentAsAnEmptyHeader() throws {
        let lines = try sent([("X-Empty", ""), ("Accept", "")], body: Array("{}".utf8))
        #expect(lines.contains(line("X-Empty:")))
        #expect(lines.contains(line("Accept:")))
        #expect(!lines.contains(where: { $0.starts(with: line("Accept: ")) }))
        #expect(!lines.contains(where: { $0.starts(with: line("Expect")) }))
    }

    /// A value of blanks only is an empty value (RFC 9110 §5.5: a field value has no leading or trailing whitespace),
    /// which libcurl would drop as it drops `Name:`: it is sent as an empty header too.
    @Test(arguments: [" ", "\t", "  \t "])
    func aBlankValueIsSentAsAnEmptyHeader(value: String) throws {
        let lines = try sent([("X-Blank", value), ("X-After", "a")])
        #expect(lines.contains(where: { $0.starts(with: line("X-Blank:")) }))
        #expect(lines.contains(line("X-After: a")))
    }

    @Test(arguments: [
        ("", "v"), (" X", "v"), ("X Y", "v"), ("X:Y", "v"), ("X-A:", "v"), ("X\u{7f}", "v"), ("X\u{0}", "v"),
        ("Xé", "v"), ("X\r\nInjected", "v"), ("X\t", "v"), ("X\n", "v"), ("", ""),
        ("X-V", "a\r\nInjected: 1"), ("X-V", "a\rb"), ("X-V", "a\nb"), ("X-V", "a\u{0}b"), ("X-V", "\r\n"),
        ("X-V", "end\n"), ("X-V", "a\u{7f}b"), ("X-V", "\u{1b}[31m"), ("X-V", "\u{0b}"), ("X-V", "\u{0c} "),
        ("X-V", "a\u{01}"), ("X-V", "a\u{1f}"), ("X;", ""), ("X;", "v"), ("X(", "v"), ("X/Y", "v"), ("X\"", "v"),
        ("X@", ""), ("{}", "v"),
    ])
    func forbiddenHeadersAreRefused(name: String, value: String) throws {
        let server = try TestHTTPServer { _ in .json("{}") }
        defer { server.stop() }
        let c = CurlHTTPClient()
        // Also when it follows many good ones (the half-built list is freed: ASan shows a leak otherwise).
        for before in [0, 500] {
            let headers: [(name: String, value: String)] = (0..<before).map { ("X-Good\($0)", "g") } + [(name, value)]
            #expect(throws: HTTPError.self) { try c.send(HTTPRequest(url: server.baseURL + "/x", headers: headers)) }
        }
        #expect(server.requests.isEmpty)
        // The client still works afterwards.
        #expect(try c.send(HTTPRequest(url: server.baseURL + "/ok")).status == 200)
    }
}
