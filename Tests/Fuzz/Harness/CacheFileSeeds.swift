// Seeds of the "cachefile" target: the documents of Tests/NativeAuthCacheTests/MSALCacheDocumentTests.swift, the
// scanner's edges, and real cache files kept in Tests/Fuzz/corpus/cachefile as `recorded-*` (one written by the
// library through a sign-in against the emulator with a file cache, one by MSAL for Python 1.39; see the README),
// which `make fuzz-seeds` carries over as they are.

/// The documents of the cache's unit tests and the scanner's edges.
func cacheFileSeeds(_ s: SeedSet) {
    let client = cacheFuzzClientID
    let docs: [(String, String)] = [
        ("empty-object", "{}"), ("empty-section", #"{"AccessToken":{}}"#),
        (
            "other-members",
            #"{"version":1,"flag":true,"none":null,"list":[1,-2.5e3,"x",{"a":[]}],"#
                + #""AppMetadata":{"k":{"client_id":"c1"}}}"#
        ),
        ("escapes", #"{"Other":{"k\u00e9y":{"v":"\ud83d\ude00 \" \\ \/ \b\f\n\r\t"},"k2":[1,2],"k3":"plain"}}"#),
        (
            "fields",
            #"""
            {"RefreshToken": {"k": {"secret": "R\u0054-1", "home_account_id": "u.t",
             "environment": "127.0.0.1",
             "client_id": "\#(client)", "target": "a b", "last_modification_time": "1700000000", "key_id": "x"}},
             "AccessToken": {"k2": {"secret": "AT", "expires_on": 1700003600, "cached_at": "1700000000.0",
             "environment": "other.host", "client_id": "\#(client)"}}}
            """#
        ),
        ("big-numbers", #"{"n":123456789012345678901234567890,"r":1e400,"AccessToken":{"k":{"expires_on":1e999}}}"#),
        ("lone-surrogate", #"{"Account":{"\ud800":{"username":"\udc00x"}},"\u0000":1}"#),
        ("duplicates", #"{"A":{"k":1,"k":{"secret":"s"}},"A":{"j":2},"x":1,"x":{"y":1}}"#),
        ("section-then-member", #"{"A":{"k":{}},"A":1}"#),
        ("deep", String(repeating: "[", count: 61) + String(repeating: "]", count: 61)),
        ("nul-after-number", "{\"n\":12345678012\u{0}}"),  // jansson reads it; JSON, Python and the scanner do not
        ("not-object", "[1]"), ("trailing", "{} x"), ("truncated", #"{"AccessToken":{"k":{"secret":"#),
    ]
    for (name, doc) in docs { s.add("cachefile", name, doc) }
    s.add("cachefile", "invalid-utf8", [0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d])
    let dir = "Tests/Fuzz/corpus/cachefile"
    for path in Files.list(dir) {
        let name = String(path.dropFirst(dir.count + 1))
        if name.hasPrefix("recorded-"), let bytes = Files.read(path) { s.add("cachefile", name, bytes) }
    }
}
