import NativeAuthCore
import NativeAuthJSON
import NativeAuthTestSupport
import Synchronization
import Testing

// The driver of the silent-token path (`SilentTokenDriver`) with the resources it holds: a store that records when
// its refresh lock is taken and released and when a write is reserved and given back, behind a fake server. Whatever
// the refresh ends with, the lock and the reservation are given back, and the gate is free for the next call.

/// A memory store that records its lock, reservation and write calls, and can refuse the lock or the reservation.
private final class RecordingStore: TokenStore, @unchecked Sendable {  // `state` is a Mutex
    struct State {
        var events: [String] = []
        var refuseLock: NativeAuthError? = nil
        var refuseReserve: NativeAuthError? = nil
    }
    let state = Mutex(State())
    private let memory = MemoryTokenStore()

    var events: [String] { state.withLock { $0.events } }
    private func record(_ e: String) { state.withLock { $0.events.append(e) } }

    func load() throws(NativeAuthError) -> [String: AccountEntry] { [:] }
    var changeCounter: UInt64 { 0 }
    func modify(
        current: [String: AccountEntry],
        _ change: (inout [String: AccountEntry]) -> Void
    ) -> StoreOutcome {
        record("modify")
        return memory.modify(current: current, change)
    }
    func acquireRefreshLock(deadline: Double, isCancelled: () -> Bool) throws(NativeAuthError) -> any RefreshLockHold {
        if let refused = state.withLock({ $0.refuseLock }) { throw refused }
        record("lock")
        return Hold { self.record("unlock") }
    }
    func reserveWrite() throws(NativeAuthError) {
        if let refused = state.withLock({ $0.refuseReserve }) { throw refused }
        record("reserve")
    }
    func releaseReservedWrite() { record("release") }
}

/// A hold that records its release (once, however often it is released).
private final class Hold: RefreshLockHold, @unchecked Sendable {  // `released` is a Mutex
    private let released = Mutex(false)
    private let onRelease: @Sendable () -> Void
    init(_ onRelease: @escaping @Sendable () -> Void) { self.onRelease = onRelease }
    func release() {
        guard
            !released.withLock({ r in
                defer { r = true }
                return r
            })
        else { return }
        onRelease()
    }
}

private func client(_ t: FakeTransport, _ clock: FakeClock, _ store: RecordingStore) throws -> NativeAuthClient {
    let config = try configuration("https://contoso.ciamlogin.com", "c1")
    t.on("/oauth2/v2.0/initiate", { _, _ in json(["continuation_token": "CT1"]) })
    t.on("/oauth2/v2.0/challenge", { _, _ in json(["continuation_token": "CT2", "challenge_type": "password"]) })
    return try NativeAuthClient(configuration: config, transport: t, clock: clock, store: store)
}

/// A client signed in (AT1/RT1 for api://a/r) whose next token request (the refresh) is answered by `refresh`.
private func signedIn(
    refresh: @escaping FakeTransport.Responder
) throws -> (FakeTransport, RecordingStore, NativeAuthClient) {
    let (t, store) = (FakeTransport(), RecordingStore())
    let c = try client(t, FakeClock(), store)
    t.on("/oauth2/v2.0/token", { _, _ in json(tokenResponse("api://a/r openid", at: "AT1", rt: "RT1")) }, refresh)
    _ = try c.signIn(["username": "u@x.com", "password": "p", "scopes": ["api://a/r"]])
    return (t, store, c)
}

/// The events of the refresh alone (the sign-in's own write left out).
private func refreshEvents(_ store: RecordingStore, after count: Int) -> [String] {
    Array(store.events.dropFirst(count))
}

@Suite("SilentTokenDriver: the lock, the reservation and the gate are always given back")
struct SilentTokenDriverTests {
    @Test("a refresh: lock, reserve, write, release, unlock — in that order; a hit: none of them")
    func refresh() throws {
        let (t, store, c) = try signedIn(refresh: { _, _ in json(tokenResponse("api://b/r", at: "AT2", rt: "RT2")) })
        let before = store.events.count
        #expect(try c.getAccessToken(["scopes": ["api://b/r"]])["access_token"] == "AT2")
        #expect(refreshEvents(store, after: before) == ["lock", "reserve", "modify", "release", "unlock"])
        // A fresh token is a direct lookup: no machine, no lock, no request.
        let hits = store.events.count
        #expect(try c.getAccessToken(["scopes": ["api://a/r"]])["from_cache"] == true)
        #expect(store.events.count == hits && t.count("/token") == 2)
    }

    @Test("a dead refresh token: dropped under the lock (compare-then-delete), and everything given back")
    func deadToken() throws {
        let (t, store, c) = try signedIn(refresh: { _, _ in
            json(["error": "invalid_grant", "suberror": "bad_token"], status: 400)
        })
        let before = store.events.count
        #expect(throws: NativeAuthError.self) { try c.getAccessToken(["scopes": ["api://b/r"]]) }
        #expect(refreshEvents(store, after: before) == ["lock", "reserve", "modify", "release", "unlock"])
        // The token was dropped: the next call needs no request to know.
        #expect(throws: NativeAuthError.self) { try c.getAccessToken(["scopes": ["api://b/r"]]) }
        #expect(t.count("/token") == 2)
    }

    @Test("no room for the write: nothing is sent, the lock is given back, the next call refreshes")
    func reserveRefused() throws {
        let (t, store, c) = try signedIn(refresh: { _, _ in json(tokenResponse("api://b/r", at: "AT2", rt: "RT2")) })
        store.state.withLock { $0.refuseReserve = NativeAuthError(.cacheWriteFailed, "canned: the disk is full") }
        let before = store.events.count
        do {
            _ = try c.getAccessToken(["scopes": ["api://b/r"]])
            Issue.record("a refresh without room for its write was answered")
        } catch {
            #expect(error.code == .cacheWriteFailed)
        }
        #expect(t.count("/token") == 1)
        #expect(refreshEvents(store, after: before) == ["lock", "unlock"])
        store.state.withLock { $0.refuseReserve = nil }
        #expect(try c.getAccessToken(["scopes": ["api://b/r"]])["access_token"] == "AT2")
    }

    @Test("the lock refused (another process's refresh outlasted the wait): nothing is sent, the gate is free")
    func lockRefused() throws {
        let (t, store, c) = try signedIn(refresh: { _, _ in json(tokenResponse("api://b/r", at: "AT2", rt: "RT2")) })
        store.state.withLock { $0.refuseLock = NativeAuthError(.timeout, "canned: the lock was held") }
        do {
            _ = try c.getAccessToken(["scopes": ["api://b/r"]])
            Issue.record("a refresh without the lock was answered")
        } catch {
            #expect(error.code == .timeout)
        }
        #expect(t.count("/token") == 1)
        store.state.withLock { $0.refuseLock = nil }
        #expect(try c.getAccessToken(["scopes": ["api://b/r"]])["access_token"] == "AT2")
    }
}
