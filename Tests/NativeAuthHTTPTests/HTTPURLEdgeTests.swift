import Foundation
import Testing

@testable import NativeAuthHTTP

/// The byte parser at the edges where bytes and Characters could differ, and on Strings that are not native
/// contiguous UTF-8 (attack round Z on the speed change of issue 32; each answer here is the old Character
/// parser's).
@Suite struct HTTPURLEdgeTests {
    @Test(
        arguments: [
            ("", HTTPURL.ParseError.notAbsolute),
            ("://", .unsupportedScheme("")),
            ("h:/", .notAbsolute),
            (":/", .notAbsolute),
            ("http", .notAbsolute),
            ("http:/x", .notAbsolute),
            ("http://", .badHost),
            ("http://#", .badHost),
            ("http://?x", .badHost),
            ("http://:80", .badHost),
            ("x://http://h", .unsupportedScheme("x")),
            ("http:://h", .unsupportedScheme("http:")),
            ("e\u{301}", .badCharacter),
            ("http://e\u{301}.example", .badCharacter),
            ("http://h/\u{301}", .badCharacter),
            ("http://h/\u{7f}", .badCharacter),
            ("http://h\r\n", .badCharacter),
            ("\u{FEFF}http://h", .badCharacter),
            ("http://\u{FF21}", .badCharacter),
            ("http://h:\u{0661}", .badCharacter),
            ("http://h%41", .badHost),
            ("http://[", .badHost),
            ("http://]", .badHost),
            ("http://[:80", .badHost),
            ("http://[::1]]", .badHost),
            ("http://[[::1]]", .badHost),
            ("http://[::1]:80:80", .badPort),
            ("http://h:0000", .badPort),
            ("http://h:000080", .badPort),
            ("http://h:+80", .badPort),
            ("http://h:-1", .badPort),
            ("http://h::80", .badPort),
            ("http://a@b@c", .userInfo),
            ("http://@", .userInfo),
            ("http://.", .badHost),
            ("http://" + String(repeating: "a", count: 254), .badHost),
        ] as [(String, HTTPURL.ParseError)]
    )
    func refuses(_ text: String, _ expected: HTTPURL.ParseError) {
        #expect(throws: expected) { try HTTPURL(text) }
    }

    @Test(
        arguments: [
            ("hTtP://H", "http", "h", nil, "", nil),
            ("http://h:00080", "http", "h", 80, "", nil),
            ("http://h:00001/", "http", "h", 1, "/", nil),
            ("http://h:65535", "http", "h", 65535, "", nil),
            ("http://a./", "http", "a.", nil, "/", nil),
            ("http://-_-", "http", "-_-", nil, "", nil),
            ("http://h/%zz%/%2F?%#%", "http", "h", nil, "/%zz%/%2F", "%"),
            ("http://h/a://b?c://d#e://f", "http", "h", nil, "/a://b", "c://d"),
            ("http://h/@x?@y", "http", "h", nil, "/@x", "@y"),
            ("http://h?a/b@c", "http", "h", nil, "", "a/b@c"),
            ("http://h#a@b", "http", "h", nil, "", nil),
            ("http://[a:B:.]/", "http", "[a:b:.]", nil, "/", nil),
            ("http://[::1]#:x", "http", "[::1]", nil, "", nil),
        ] as [(String, String, String, Int?, String, String?)]
    )
    func parses(_ text: String, scheme: String, host: String, port: Int?, path: String, query: String?) throws {
        let u = try HTTPURL(text)
        #expect(u.scheme == scheme && u.host == host && u.port == port && u.path == path && u.query == query)
    }

    /// The longest host, and a parsed URL written out (`description`) parses back to itself.
    @Test func aLongHostAndTheFixedPoint() throws {
        let host = String(repeating: "a", count: 253)
        let u = try HTTPURL("HTTPS://" + host.uppercased() + ":443/P?Q")
        #expect(u.host == host && u.port == 443 && u.path == "/P" && u.query == "Q")
        #expect(try HTTPURL(u.description) == u)
        #expect(u.origin == "https://" + host + ":443")
    }

    /// Strings that are not native contiguous UTF-8 (a Substring's copy, an NSString, a String made of one character
    /// at a time, a bridged UTF-16 string) parse as their native copy does, and never crash.
    @Test func stringsOfEveryMakeParseAlike() throws {
        let texts = [
            "https://Login.Example.com:8443/t/p?x=1#f", "http://[::1]:80", "http://e\u{301}", "", "://", "http://h:0",
        ]
        for text in texts {
            let expected = Result { () throws(HTTPURL.ParseError) in try HTTPURL(text) }
            let padded = "\u{e9}" + text + "\u{e9}"
            let variants = [
                String(padded.dropFirst().dropLast()),
                NSString(string: text) as String,
                String(NSString(characters: Array(text.utf16), length: text.utf16.count)),
                String(text.map { $0 }),
                String(decoding: Array(text.utf16), as: UTF16.self),
            ]
            for v in variants {
                let got = Result { () throws(HTTPURL.ParseError) in try HTTPURL(v) }
                #expect("\(got)" == "\(expected)", "\(v.debugDescription)")
            }
            // A Substring parsed through its String, as callers do.
            let sub = padded.dropFirst().dropLast()
            #expect("\(Result { () throws(HTTPURL.ParseError) in try HTTPURL(String(sub)) })" == "\(expected)")
        }
    }
}
