import NativeAuthCore
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthTestSupport
import Synchronization
import Testing

@testable import NativeAuthCABI

/// The cached-token path through the C ABI (per-thread request memo, rendered answers, cache generations), driven
/// with a scripted server and a clock the test moves.
private final class Harness: @unchecked Sendable {
    let transport = FakeTransport()
    let clock = FakeClock()
    let handle: OpaquePointer?

    init(tokenLifetime: Int = 3600, refreshIn: Int? = nil) throws {
        let config = ClientConfiguration(authority: try Authority("https://contoso.ciamlogin.com"), clientID: "c1")
        transport.on(
            "/.well-known/openid-configuration",
            { _, _ in
                json(["token_endpoint": "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/oauth2/v2.0/token"])
            }
        )
        transport.on("/oauth2/v2.0/initiate", { _, _ in json(["continuation_token": "CT1"]) })
        transport.on(
            "/oauth2/v2.0/challenge",
            { _, _ in json(["continuation_token": "CT2", "challenge_type": "password"]) }
        )
        let counter = Counter()
        transport.on(
            "/oauth2/v2.0/token",
            { _, form in
                let n = counter.next()
                let scope = (form["scope"] ?? "").split(separator: " ").filter { !$0.hasPrefix("o") && $0 != "profile" }
                return json(
                    tokenResponse(
                        scope.joined(separator: " "),
                        at: "AT\(n)",
                        rt: "RT\(n)",
                        expiresIn: tokenLifetime,
                        refreshIn: refreshIn
                    )
                )
            }
        )
        let client = try NativeAuthClient(
            configuration: config,
            transport: transport,
            clock: clock
        )
        handle = handles.insert(ClientBox(client))
    }

    deinit { na_client_free(handle) }

    func call(_ op: (OpaquePointer?, UnsafePointer<CChar>?, OutString?) -> Int32, _ request: String) -> (Int32, String)
    {
        var out: UnsafeMutablePointer<CChar>? = nil
        let rc = op(handle, request, &out)
        defer { na_string_free(out) }
        return (rc, out.map { String(cString: $0) } ?? "")
    }

    func token(_ request: String = #"{"scopes":["api://a/read"]}"#) -> JSONValue {
        (try? JSONValue.parse(call(na_get_access_token, request).1)) ?? .null
    }

    var tokenRequests: Int { transport.count("/oauth2/v2.0/token") }
}

private final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock { v -> Int in
            v += 1
            return v
        }
    }
}

@Suite struct CachedTokenPathTests {
    @Test func aRepeatedRequestGetsTheSameBytesAsTheCacheRendersThem() throws {
        let h = try Harness()
        #expect(h.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#).0 == 0)
        let first = h.call(na_get_access_token, #"{"scopes":["api://a/read"]}"#)  // the cache's rendered answer
        let second = h.call(na_get_access_token, #"{"scopes":["api://a/read"]}"#)  // the thread's memo
        #expect(first.0 == 0 && second.0 == 0)
        #expect(first.1 == second.1)
        // …and both are what jansson writes for the token document.
        let doc = try JSONValue.parse(first.1)
        #expect(doc.serialized() == first.1)
        #expect(doc["access_token"] == "AT1" && doc["from_cache"] == true && doc["v"] == 1)
        #expect(h.tokenRequests == 1)
    }

    @Test func aNewTokenForTheScopesReplacesTheRememberedAnswer() throws {
        let h = try Harness()
        _ = h.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        #expect(h.token()["access_token"] == "AT1")
        #expect(h.token()["access_token"] == "AT1")
        #expect(h.token(#"{"scopes":["api://a/read"],"force_refresh":true}"#)["access_token"] == "AT2")
        #expect(h.token()["access_token"] == "AT2")  // the cache changed: the memo's AT1 is not served again
    }

    @Test func signOutIsSeenAtOnce() throws {
        let h = try Harness()
        _ = h.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        #expect(h.token()["access_token"] == "AT1")
        #expect(h.token()["access_token"] == "AT1")
        #expect(h.call(na_sign_out, "{}").0 == 0)
        #expect(h.token()["error"]?["code"] == "no_account")
    }

    @Test func aTokenPastItsBufferIsRefreshedNotReplayed() throws {
        let h = try Harness(tokenLifetime: 3600)
        _ = h.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        #expect(h.token()["access_token"] == "AT1")
        h.clock.advance(3600 - 301)
        #expect(h.token()["access_token"] == "AT1")  // more than 5 minutes left
        h.clock.advance(2)
        #expect(h.token()["access_token"] == "AT2")  // within 5 minutes of expiry: refreshed
        #expect(h.tokenRequests == 2)
    }

    @Test func refreshInIsHonouredOnTheMemoPath() throws {
        let h = try Harness(refreshIn: 600)
        _ = h.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        #expect(h.token()["access_token"] == "AT1")
        #expect(h.token()["access_token"] == "AT1")
        h.clock.advance(601)
        #expect(h.token()["access_token"] == "AT2")
    }

    @Test func twoClientsWithTheSameRequestTextKeepTheirOwnAnswers() throws {
        let a = try Harness()
        let b = try Harness()
        _ = a.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        _ = b.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        _ = b.token(#"{"scopes":["api://a/read"],"force_refresh":true}"#)
        for _ in 0..<3 {
            #expect(a.token()["access_token"] == "AT1")
            #expect(b.token()["access_token"] == "AT2")
        }
    }

    @Test func longAndInvalidRequestsTakeTheOrdinaryPath() throws {
        let h = try Harness()
        _ = h.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        let padding = String(repeating: " ", count: 600)
        #expect(h.token(#"{"scopes":["api://a/read"]}"# + padding)["access_token"] == "AT1")
        for _ in 0..<2 {  // an invalid request is refused every time, never remembered
            #expect(h.token(#"{"scopes":"api://a/read"}"#)["error"]?["field"] == "scopes")
        }
        #expect(h.call(na_get_access_token, "{\"scopes\":[\"api://a/read\"]").0 == NAStatus.invalidArgument.rawValue)
    }

    @Test func freedClientsAreNotServedFromTheMemo() throws {
        var h: Harness? = try Harness()
        _ = h?.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        #expect(h?.token()["access_token"] == "AT1")
        let handle = h?.handle
        h = nil
        var out: UnsafeMutablePointer<CChar>? = nil
        let rc = na_get_access_token(handle, #"{"scopes":["api://a/read"]}"#, &out)
        defer { na_string_free(out) }
        #expect(rc == NAStatus.invalidArgument.rawValue)
        #expect(out.map { String(cString: $0) }?.contains("invalid_handle") == true)
    }

    @Test func threadsSeeTheSameAnswerAndTheSameSignOut() async throws {
        let h = try Harness()
        _ = h.call(na_sign_in, #"{"username":"u@x.com","password":"p","scopes":["api://a/read"]}"#)
        let tokens = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<200).map { _ in h.token()["access_token"]?.stringValue ?? "?" } }
            }
            return await group.reduce(into: Set<String>()) { $0.formUnion($1) }
        }
        #expect(tokens == ["AT1"])
        _ = h.call(na_sign_out, "{}")
        let after = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask { (0..<20).map { _ in h.token()["error"]?["code"]?.stringValue ?? "?" } }
            }
            return await group.reduce(into: Set<String>()) { $0.formUnion($1) }
        }
        #expect(after == ["no_account"])
    }
}
