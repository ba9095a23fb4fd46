import NativeAuthCore
import NativeAuthJSON
import Testing

@testable import NativeAuthCache

/// The cache file's scanner: JSON's grammar exactly (what Python's json module accepts, it accepts; what it refuses,
/// it refuses — except strings that are not UTF-8, read leniently on purpose), escapes decoded where fields are read,
/// everything else written back byte for byte.
@Suite struct MSALCacheDocumentTests {
    let owner = EntryOwner(environment: "contoso.ciamlogin.com", clientID: "c1")

    func parse(_ text: String) -> MSALCacheFormat.Document? {
        Array(text.utf8).withUnsafeBytes { MSALCacheFormat.Document(parsing: $0, owner: owner) }
    }

    @Test func validDocumentsRoundTripByteForByte() throws {
        let docs = [
            "{}",
            #"{"AccessToken":{}}"#,
            #"{"version":1,"flag":true,"none":null,"list":[1,-2.5e3,"x",{"a":[]}],"#
                + #""AppMetadata":{"k":{"client_id":"c1"}}}"#,
            #"{"Other":{"k\u00e9y":{"v":"\ud83d\ude00 \" \\ \/ \b\f\n\r\t"},"k2":[1,2],"k3":"plain"}}"#,
        ]
        for text in docs {
            let cache = try #require(parse(text), "\(text)")
            let back = String(decoding: cache.serialized(), as: UTF8.self)
            #expect(try JSONValue.parse(back) == JSONValue.parse(text), "\(text)")
        }
    }

    @Test func fieldsAreReadWithEscapesDecoded() throws {
        let text = #"""
            {"RefreshToken": {"k": {"secret": "R\u0054-1", "home_account_id": "u.t",
             "environment": "Contoso.CIAMlogin.com",
             "client_id": "c1", "target": "a b", "last_modification_time": "1700000000", "key_id": "x"}},
             "AccessToken": {"k2": {"secret": "AT", "expires_on": 1700003600, "cached_at": "1700000000.0",
             "environment": "other.host", "client_id": "c1"}}}
            """#
        let cache = try #require(parse(text))
        let rt = try #require(cache.sections["RefreshToken"]?.first?.fields)
        #expect(rt.secret.map { cache.secret($0) } == Secret("RT-1"))
        #expect(rt.home == "u.t" && rt.target == "a b" && rt.lastModified == 1_700_000_000)
        #expect(rt.environmentMatches && rt.clientMatches && rt.bound)
        let at = try #require(cache.sections["AccessToken"]?.first?.fields)
        #expect(at.expiresOn == 1_700_003_600 && at.cachedAt == 1_700_000_000)
        #expect(!at.environmentMatches && at.clientMatches)
    }

    @Test func invalidDocumentsAreRefused() {
        let bad = [
            "", "[]", "\"x\"", "1", "{", "{\"a\":}", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{\"a\":01}", "{\"a\":1.}",
            "{\"a\":-}", "{\"a\":1e}", "{\"a\":tru}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\u{01}\"}",
            "{\"a\":1} x", "{\"a\":[1,]}", "{\"a\":{\"b\":1}", "{\"a\":\"unterminated}",
            String(repeating: "{\"a\":", count: 300) + "1" + String(repeating: "}", count: 300),
        ]
        for text in bad { #expect(parse(text) == nil, "\(text.prefix(40))") }
    }

    /// A top-level name given twice is the last one's, whether either is a section or not, as Python's json module
    /// (MSAL for Python) reads it; written back, it is there once. (Before, a section followed by a non-object of the
    /// same name was kept as both and written back section last: its tokens served, and brought back to life.)
    @Test func aTopLevelNameGivenTwiceIsTheLastOnes() throws {
        let dropped = try #require(parse(#"{"AccessToken":{"k":{"secret":"AT","client_id":"c1"}},"AccessToken":null}"#))
        #expect(dropped.sections["AccessToken"] == nil)
        #expect(dropped.other.map(\.key) == ["AccessToken"])
        #expect(try JSONValue.parse(dropped.serialized()) == JSONValue.parse(#"{"AccessToken":null}"#))
        let kept = try #require(parse(#"{"A":1,"A":{"k":{}}}"#))
        #expect(kept.other.isEmpty && kept.sections["A"]?.count == 1)
        #expect(String(decoding: kept.serialized(), as: UTF8.self) == #"{"A":{"k":{}}}"#)
    }

    /// Other members keep the order of their last places; a file of many top-level members reads in one pass (each
    /// member used to be looked for in a list of all before it: 40,000 of them took minutes, 300,000 would take hours).
    @Test(.timeLimit(.minutes(1))) func manyTopLevelMembersReadInLinearTime() throws {
        let order = try #require(parse(#"{"a":1,"b":2,"a":3,"c":{},"b":{},"d":4}"#))
        #expect(order.other.map(\.key) == ["a", "d"] && order.sections.keys.sorted() == ["b", "c"])
        let count = 300_000
        var text = "{"
        for k in 0..<count { text += k == 0 ? #""m\#(k)":1"# : #","m\#(k)":1"# }
        let many = try #require(parse(text + "}"))
        #expect(many.other.count == count && many.other.last?.key == "m\(count - 1)")
    }

    /// The scanner's depth limit is the library's one (`JSONDepth.limit`), counted the same way: a file is read
    /// exactly when `JSONDepth` says it nests within the limit, wherever the deep value is.
    @Test func nestingIsLimitedAsJSONDepthLimitsIt() throws {
        func nested(_ levels: Int) -> String {
            String(repeating: "[", count: levels) + "1" + String(repeating: "]", count: levels)
        }
        let limit = JSONDepth.limit
        for levels in (limit - 3)...(limit + 2) {
            let places = [
                #"{"version":\#(nested(levels - 1))}"#,  // a top-level member
                #"{"Other":{"key":\#(nested(levels - 2))}}"#,  // an entry that is not an object
                #"{"AccessToken":{"key":{"target":\#(nested(levels - 3))}}}"#,  // a field the cache reads
                #"{"AccessToken":{"key":{"other":\#(nested(levels - 3))}}}"#,  // a field it does not
            ]
            for text in places {
                let fits = JSONDepth.shape(Array(text.utf8)) == .fits
                #expect(fits == (levels <= limit))
                #expect((parse(text) != nil) == fits, "\(levels) levels: \(text.prefix(40))")
            }
        }
    }

    @Test func everyTruncationOfAFileIsRefusedOrReadNeverACrash() throws {
        let entry = makeEntry(1, scopes: [["api://x/Read"], ["api://y/Write"]])
        var cache = MSALCacheFormat.Document()
        let format = MSALCacheFormat(environment: env, clientID: client)
        format.apply([entry.account.homeAccountID: entry], ids: [entry.account.homeAccountID], to: &cache, now: 1)
        let bytes = cache.serialized()
        let full = try #require(bytes.withUnsafeBytes { MSALCacheFormat.Document(parsing: $0, owner: format.owner) })
        #expect(format.accounts(in: full).count == 1)
        for cut in 0..<bytes.count {
            let partial = Array(bytes[0..<cut])
            #expect(partial.withUnsafeBytes { MSALCacheFormat.Document(parsing: $0, owner: format.owner) } == nil)
        }
        // Flipped bytes: refused, or read without trapping.
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var b = bytes
            b[Int.random(in: 0..<b.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            if let c = b.withUnsafeBytes({ MSALCacheFormat.Document(parsing: $0, owner: format.owner) }) {
                _ = format.accounts(in: c)
                _ = c.serialized()
            }
        }
    }
}
