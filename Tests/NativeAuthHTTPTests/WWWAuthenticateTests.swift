import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// The JSON check the library gives the parser (the C ABI adds the 64-level bound).
private func isObject(_ text: String) -> Bool { (try? JSONValue.parse(text))?.objectValue != nil }

private func parse(_ header: String) throws -> WWWAuthenticate {
    try WWWAuthenticate.parse(header, isJSONObject: isObject)
}

/// The parse error of `header` (nil when it parses).
private func failure(_ header: String) -> WWWAuthenticate.ParseError? {
    do {
        _ = try WWWAuthenticate.parse(header, isJSONObject: isObject)
        return nil
    } catch { return error }
}

/// `{"access_token":{"nbf":{"essential":true, "value":"1604106651"}}}`: the claims of Microsoft's documented challenge.
private let graphClaimsJSON = #"{"access_token":{"nbf":{"essential":true, "value":"1604106651"}}}"#
private let graphClaimsBase64 =
    "eyJhY2Nlc3NfdG9rZW4iOnsibmJmIjp7ImVzc2VudGlhbCI6dHJ1ZSwgInZhbHVlIjoiMTYwNDEwNjY1MSJ9fX0="

/// The header forms Microsoft documents, and the rest of RFC 9110's grammar.
@Suite struct WWWAuthenticateTests {
    /// Microsoft Graph's CAE challenge (Microsoft's "Claims challenges" article), claims in padded base64.
    @Test func microsoftGraphClaimsChallenge() throws {
        let header =
            #"Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", "#
            + #"client_id="00000003-0000-0000-c000-000000000000", error="insufficient_claims", "#
            + #"claims="\#(graphClaimsBase64)""#
        let w = try parse(header)
        #expect(w.challenges.count == 1)
        let c = try #require(w.challenges.first)
        #expect(c.scheme == "Bearer" && c.token68 == nil)
        #expect(
            c.params == [
                "realm": "", "authorization_uri": "https://login.microsoftonline.com/common/oauth2/authorize",
                "client_id": "00000003-0000-0000-c000-000000000000", "error": "insufficient_claims",
                "claims": graphClaimsBase64,
            ]
        )
        #expect(c.claims == graphClaimsJSON)
        #expect(w.claims == graphClaimsJSON)
    }

    /// `Bearer authorization_uri="…", error="insufficient_claims", claims="…"` with base64url (no padding), the form
    /// the Azure SDKs decode; and claims sent as JSON text, which MSAL.NET passes on as it is.
    @Test func claimsInBase64URLAndAsText() throws {
        // A claims request whose base64 has both URL-alphabet characters ('-' and '_') and would need padding.
        let json = #"{"access_token":{"acrs":{"essential":true,"value":"c1"},"x":"??>>"}}"#
        let standard = base64(Array(json.utf8))
        #expect(standard.contains("+") || standard.contains("/"))
        #expect(standard.hasSuffix("="))
        let url = String(
            standard.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }.filter { $0 != "=" }
        )
        for value in [standard, url, String(standard.filter { $0 != "=" })] {
            let w = try parse(
                #"Bearer authorization_uri="https://login.microsoftonline.com/t/oauth2/authorize", "#
                    + #"error="insufficient_claims", claims="\#(value)""#
            )
            #expect(w.claims == json, "\(value)")
            #expect(w.challenges.first?.params["claims"] == value)
        }
        // The JSON text itself, quoted (its quotes escaped) or not.
        let escaped = json.replacingAll("\"", with: "\\\"")
        #expect(try parse(#"Bearer error="insufficient_claims", claims="\#(escaped)""#).claims == json)
        #expect(try parse(#"Bearer error="insufficient_claims", claims=" \#(escaped)""#).claims == " " + json)
    }

    /// Claims that cannot be decoded, or are not a JSON object, are left out; the raw value stays in the params.
    @Test func undecodableClaimsAreLeftOut() throws {
        let notObject = base64(Array("[1,2]".utf8))
        let notJSON = base64(Array("{nope".utf8))
        let notUTF8 = base64([0x7B, 0xFF, 0x7D])
        let values = [
            "", "x", "abc", "ab=c", "abcd=", "abc===", "ab cd", "eyJ\th", "{", "{\"a\":1", "null", notObject, notJSON,
            notUTF8, "e30=e30=", "%7B%7D",
        ]
        for value in values {
            let escaped = value.replacingAll("\"", with: "\\\"")
            let w = try parse(#"Bearer error="insufficient_claims", claims="\#(escaped)""#)
            #expect(w.challenges.first?.claims == nil, "\(value)")
            #expect(w.claims == nil, "\(value)")
            #expect(w.challenges.first?.params["claims"] == value)
        }
        // The smallest object, both ways.
        #expect(try parse(#"Bearer error=insufficient_claims, claims=e30"#).claims == "{}")
        #expect(try parse(#"Bearer error=insufficient_claims, claims="{}""#).claims == "{}")
    }

    /// The top-level claims are the first Bearer challenge's with error insufficient_claims (in any case) that has
    /// claims; other schemes and errors have their own claims, but are not the claims challenge.
    @Test func theClaimsChallengeIsTheFirstBearerWithInsufficientClaims() throws {
        let a = base64(Array(#"{"a":1}"#.utf8))
        let b = base64(Array(#"{"b":2}"#.utf8))
        let w = try parse(
            #"PoP error="insufficient_claims", claims="\#(a)", Bearer error="invalid_token", claims="\#(a)", "#
                + #"bearer Error="INSUFFICIENT_CLAIMS", claims="not base64!", "#
                + #"BEARER error="Insufficient_Claims", claims="\#(b)", Bearer error="insufficient_claims", "#
                + #"claims="\#(a)""#
        )
        #expect(w.challenges.map(\.scheme) == ["PoP", "Bearer", "bearer", "BEARER", "Bearer"])
        #expect(w.challenges.map(\.claims) == [#"{"a":1}"#, #"{"a":1}"#, nil, #"{"b":2}"#, #"{"a":1}"#])
        #expect(w.claims == #"{"b":2}"#)
        #expect(w.challenges[3].isScheme("bearer") && w.challenges[3].isScheme("Bearer"))
        #expect(!w.challenges[0].isScheme("Bearer"))
        #expect(try parse(#"Bearer error="invalid_token", claims="\#(a)""#).claims == nil)
        #expect(try parse(#"Bearer claims="\#(a)""#).claims == nil)
    }

    /// `Basic realm="x", Bearer error="invalid_token"`: two challenges in one header (or two headers joined).
    @Test func severalChallenges() throws {
        let w = try parse(#"Basic realm="x", Bearer error="invalid_token""#)
        #expect(w.challenges.map(\.scheme) == ["Basic", "Bearer"])
        #expect(w.challenges.map(\.params) == [["realm": "x"], ["error": "invalid_token"]])
        #expect(w.claims == nil)
        // After a comma, a token followed by "=" (spaces allowed between: BWS) is a parameter, not a scheme.
        #expect(
            try parse(#"Basic realm="x", Bearer =abc"#).challenges == [
                .init(scheme: "Basic", params: ["realm": "x", "bearer": "abc"])
            ]
        )

        let many = try parse(
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple", Bearer, "#
                + #"Negotiate, Digest realm="r",qop="auth,auth-int" , nonce=abc"#
        )
        #expect(many.challenges.map(\.scheme) == ["Newauth", "Basic", "Bearer", "Negotiate", "Digest"])
        #expect(many.challenges[0].params == ["realm": "apps", "type": "1", "title": #"Login to "apps""#])
        #expect(many.challenges[2].params.isEmpty && many.challenges[2].token68 == nil)
        #expect(many.challenges[4].params == ["realm": "r", "qop": "auth,auth-int", "nonce": "abc"])
    }

    /// token68 (`Negotiate abc==`), alone or among other challenges, with its padding.
    @Test func token68() throws {
        let w = try parse("Negotiate abc==")
        #expect(w.challenges == [.init(scheme: "Negotiate", token68: "abc==")])
        let mixed = try parse("Negotiate YII/+_-.~a=, Basic realm=\"r\", NTLM TlRMTVNTUAACAAAA ,Bearer")
        #expect(mixed.challenges.map(\.token68) == ["YII/+_-.~a=", nil, "TlRMTVNTUAACAAAA", nil])
        #expect(mixed.challenges.map(\.scheme) == ["Negotiate", "Basic", "NTLM", "Bearer"])
        // A run that is a valid token68 and not a parameter ("error=" has no value) is a token68.
        #expect(try parse("Bearer error=").challenges.first?.token68 == "error=")
        #expect(try parse("Bearer realm").challenges.first?.token68 == "realm")
    }

    /// Quoted strings: `\"` and `\\` (and any escaped character) unescaped; commas, `=` and spaces inside kept.
    @Test func escapesInQuotedStrings() throws {
        let c = try #require(
            try parse(#"Bearer a="x\"y", b="back\\slash", c="\q\ ", d="a, b=c", e="""#).challenges.first
        )
        #expect(c.params == ["a": #"x"y"#, "b": #"back\slash"#, "c": "q ", "d": "a, b=c", "e": ""])
        // Text outside ASCII inside a quoted string is kept (obs-text).
        #expect(try parse(#"Basic realm="Zoë ✓""#).challenges.first?.params["realm"] == "Zoë ✓")
    }

    /// Spaces and tabs wherever the grammar allows whitespace (and tabs where it asks for a space).
    @Test func oddWhitespace() throws {
        let expected = WWWAuthenticate(challenges: [
            .init(scheme: "Bearer", params: ["realm": "r", "error": "e"]), .init(scheme: "Basic", params: ["a": "b"]),
        ])
        for header in [
            #"Bearer realm="r", error="e", Basic a=b"#,
            "  Bearer   realm = \"r\"  ,error=\t\"e\" ,  Basic\ta=b  ",
            "\tBearer\trealm=r,,, error=e,\t,Basic a=b,",
            "Bearer realm=r , error = e , Basic  a  =  b",
            "Bearer ,realm=r, error=e, Basic a=b",
            // Lenient: a parameter after "Bearer," belongs to Bearer.
            "Bearer, realm=r, error=e, Basic a=b",
        ] {
            #expect(try parse(header) == expected, "\(header)")
        }
    }

    /// Names are case-insensitive (lower-cased); schemes are kept as sent; a name sent twice keeps its first value.
    @Test func namesAndDuplicates() throws {
        let c = try #require(try parse(#"bEaReR ReAlm="A", ERROR=x, realm="B", Realm=C, error="y""#).challenges.first)
        #expect(c.scheme == "bEaReR" && c.isScheme("BEARER"))
        #expect(c.params == ["realm": "A", "error": "x"])
        // Duplicates across challenges are separate parameters of separate challenges.
        let two = try parse("Bearer error=a, Bearer error=b")
        #expect(two.challenges.map(\.params) == [["error": "a"], ["error": "b"]])
    }

    /// No challenges: an empty header, spaces, or commas only (empty list elements, RFC 9110 §5.6.1.2).
    @Test func emptyHeaders() throws {
        for header in ["", " ", "\t", ",", ", ,, ,", " , \t,"] {
            #expect(try parse(header).challenges.isEmpty, "\(header)")
            #expect(try parse(header).claims == nil)
        }
    }

    /// What is not the grammar is an error naming the byte, never the text.
    @Test func hostileHeadersAreRefused() throws {
        let cases: [(String, String, Int)] = [
            (#"Bearer error="insufficient_claims"#, "an unterminated quoted string", 13),
            (#"Bearer a="x\"#, "an unterminated quoted string", 12),
            (#"Bearer a=b, ="c""#, "a parameter without a name", 12),
            (#"Bearer =abc"#, "a parameter before any auth-scheme", 0),  // BWS: the auth-param "Bearer=abc"
            (#"=x"#, "a parameter without a name", 0),
            (#"realm="x""#, "a parameter before any auth-scheme", 0),
            (#"Negotiate abc==, realm="x""#, "a parameter after a token68", 17),
            (#"Bearer a=b c=d"#, "expected a comma", 11),
            (#"Bearer a="b"c"#, "expected a comma", 12),
            (#"Bearer x=y, a=, b=c"#, "expected a token or a quoted string", 14),
            (#"Bearer a=, b=c"#, "a parameter after a token68", 11),  // "a=" is a token68
            (#"Bearer a b=c"#, "expected '=' after a parameter's name", 9),
            (#"Bearer="x""#, "a parameter before any auth-scheme", 0),
            (#"Bearer"x""#, "expected a space after the auth-scheme", 6),
            (#"Bearer "x""#, "expected a parameter", 7),
            ("Bearer a=\"x\u{1}y\"", "a control character in a quoted string", 11),
            ("Bearer a=\"x\u{7F}\"", "a control character in a quoted string", 11),
            ("Bearer a=\"x\\\u{0}\"", "a control character escaped", 12),
            ("Bearer a=\"x\u{0}\"", "a control character in a quoted string", 11),
            ("Bearer\u{0} a=b", "expected a space after the auth-scheme", 6),
            ("Bearer a=b\r\n Basic", "expected a comma", 10),
            ("Zoë a=b", "expected a space after the auth-scheme", 2),
            ("Bearer a=zoë", "expected a comma", 11),
            ("@", "expected an auth-scheme", 0),
        ]
        for (header, reason, at) in cases {
            let e = failure(header)
            #expect(e == .init(reason, at: at), "\(header.debugDescription): \(e.map(\.description) ?? "parsed")")
            #expect(e.map { !$0.description.contains("Bearer") && !$0.description.contains("zo") } ?? false)
        }
    }

    /// At most 64 KiB: a header just within parses, one byte more or 1 MB is refused (never trapped on), and a large
    /// header of many challenges and parameters parses in linear time.
    @Test func sizeIsBounded() throws {
        let prefix = #"Bearer error="insufficient_claims", realm=""#
        let fill = String(repeating: "x", count: WWWAuthenticate.maxBytes - prefix.utf8.count - 1)
        let exactly = prefix + fill + "\""
        #expect(exactly.utf8.count == WWWAuthenticate.maxBytes)
        #expect(try parse(exactly).challenges.first?.params["realm"]?.utf8.count == fill.utf8.count)
        #expect(failure(exactly + " ") == .init("the header is larger than 65536 bytes", at: 65_536))
        #expect(failure(String(repeating: "Bearer a=b, ", count: 90_000))?.reason.hasPrefix("the header is") == true)
        let many = String(repeating: "Basic realm=\"r\", Negotiate abc==, ", count: 1_800)
        #expect(try parse(many).challenges.count == 3_600)
        let params = (0..<6_000).map { "p\($0)=v" }.joined(separator: ",")
        #expect(try parse("Bearer " + params).challenges.first?.params.count == 6_000)
        // A quoted string, or the commas, the whole length of the header.
        #expect(
            failure("Bearer a=\"" + String(repeating: "\\\"", count: 30_000))?.reason == "an unterminated quoted string"
        )
        #expect(try parse(String(repeating: ",", count: WWWAuthenticate.maxBytes)).challenges.isEmpty)
    }

    /// The base64 decoder behind claims: both alphabets, padding optional but whole.
    @Test func claimsDecoding() {
        let yes = { (v: String) in WWWAuthenticate.decodeClaims(v, isJSONObject: isObject) }
        #expect(yes("eyJhIjoxfQ==") == #"{"a":1}"#)
        #expect(yes("eyJhIjoxfQ") == #"{"a":1}"#)
        #expect(yes("eyJhIjoxfQ=") == nil)  // half the padding
        #expect(yes("eyJhIjoxfQ===") == nil)
        #expect(yes("=eyJhIjoxfQ") == nil)
        #expect(yes("eyJhIjoxfQ==eyJh") == nil)
        #expect(yes("eyJhIjox fQ==") == nil)
        #expect(yes(#"{"a":1}"#) == #"{"a":1}"#)
        #expect(WWWAuthenticate.decodeClaims(#"{"a":1}"#, isJSONObject: { _ in false }) == nil)
        #expect(WWWAuthenticate.decodeClaims("eyJhIjoxfQ", isJSONObject: { _ in false }) == nil)
    }
}

/// Standard base64 with padding (the tests' own encoder).
private func base64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
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

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
