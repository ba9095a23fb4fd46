import NativeAuthCore
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthTestSupport
import Synchronization
import Testing

/// The core takes typed requests; these tests write them as the documents an app would send, and read the answers the
/// same way (a thin adapter, so the assertions read as before the core spoke types).
extension NativeAuthClient {
    func signIn(_ doc: JSONValue) throws(NativeAuthError) -> JSONValue {
        let r = try signIn(
            SignInRequest(
                username: doc["username"]?.stringValue,
                password: doc["password"]?.stringValue,
                scopes: doc["scopes"]?.arrayValue?.compactMap(\.stringValue),
                claims: nil
            )
        )
        switch r.status {
        case .signedIn(_, let t):
            return ["status": "signed_in", "token": ["access_token": .string(t.value.unsafeExposed)]]
        case .passwordRequired: return ["status": "password_required"]
        case .codeRequired: return ["status": "code_required"]
        default: return ["status": "other"]
        }
    }

    func getAccessToken(_ doc: JSONValue) throws(NativeAuthError) -> JSONValue {
        let r = try accessToken(
            TokenRequest(
                scopes: doc["scopes"]?.arrayValue?.compactMap(\.stringValue),
                forceRefresh: doc["force_refresh"]?.boolValue ?? false,
                claims: nil
            )
        )
        return ["access_token": .string(r.token.value.unsafeExposed), "from_cache": .bool(r.fromCache)]
    }

    func getAccount(_ doc: JSONValue) throws(NativeAuthError) -> JSONValue {
        ["username": .string(try account().username)]
    }

    func signOut(_ doc: JSONValue) throws(NativeAuthError) -> JSONValue {
        ["was_signed_in": .bool(!(try signOut(SignOutRequest(account: nil, all: false, browser: nil))).removed.isEmpty)]
    }
}

func configuration(_ authority: String, _ clientID: String) throws -> ClientConfiguration {
    ClientConfiguration(authority: try Authority(authority), clientID: clientID)
}

func makeClient(_ t: FakeTransport, _ clock: FakeClock) throws -> NativeAuthClient {
    let config = try configuration("https://contoso.ciamlogin.com", "c1")
    t.on(
        "/.well-known/openid-configuration",
        { _, _ in
            json(["token_endpoint": "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/oauth2/v2.0/token"])
        }
    )
    t.on("/oauth2/v2.0/initiate", { _, _ in json(["continuation_token": "CT1"]) })
    t.on("/oauth2/v2.0/challenge", { _, _ in json(["continuation_token": "CT2", "challenge_type": "password"]) })
    return try NativeAuthClient(configuration: config, transport: t, clock: clock)
}

@Suite struct TokenLogicTests {
    @Test func refreshInTriggersEarlyRefreshAndFallsBackToTheCachedToken() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let c = try makeClient(t, clock)
        t.on(
            "/oauth2/v2.0/token",
            { _, f in
                f["grant_type"] == "password"
                    ? json(tokenResponse("api://a/r openid", at: "AT1", rt: "RT1", refreshIn: 600))
                    : json([:], status: 404)
            },
            { _, f in json(["error": "temporarily_unavailable"], status: 503) },
            { _, f in json(["error": "temporarily_unavailable"], status: 503) },
            { _, f in json(tokenResponse("api://a/r", at: "AT2", rt: "RT3"), headers: []) }
        )
        _ = try c.signIn(["username": "u@x.com", "password": "p", "scopes": ["api://a/r"]])
        // before refresh_in: from cache, no request
        #expect(try c.getAccessToken(["scopes": ["api://a/r"]])["access_token"] == "AT1")
        #expect(t.count("/token") == 1)
        clock.advance(601)
        // after refresh_in the library refreshes; the server fails (503, retried once) → the valid token is served
        let fallback = try c.getAccessToken(["scopes": ["api://a/r"]])
        #expect(fallback["access_token"] == "AT1" && fallback["from_cache"] == true)
        #expect(t.count("/token") == 3)
        let fresh = try c.getAccessToken(["scopes": ["api://a/r"]])
        #expect(fresh["access_token"] == "AT2" && fresh["from_cache"] == false)
        // the rotated refresh token was kept
        let last = t.requests.last.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
        #expect(last.contains("refresh_token=RT1"))
    }

    /// MSAL's rule: a token is served from the cache only while more than 5 minutes of it remain, whatever its
    /// lifetime (so a token issued for a minute is refreshed every time).
    @Test func expiryBufferIsFiveMinutesAsInMSAL() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let c = try makeClient(t, clock)
        t.on(
            "/oauth2/v2.0/token",
            { _, _ in json(tokenResponse("api://a/r", at: "LONG", rt: "RT1", expiresIn: 3600)) },
            { _, _ in json(tokenResponse("api://b/r", at: "SHORT", rt: "RT2", expiresIn: 60)) },
            { _, _ in json(tokenResponse("api://b/r", at: "SHORT2", rt: "RT3", expiresIn: 60)) },
            { _, _ in json(tokenResponse("api://a/r", at: "LONG2", rt: "RT4", expiresIn: 3600)) }
        )
        _ = try c.signIn(["username": "u@x.com", "password": "p", "scopes": ["api://a/r"]])
        #expect(try c.getAccessToken(["scopes": ["api://b/r"]])["access_token"] == "SHORT")
        // 60 s of lifetime is inside the 5-minute buffer: never served from the cache
        #expect(try c.getAccessToken(["scopes": ["api://b/r"]])["access_token"] == "SHORT2")
        clock.advance(3600 - 301)
        #expect(try c.getAccessToken(["scopes": ["api://a/r"]])["access_token"] == "LONG")  // 301 s left
        clock.advance(2)
        // within 5 minutes of expiry
        #expect(try c.getAccessToken(["scopes": ["api://a/r"]])["access_token"] == "LONG2")
        #expect(t.count("/token") == 4)
    }

    @Test func overlappingScopesReplaceDisjointOnesStay() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let c = try makeClient(t, clock)
        t.on(
            "/oauth2/v2.0/token",
            { _, _ in json(tokenResponse("api://a/r", at: "A1", rt: "RT1")) },
            { _, _ in json(tokenResponse("api://b/r", at: "B1", rt: "RT2")) },
            { _, _ in json(tokenResponse("api://a/r api://a/w", at: "A2", rt: "RT3")) }
        )
        _ = try c.signIn(["username": "u@x.com", "password": "p", "scopes": ["api://a/r"]])
        _ = try c.getAccessToken(["scopes": ["api://b/r"]])
        _ = try c.getAccessToken(["scopes": ["api://a/w"]])
        #expect(try c.getAccessToken(["scopes": ["api://a/r"]])["access_token"] == "A2")  // A1 was replaced
        // disjoint, kept; case-insensitive
        #expect(try c.getAccessToken(["scopes": ["API://B/R"]])["access_token"] == "B1")
        #expect(t.count("/token") == 3)
    }

    @Test func retryPolicy() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let c = try makeClient(t, clock)
        t.on(
            "/oauth2/v2.0/initiate",
            { _, _ in .failure(HTTPError(.connect, "refused")) },
            { _, _ in json(["error": "x"], status: 502) },
            { _, _ in json(["continuation_token": "CT1"]) }
        )
        // connect failure (nothing sent) → retried once; then 502 → that retry was the only one → server error
        do {
            _ = try c.signIn(["username": "u@x.com"])
            Issue.record("expected failure")
        } catch {
            #expect(error.code == .server)
        }
        #expect(t.count("/initiate") == 2)
        #expect(clock.slept.withLock { $0 } == [0.5])
        #expect(try c.signIn(["username": "u@x.com"])["status"] == "password_required")
    }

    /// A POST that may have reached the server (the connection broke after it was sent, or the answer timed out) is
    /// never sent again: it carries a secret. A 5xx answer is retried once; a 503 with a short Retry-After is waited
    /// out; a long one is `throttled`.
    @Test func secretsAreNotResentAfterTheServerMayHaveSeenThem() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let c = try makeClient(t, clock)
        t.on("/oauth2/v2.0/initiate", { _, _ in .failure(HTTPError(.network, "reset")) })
        #expect(throws: NativeAuthError.self) { try c.signIn(["username": "u@x.com"]) }
        #expect(t.count("/initiate") == 1)
        t.on("/oauth2/v2.0/initiate", { _, _ in .failure(HTTPError(.timeout, "timed out")) })
        #expect(throws: NativeAuthError.self) { try c.signIn(["username": "u@x.com"]) }
        #expect(t.count("/initiate") == 2)
        t.on(
            "/oauth2/v2.0/initiate",
            { _, _ in json(["error": "temporarily_unavailable"], status: 503, headers: [("Retry-After", "3")]) },
            { _, _ in json(["continuation_token": "CT1"]) }
        )
        #expect(try c.signIn(["username": "u@x.com"])["status"] == "password_required")
        #expect(clock.slept.withLock { $0.last } == 3)
        t.on(
            "/oauth2/v2.0/initiate",
            { _, _ in json(["error": "temporarily_unavailable"], status: 429, headers: [("Retry-After", "120")]) }
        )
        do {
            _ = try c.signIn(["username": "u@x.com"])
            Issue.record("expected throttled")
        } catch {
            #expect(error.code == .throttled && error.retryAfterSeconds == 120)
        }
    }

    @Test func refreshTokensGoOnlyToTheAuthoritysOrigin() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let config = try configuration("https://contoso.ciamlogin.com", "c1")
        t.on("/.well-known/openid-configuration", { _, _ in json(["token_endpoint": "https://evil.example/token"]) })
        t.on("/oauth2/v2.0/initiate", { _, _ in json(["continuation_token": "CT1"]) })
        t.on("/oauth2/v2.0/challenge", { _, _ in json(["continuation_token": "CT2", "challenge_type": "password"]) })
        t.on("/oauth2/v2.0/token", { _, _ in json(tokenResponse("api://a/r", rt: "RT1")) })
        let c = try NativeAuthClient(configuration: config, transport: t, clock: clock)
        _ = try c.signIn(["username": "u@x.com", "password": "p"])
        #expect(throws: NativeAuthError.self) { try c.getAccessToken(["scopes": ["api://b/r"]]) }
        #expect(!t.requests.contains { $0.url.contains("evil.example") })
    }

    @Test func aRefreshThatLandsAfterSignOutLeavesNothingBehind() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let c = try makeClient(t, clock)
        t.on("/oauth2/v2.0/token", { _, _ in json(tokenResponse("api://a/r", at: "A1", rt: "RT1")) })
        _ = try c.signIn(["username": "u@x.com", "password": "p", "scopes": ["api://a/r"]])
        t.on(
            "/oauth2/v2.0/token",
            { [weak c] _, _ in  // weak: the client holds this transport (a strong capture leaks both)
                _ = try? c?.signOut([:])  // the user signs out while the refresh is on the wire
                return json(tokenResponse("api://b/r", at: "B1", rt: "RT2"))
            }
        )
        // the caller still gets its answer
        #expect(try c.getAccessToken(["scopes": ["api://b/r"]])["access_token"] == "B1")
        #expect(throws: NativeAuthError.self) { try c.getAccount([:]) }
        #expect((try? c.getAccessToken(["scopes": ["api://b/r"]])) == nil)  // and nothing was cached
    }

    @Test func malformedServerAnswersAreErrorsNotCrashes() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let c = try makeClient(t, clock)
        let bad: [JSONValue] = [
            ["token_type": "Bearer"], ["access_token": "x", "expires_in": 0, "client_info": .string(clientInfo)],
            ["access_token": "x", "expires_in": 10, "client_info": "!!!"], ["access_token": "x", "expires_in": 10],
            ["access_token": "x", "expires_in": 10, "client_info": .string(clientInfo), "id_token": "not.a.jwt"],
            ["access_token": "x", "expires_in": 10, "token_type": "pop", "client_info": .string(clientInfo)],
        ]
        for body in bad {
            t.on("/oauth2/v2.0/token", { _, _ in json(body) })
            do {
                _ = try c.signIn(["username": "u@x.com", "password": "p"])
                Issue.record("accepted \(body)")
            } catch {
                #expect(error.code == .server)
            }
        }
        t.on("/oauth2/v2.0/initiate", { _, _ in .success(HTTPResponse(status: 200, body: Array("not json".utf8))) })
        #expect(throws: NativeAuthError.self) { try c.signIn(["username": "u@x.com"]) }
    }
}
