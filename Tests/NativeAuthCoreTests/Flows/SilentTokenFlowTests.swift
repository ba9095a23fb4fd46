import NativeAuthHTTP
import Testing

@testable import NativeAuthCore

// Table-driven tests of the silent-token path (`SilentTokenFlow`) as the state machine it is: canned events in (what
// the cache, the gate, the store's lock and the server answered), the trace of every effect out. No sockets, no files,
// no threads, no driver. Each script is played on one value: the part between `runInBackground` and `endBackground`
// runs on a copy on the refresh's thread in the driver; the value here plays both in turn, as the copies do.

private typealias E = NativeAuthError

/// One step: the event, and the trace of the effect the machine must answer with.
private struct S: CustomStringConvertible {
    var event: SilentEvent
    var expect: String
    var at: Double = 1_000
    var description: String { expect }
}

private func s(_ event: SilentEvent, _ expect: String, at: Double = 1_000) -> S {
    S(event: event, expect: expect, at: at)
}

/// Plays `steps` on `flow`; records an issue at the first effect that differs. Answers the last effect.
@discardableResult
private func play(
    _ flow: inout SilentTokenFlow,
    _ steps: [S],
    sourceLocation: SourceLocation = #_sourceLocation
) -> SilentEffect? {
    var last: SilentEffect? = nil
    for (i, step) in steps.enumerated() {
        let effect = flow.on(step.event, at: step.at)
        last = effect
        if effect.trace != step.expect {
            Issue.record("step \(i): expected \(step.expect), got \(effect.trace)", sourceLocation: sourceLocation)
            return nil
        }
    }
    return last
}

// Canned values.
private let rt1 = RefreshToken(Secret("rt-1"))
private let rt2 = RefreshToken(Secret("rt-2"))
private func token(
    _ value: String,
    scopes: [String] = ["api"],
    cachedAt: Double = 900,
    refreshOn: Double? = nil
)
    -> AccessToken
{
    AccessToken(value: Secret(value), scopes: scopes, expiresOn: 5_000, refreshOn: refreshOn, cachedAt: cachedAt)
}
private let user = Account(
    homeAccountID: "uid.utid",
    username: "ann@contoso.com",
    tenantID: "utid",
    environment: "contoso.ciamlogin.com",
    idToken: nil,
    claims: .object([:])
)
private func request(
    fallback: AccessToken? = nil,
    replaced: AccessToken? = nil,
    force: Bool = false,
    claims: ClaimsRequest? = nil,
    isEntra: Bool = true
) -> SilentTokenFlow.Request {
    SilentTokenFlow.Request(
        account: "uid.utid",
        scopes: ["api"],
        key: ScopeKey(["api"]),
        claims: claims,
        forceRefresh: force,
        fallback: fallback,
        replaced: replaced,
        began: 1_000,
        isEntra: isEntra
    )
}
private func serverError(_ code: E.Code, _ error: String? = nil, suberror: String? = nil, status: Int? = 400) -> E {
    E(code, "canned", server: ServerErrorDetails(error: error, suberror: suberror, httpStatus: status))
}
private let deadToken = serverError(.refreshTokenExpired, "invalid_grant", suberror: "bad_token")
private let refreshed = TokenResponse(
    accessToken: Secret("new"),
    expiresIn: 3600,
    extExpiresIn: nil,
    refreshIn: nil,
    grantedScopes: nil,
    refreshToken: rt2,
    idToken: nil,
    clientInfo: nil
)

// Script pieces.
private let toGate: [S] = [
    s(.start, "readEntry"),
    s(.entry((rt1, user)), "runInBackground"),
]
private let leadAndLock: [S] = [
    s(.gate(.success(.lead)), "lockStore"),
    s(.locked(.success(())), "reread"),
]
private let redeem: [S] = [
    s(.refreshToken((rt1, 1)), "send tokenEndpoint"),
    s(.answer(.success(.endpoint("https://login/token"))), "reserveWrite"),
    s(.reserved(.success(())), "commitSend"),
    s(.committed(.success(())), "send refresh"),
]
private let refreshedAndStored: [S] = [
    s(.answer(.success(.tokens(refreshed))), "store"),
    s(.stored(.success(token("new", cachedAt: 1_000))), "unlockStore"),
    s(.unlocked, "leaveGate refreshed"),
    s(.leftGate, "endBackground refreshed"),
]
private func ended(_ code: E.Code) -> [S] {
    [s(.unlocked, "leaveGate \(code.rawValue)"), s(.leftGate, "endBackground \(code.rawValue)")]
}

/// A flow played through `toGate`: the copy the refresh's thread runs on (`.background` onwards).
private func started(
    _ r: SilentTokenFlow.Request,
    sourceLocation: SourceLocation = #_sourceLocation
)
    -> SilentTokenFlow
{
    var flow = SilentTokenFlow(r)
    play(&flow, toGate, sourceLocation: sourceLocation)
    return flow
}

@Suite("SilentTokenFlow: the silent-token path's rules, as traces")
struct SilentTokenFlowTests {
    @Test("a miss: the entry, the gate, the lock, the re-read, the endpoint, reserve, commit, refresh, store, release")
    func refreshes() {
        var flow = started(request())
        var caller = flow  // the calling thread's copy, which waits for the refresh's thread
        play(&flow, [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(&flow, redeem + refreshedAndStored)
        let last = play(&caller, [s(.backgroundEnded(.success((token("new"), false))), "finish refreshed")])
        guard case .finish(let result, _)? = last else { return }
        #expect(result.token.value == Secret("new") && !result.fromCache)
    }

    @Test(
        "the refresh's thread: everything from the gate to its release runs between runInBackground and endBackground"
    )
    func backgroundSection() {
        var caller = SilentTokenFlow(request())
        play(&caller, toGate)
        var thread = caller
        play(&thread, [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(&thread, redeem + refreshedAndStored)
        // The caller's copy waits for the thread: the refresh's own events are no answer for it.
        var stray = caller
        play(&stray, [s(.gate(.success(.lead)), "fail internal")])
        play(&caller, [s(.backgroundEnded(.success((token("new"), false))), "finish refreshed")])
    }

    @Test("an early refresh (past refresh_in) that fails serves the cached token")
    func earlyRefreshFallsBack() {
        let early = token("early", refreshOn: 950)
        var flow = started(request(fallback: early, replaced: early))
        var caller = flow  // the calling thread's copy, which waits for the refresh's thread
        play(&flow, [s(.background, "joinGate")] + leadAndLock)
        play(&flow, [s(.found(early), "readRefreshToken")] + redeem)
        play(&flow, [s(.answer(.failure(serverError(.server, status: 500))), "unlockStore")] + ended(.server))
        let last = play(&caller, [s(.backgroundEnded(.failure(serverError(.server, status: 500))), "finish fallback")])
        guard case .finish(let result, _)? = last else { return }
        #expect(result.token.value == Secret("early") && result.fromCache)
    }

    @Test(
        "a failed early refresh that was cancelled or reentrant is not hidden by the cached token",
        arguments: ["cancelled", "reentrant_call"]
    )
    func earlyRefreshCancelled(name: String) {
        let code = NativeAuthError.Code(rawValue: name)
        let early = token("early", refreshOn: 950)
        var flow = SilentTokenFlow(request(fallback: early, replaced: early))
        play(&flow, toGate + [s(.backgroundEnded(.failure(E(code, "canned"))), "fail \(code.rawValue)")])
    }

    @Test("declined scopes fail the call (or, on an early refresh, serve the cached token)")
    func declinedScopes() {
        var flow = SilentTokenFlow(request())
        let narrower = token("new", scopes: ["other"])
        play(&flow, toGate + [s(.backgroundEnded(.success((narrower, false))), "fail declined_scopes")])
        let early = token("early", refreshOn: 950)
        var earlyFlow = SilentTokenFlow(request(fallback: early))
        play(&earlyFlow, toGate + [s(.backgroundEnded(.success((narrower, false))), "finish fallback")])
    }

    @Test("a server that gives no verdict: a token in its extended lifetime answers; without one, the error")
    func extendedLifetime() {
        var flow = SilentTokenFlow(request())
        play(&flow, toGate + [s(.backgroundEnded(.failure(E(.network, "canned"))), "extendedLookup")])
        play(&flow, [s(.extended(token("old")), "finish extended")])
        var none = SilentTokenFlow(request())
        play(&none, toGate + [s(.backgroundEnded(.failure(E(.timeout, "canned"))), "extendedLookup")])
        play(&none, [s(.extended(nil), "fail timeout")])
        // A verdict (the refresh token refused) and a forced refresh never look.
        var verdict = SilentTokenFlow(request())
        play(&verdict, toGate + [s(.backgroundEnded(.failure(deadToken)), "fail refresh_token_expired")])
        var forced = SilentTokenFlow(request(force: true))
        play(&forced, toGate + [s(.backgroundEnded(.failure(E(.network, "canned"))), "fail network")])
    }

    @Test("single-flight: a waiter shares the leader's result, or a token cached meanwhile; its errors end the wait")
    func singleFlight() {
        var shared = started(request())
        var caller = shared  // the calling thread's copy, which waits for the refresh's thread
        play(&shared, [s(.background, "joinGate sharing")])
        play(&shared, [s(.gate(.success(.shared(.success((token("new"), false))))), "endBackground refreshed")])
        play(&caller, [s(.backgroundEnded(.success((token("new"), false))), "finish refreshed")])
        var hit = SilentTokenFlow(request())
        play(
            &hit,
            toGate + [s(.background, "joinGate sharing"), s(.gate(.success(.hit(token("t")))), "endBackground cached")]
        )
        var failed = SilentTokenFlow(request())
        play(&failed, toGate + [s(.background, "joinGate sharing")])
        play(&failed, [s(.gate(.success(.shared(.failure(deadToken)))), "endBackground refresh_token_expired")])
        var reentrant = started(request(fallback: token("early", refreshOn: 950)))
        var reentrantCaller = reentrant
        play(
            &reentrant,
            [s(.background, "joinGate"), s(.gate(.failure(RefreshGate.reentrant())), "endBackground reentrant_call")]
        )
        play(&reentrantCaller, [s(.backgroundEnded(.failure(RefreshGate.reentrant())), "fail reentrant_call")])
    }

    @Test("the store's lock: not taken (timeout, reentrant) leaves the gate with that error")
    func lockRefused() {
        var flow = SilentTokenFlow(request())
        play(&flow, toGate + [s(.background, "joinGate sharing"), s(.gate(.success(.lead)), "lockStore")])
        play(
            &flow,
            [s(.locked(.failure(E(.timeout, "canned"))), "leaveGate timeout"), s(.leftGate, "endBackground timeout")]
        )
    }

    @Test("the re-read under the lock: a token another process stored meanwhile answers, without a request")
    func rereadServes() {
        var flow = SilentTokenFlow(request())
        play(&flow, toGate + [s(.background, "joinGate sharing")] + leadAndLock)
        play(
            &flow,
            [
                s(.found(token("theirs")), "unlockStore"), s(.unlocked, "leaveGate cached"),
                s(.leftGate, "endBackground cached"),
            ]
        )
        // One that itself wants refreshing (past its refresh_in) does not.
        var early = SilentTokenFlow(request())
        play(&early, toGate + [s(.background, "joinGate sharing")] + leadAndLock)
        play(&early, [s(.found(token("theirs", refreshOn: 950)), "readRefreshToken")])
    }

    @Test("a forced refresh takes a token stored after the call began that differs from the one it replaces")
    func forcedRefresh() {
        let mine = token("mine", cachedAt: 900)
        func reread(_ found: AccessToken, _ expect: String) {
            var flow = SilentTokenFlow(request(replaced: mine, force: true))
            play(&flow, toGate + [s(.background, "joinGate")] + leadAndLock + [s(.found(found), expect)])
        }
        reread(token("theirs", cachedAt: 1_000), "unlockStore")
        reread(token("theirs", cachedAt: 999.5), "readRefreshToken")  // before the call began (whole seconds: 1000)
        reread(token("mine", cachedAt: 1_000), "readRefreshToken")  // the very token it replaces
    }

    @Test("a claims request never takes a token from the cache (neither through the gate nor the re-read)")
    func claims() {
        var flow = SilentTokenFlow(request(claims: ClaimsRequest(json: #"{"access_token":{"acrs":{"value":"c1"}}}"#)))
        play(
            &flow,
            toGate + [s(.background, "joinGate")] + leadAndLock + [s(.found(token("fresh")), "readRefreshToken")]
        )
    }

    @Test("compare-then-delete: a dead refresh token is dropped; a newer one the store holds is tried once")
    func compareThenDelete() {
        var flow = started(request())
        var caller = flow  // the calling thread's copy, which waits for the refresh's thread
        play(&flow, [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(&flow, redeem + [s(.answer(.failure(deadToken)), "dropRefreshToken")])
        play(
            &flow,
            [s(.dropped(newer: rt2), "readRefreshToken retry"), s(.refreshToken((rt2, 1)), "send tokenEndpoint")]
        )
        play(&flow, Array(redeem.dropFirst()) + [s(.answer(.failure(deadToken)), "dropRefreshToken")])
        // Tried once: a third token is not tried.
        play(&flow, [s(.dropped(newer: RefreshToken(Secret("rt-3"))), "unlockStore")] + ended(.refreshTokenExpired))
        let last = play(&caller, [s(.backgroundEnded(.failure(deadToken)), "fail refresh_token_expired")])
        guard case .fail(let e)? = last else { return }
        #expect(e.loginHint == "ann@contoso.com")  // an interaction error names whom to sign in again
    }

    @Test("compare-then-delete: dropped (nil), or the store holds the refused token itself: the error stands")
    func droppedNoRetry() {
        for newer in [nil, rt1] {
            var flow = SilentTokenFlow(request())
            play(
                &flow,
                toGate + [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")]
            )
            play(
                &flow,
                redeem + [
                    s(.answer(.failure(deadToken)), "dropRefreshToken"), s(.dropped(newer: newer), "unlockStore"),
                ]
            )
        }
        // Errors that say nothing of the token itself keep it.
        var kept = SilentTokenFlow(request())
        play(&kept, toGate + [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(
            &kept,
            redeem + [s(.answer(.failure(serverError(.interactionRequired, "interaction_required"))), "unlockStore")]
        )
    }

    @Test("reserve before redeem: a full disk refuses before anything is sent")
    func reserveBeforeRedeem() {
        var flow = started(request())
        var caller = flow  // the calling thread's copy, which waits for the refresh's thread
        play(&flow, [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(&flow, Array(redeem.prefix(2)) + [s(.reserved(.failure(E(.cacheWriteFailed, "canned"))), "unlockStore")])
        play(&flow, ended(.cacheWriteFailed))
        play(&caller, [s(.backgroundEnded(.failure(E(.cacheWriteFailed, "canned"))), "fail cache_write_failed")])
    }

    @Test("a started call cancelled before its refresh was sent sends nothing; the cancel is not shared as a result")
    func cancelledBeforeSending() {
        var flow = SilentTokenFlow(request())
        play(&flow, toGate + [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(&flow, Array(redeem.prefix(3)) + [s(.committed(.failure(.callCancelled("canned"))), "unlockStore")])
        play(&flow, ended(.cancelled))
    }

    @Test("a stored answer that could not be written fails the call (the tokens are kept in memory)")
    func unwritten() {
        var flow = SilentTokenFlow(request())
        play(&flow, toGate + [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(&flow, redeem + [s(.answer(.success(.tokens(refreshed))), "store")])
        play(&flow, [s(.stored(.failure(E(.cacheWriteFailed, "canned"))), "unlockStore")] + ended(.cacheWriteFailed))
    }

    @Test("no refresh token: interaction_required with the login hint, or the early-refresh token; no account")
    func noRefreshToken() {
        var flow = SilentTokenFlow(request())
        let last = play(&flow, [s(.start, "readEntry"), s(.entry((nil, user)), "fail interaction_required")])
        if case .fail(let e)? = last { #expect(e.loginHint == "ann@contoso.com") }
        var early = SilentTokenFlow(request(fallback: token("early", refreshOn: 950)))
        play(&early, [s(.start, "readEntry"), s(.entry((nil, user)), "finish cached")])
        var gone = SilentTokenFlow(request())
        play(&gone, [s(.start, "readEntry"), s(.entry(nil), "fail no_account")])
        // The account vanished between the re-read and the grant.
        var vanished = started(request())
        var caller = vanished  // the calling thread's copy, which waits for the refresh's thread
        play(&vanished, [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(&vanished, [s(.refreshToken(nil), "unlockStore")] + ended(.interactionRequired))
        let end = play(
            &caller,
            [s(.backgroundEnded(.failure(SilentTokenFlow.noRefreshToken())), "fail interaction_required")]
        )
        if case .fail(let e)? = end { #expect(e.loginHint == "ann@contoso.com") }
    }

    @Test("a generic OIDC provider's invalid_scope on refresh asks for an interactive sign-in; Entra's stands")
    func oidcInvalidScope() {
        for (isEntra, expect) in [(false, "interaction_required"), (true, "invalid_scope")] {
            var flow = SilentTokenFlow(request(isEntra: isEntra))
            play(
                &flow,
                toGate + [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")]
            )
            play(&flow, redeem + [s(.answer(.failure(serverError(.invalidScope, "invalid_scope"))), "unlockStore")])
            play(&flow, ended(E.Code(rawValue: expect)))
        }
    }

    @Test("discovery is an explicit request: its failure ends the refresh before the write is reserved")
    func discoveryFails() {
        var flow = SilentTokenFlow(request(isEntra: false))
        play(&flow, toGate + [s(.background, "joinGate sharing")] + leadAndLock + [s(.found(nil), "readRefreshToken")])
        play(
            &flow,
            [
                s(.refreshToken((rt1, 1)), "send tokenEndpoint"),
                s(.answer(.failure(E(.server, "canned"))), "unlockStore"),
            ]
        )
    }

    @Test("an event out of order fails the call")
    func outOfOrder() {
        var flow = SilentTokenFlow(request())
        play(&flow, [s(.unlocked, "fail internal")])
    }
}
