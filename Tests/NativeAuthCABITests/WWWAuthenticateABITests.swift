import NativeAuthJSON
import Testing

@testable import NativeAuthCABI

/// `na_parse_www_authenticate` as C calls it: bytes (NUL added) in, status and the document's text out.
private func parse(_ bytes: [UInt8]) -> (rc: Int32, text: String) {
    var out: UnsafeMutablePointer<CChar>? = nil
    let rc = (bytes + [0]).withUnsafeBufferPointer { p in
        p.withMemoryRebound(to: CChar.self) { na_parse_www_authenticate($0.baseAddress, &out) }
    }
    defer { na_string_free(out) }
    return (rc, out.map { String(cString: $0) } ?? "")
}

private func parse(_ header: String) -> (rc: Int32, doc: JSONValue?) {
    let (rc, text) = parse(Array(header.utf8))
    return (rc, try? JSONValue.parse(text))
}

private func base64(_ text: String) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    let bytes = Array(text.utf8)
    var out = ""
    var i = 0
    while i < bytes.count {
        let chunk = Array(bytes[i..<min(i + 3, bytes.count)])
        let n = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
        for k in 0..<4 { out.append(k <= chunk.count ? alphabet[Int(n >> (18 - 6 * UInt32(k)) & 63)] : "=") }
        i += 3
    }
    return out
}

@Suite struct WWWAuthenticateABITests {
    /// The result document of Microsoft Graph's claims challenge, member for member.
    @Test func resultShape() throws {
        let claims = #"{"access_token":{"nbf":{"essential":true, "value":"1604106651"}}}"#
        let header =
            #"Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", "#
            + #"client_id="00000003-0000-0000-c000-000000000000", error="insufficient_claims", "#
            + #"claims="\#(base64(claims))", Negotiate abc==, Basic"#
        let (rc, doc) = parse(header)
        #expect(rc == 0)
        let expected: JSONValue = [
            "v": 1,
            "challenges": [
                [
                    "scheme": "Bearer",
                    "params": [
                        "realm": "", "authorization_uri": "https://login.microsoftonline.com/common/oauth2/authorize",
                        "client_id": "00000003-0000-0000-c000-000000000000", "error": "insufficient_claims",
                        "claims": .string(base64(claims)),
                    ],
                    "claims": .string(claims),
                ],
                ["scheme": "Negotiate", "params": [:], "token68": "abc=="],
                ["scheme": "Basic", "params": [:]],
            ],
            "claims": .string(claims),
        ]
        #expect(doc == expected, "\(doc?.serialized() ?? "")")
        #expect(parse("").doc == ["v": 1, "challenges": []])
        #expect(parse(" , ,").doc == ["v": 1, "challenges": []])
        #expect(parse(#"Bearer error="invalid_token""#).doc?["claims"] == nil)
    }

    /// The claims it reports are claims requests the library takes back: `na_get_access_token` reads them (and then
    /// answers that nobody is signed in, not that the request is invalid).
    @Test func reportedClaimsAreAcceptedBack() throws {
        let request = #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#
        let header = #"Bearer error="insufficient_claims", claims="\#(base64(request))""#
        let claims = try #require(parse(header).doc?["claims"]?.stringValue)
        #expect(claims == request)
        var handle: OpaquePointer? = nil
        #expect(na_client_new(#"{"authority":"http://127.0.0.1:9/t","client_id":"c"}"#, &handle, nil) == 0)
        defer { na_client_free(handle) }
        let tokenRequest = JSONValue.object(["scopes": ["api://a/read"], "claims": .string(claims)]).serialized()
        var out: UnsafeMutablePointer<CChar>? = nil
        let rc = na_get_access_token(handle, tokenRequest, &out)
        defer { na_string_free(out) }
        let answer = try JSONValue.parse(String(cString: try #require(out)))
        #expect(rc == NAStatus.notFound.rawValue && answer["error"]?["code"] == "no_account", "\(answer.serialized())")
    }

    /// Claims nested deeper than any document the library reads are left out (the raw value stays in params).
    @Test func deepClaimsAreLeftOut() {
        let deep = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        let shallow = String(repeating: #"{"a":"#, count: 64) + "1" + String(repeating: "}", count: 64)
        let (rc, doc) = parse(#"Bearer error=insufficient_claims, claims="\#(base64(deep))""#)
        #expect(rc == 0 && doc?["claims"] == nil && doc?["challenges"]?.arrayValue?.first?["claims"] == nil)
        #expect(doc?["challenges"]?.arrayValue?.first?["params"]?["claims"]?.stringValue == base64(deep))
        #expect(
            parse(#"Bearer error=insufficient_claims, claims="\#(base64(shallow))""#).doc?["claims"] == .string(shallow)
        )
    }

    /// NULL header, NULL out, a header over 64 KiB (1 MB), invalid UTF-8, a header that is not the grammar: an
    /// invalid_argument document that never quotes the header; never a trap.
    @Test func refusals() throws {
        var out: UnsafeMutablePointer<CChar>? = nil
        #expect(na_parse_www_authenticate(nil, &out) == NAStatus.invalidArgument.rawValue)
        let nullDoc = try JSONValue.parse(String(cString: try #require(out)))
        na_string_free(out)
        #expect(nullDoc["error"]?["code"] == "invalid_argument" && nullDoc["error"]?["message"] == "header is NULL")
        #expect(na_parse_www_authenticate("Bearer", nil) == NAStatus.invalidArgument.rawValue)
        #expect(na_parse_www_authenticate(nil, nil) == NAStatus.invalidArgument.rawValue)

        let secret = "s3cr3t-Valu3"
        let cases: [([UInt8], String)] = [
            (Array("Bearer realm=\"\(secret)".utf8) + [UInt8](repeating: 0x61, count: 1_000_000), "larger than 65536"),
            (
                Array("Bearer realm=\"\(secret)".utf8) + [UInt8](repeating: 0x61, count: 65_536 - 20),
                "larger than 65536"
            ),
            (Array("Bearer realm=\"\(secret)".utf8) + [0xFF, 0xFE] + Array("\"".utf8), "not valid UTF-8"),
            (Array("Bearer realm=\"\(secret)".utf8) + [0xC3] + Array("\"".utf8), "not valid UTF-8"),
            (Array("Bearer realm=\"\(secret)".utf8), "an unterminated quoted string at byte 13"),
            (Array("Bearer realm=\"\(secret)\" \(secret)".utf8), "expected a comma at byte 28"),
            (Array("\(secret)=x".utf8), "a parameter before any auth-scheme at byte 0"),
            (Array("Bearer \(secret)\u{1}".utf8), "expected '=' after a parameter's name at byte 19"),
            (Array(",,,=".utf8), "a parameter without a name at byte 3"),
        ]
        for (bytes, message) in cases {
            let (rc, text) = parse(bytes)
            #expect(rc == NAStatus.invalidArgument.rawValue)
            let doc = try JSONValue.parse(text)
            #expect(doc["v"] == 1 && doc["error"]?["code"] == "invalid_argument")
            #expect(doc["error"]?["message"]?.stringValue?.contains(message) == true, "\(text)")
            #expect(!text.contains(secret) && !text.contains("Bearer"), "\(text)")
        }
        // The largest header accepted: 65,536 bytes.
        let fill = String(repeating: "x", count: 65_536 - #"Bearer realm="""#.utf8.count)
        let (rc, doc) = parse(#"Bearer realm="\#(fill)""#)
        #expect(rc == 0 && doc?["challenges"]?.arrayValue?.first?["params"]?["realm"]?.stringValue == fill)
        // A NUL ends the C string: what follows it is not read.
        #expect(parse(Array("Basic".utf8) + [0] + Array("=\"".utf8)).rc == 0)
    }

    /// Random bytes (mostly the grammar's own characters): always a status and a document, never a trap.
    @Test func randomInputNeverTraps() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array(#"Bearer Basic realm=error"claims,\ =,"\#t"#.utf8) + [0x01, 0x7F, 0xC3, 0xA9, 0xFF]
        for _ in 0..<3000 {
            let n = Int.random(in: 0..<80, using: &rng)
            let bytes = (0..<n).map { _ in alphabet.randomElement(using: &rng) ?? 0x20 }
            let (rc, text) = parse(bytes)
            let doc = try? JSONValue.parse(text)
            #expect(doc?["v"] == 1)
            #expect(rc == 0 ? doc?["challenges"]?.arrayValue != nil : doc?["error"]?["code"] == "invalid_argument")
        }
    }
}
