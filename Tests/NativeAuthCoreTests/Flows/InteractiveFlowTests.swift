import NativeAuthCrypto
import NativeAuthHTTP
import Synchronization
import Testing

@testable import NativeAuthCore

/// A listener that never listens: the flow only reads its port and whether it is open.
final class FakeListener: RedirectListener {
    let port: UInt16 = 4321
    private let open = Mutex(true)
    var isOpen: Bool { open.withLock { $0 } }
    func wait(
        deadline: Double,
        now: () -> Double,
        isCancelled: () -> Bool,
        decide: (RedirectRequest) -> RedirectReply
    ) -> RedirectWaitOutcome { .timedOut }
    func shutdown() { open.withLock { $0 = false } }
}

@Suite struct InteractiveFlowTests {
    static let secrets = AuthorizationSecrets(
        state: "S",
        nonce: "N",
        verifier: String(repeating: "v", count: 43),
        startPath: "/start",
        cookieName: "na_c",
        cookieValue: "cv"
    )
    static let metadata = OIDCMetadata(
        tokenEndpoint: "https://contoso.ciamlogin.com/tenant/oauth2/v2.0/token",
        issuer: "https://tenant.ciamlogin.com/tenant/v2.0",
        authorizationEndpoint: "https://contoso.ciamlogin.com/tenant/oauth2/v2.0/authorize"
    )

    /// An ID token whose header names the key `k1` (its signature is checked by the store, not by the flow).
    static let idToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.e30.c2ln"

    func flow(redirectURI: String? = nil, browser: BrowserMode) throws -> InteractiveFlow {
        var config = ClientConfiguration(
            authority: try Authority("https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
            clientID: "c1"
        )
        config.redirectURI = redirectURI
        let request = try InteractiveRequest(
            scopes: ["api"],
            loginHint: "ann@contoso.com",
            prompt: nil,
            domainHint: nil,
            claims: nil,
            extraQueryParameters: [],
            responseMode: nil,
            browser: browser == .none ? "none" : "system",
            timeoutMs: 60_000,
            correlationID: nil
        )
        return InteractiveFlow(request, configuration: config, secrets: Self.secrets)
    }

    func on(_ f: inout InteractiveFlow, _ e: FlowEvent, _ now: Double) -> FlowEffect { f.on(e, at: now) }

    @Test func theSystemBrowserOpensTheStartPageAndTheRedirectIsRedeemed() throws {
        var f = try flow(browser: .system)
        let effects = play(
            &f,
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(FakeListener()), "openBrowser"), step(.browserOpened(true), "listen"),
                step(.redirect(.timedOut), "finish browser_pending"),
                step(.action(.wait(timeoutMs: 1000)), "listen"),
                step(
                    .redirect(
                        .accepted(RedirectRequest(method: "GET", path: "/", parameters: ["code": "x", "state": "S"]))
                    ),
                    "send redeemCode"
                ),
                // The ID token's key is loaded (JWKS) as a request of its own before the sign-in is stored.
                step(answer(.tokens(tokens(idToken: Self.idToken))), "send signingKey"),
                step(answer(.signingKey(nil)), "store"), step(storedOK, "finish signed_in ended"),
            ],
            on
        )
        guard case .send(.signingKey(let kid)) = effects[7] else {
            Issue.record("no signing key")
            return
        }
        #expect(kid == "k1")
        // The browser is given the start page, never the authorization URL (a command line is public).
        guard case .openBrowser(let url) = effects[2] else {
            Issue.record("no browser")
            return
        }
        #expect(url == "http://localhost:4321/start")
        guard case .send(.redeemCode(_, _, _, let redirectURI, _, _)) = effects[6] else {
            Issue.record("no code")
            return
        }
        #expect(redirectURI == "http://localhost:4321")
    }

    /// The key loaded for the ID token is the one its check uses (not whatever the provider's cached key set holds
    /// when the sign-in is stored: another sign-in may have loaded another set meanwhile).
    @Test func theLoadedKeyIsTheOneTheStoreChecksWith() throws {
        let key = try RSAPublicKey(modulus: [0xC5] + [UInt8](repeating: 0x37, count: 255), exponent: [1, 0, 1])
        for loaded in [key, nil] as [RSAPublicKey?] {
            var f = try flow(redirectURI: "myapp://auth", browser: .none)
            let effects = play(
                &f,
                [
                    step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "finish browser_pending"),
                    step(.action(.submitRedirect("myapp://auth?code=x&state=S")), "send redeemCode"),
                    step(answer(.tokens(tokens(idToken: Self.idToken))), "send signingKey"),
                    step(answer(.signingKey(loaded)), "store"),
                ],
                on
            )
            guard case .store(_, _, let policy) = effects[4] else {
                Issue.record("no store")
                return
            }
            #expect(policy.signature && (policy.signingKey != nil) == (loaded != nil))
        }
    }

    @Test func failuresEndTheSignIn() throws {
        let scripts: [[Step]] = [
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(nil), "fail network"),
            ],
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(FakeListener()), "openBrowser"),
                step(.browserOpened(false), "fail browser_unavailable"),
            ],
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(FakeListener()), "openBrowser"), step(.browserOpened(true), "listen"),
                step(
                    .redirect(.stopped(RedirectRequest(method: "GET", path: "/start", parameters: [:]))),
                    "fail flow_invalid"
                ),
            ],
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(FakeListener()), "openBrowser"), step(.browserOpened(true), "listen"),
                step(
                    .redirect(
                        .accepted(
                            RedirectRequest(
                                method: "GET",
                                path: "/",
                                parameters: ["error": "access_denied", "state": "S"]
                            )
                        )
                    ),
                    "fail access_denied"
                ),
            ],
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(FakeListener()), "openBrowser"), step(.browserOpened(true), "listen"),
                step(
                    .redirect(
                        .accepted(RedirectRequest(method: "GET", path: "/", parameters: ["code": "x", "state": "T"]))
                    ),
                    "fail server"
                ),
            ],
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(FakeListener()), "openBrowser"), step(.browserOpened(true), "listen"),
                step(.redirect(.timedOut), "fail timeout", at: 1_000_000),
            ],
            // The provider's keys cannot be fetched: the sign-in ends before anything is stored.
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(FakeListener()), "openBrowser"), step(.browserOpened(true), "listen"),
                step(
                    .redirect(
                        .accepted(RedirectRequest(method: "GET", path: "/", parameters: ["code": "x", "state": "S"]))
                    ),
                    "send redeemCode"
                ),
                step(answer(.tokens(tokens(idToken: Self.idToken))), "send signingKey"),
                step(failure(.network), "fail network"),
            ],
        ]
        for script in scripts {
            var f = try flow(browser: .system)
            play(&f, script, on)
            guard case .ended = f.state else {
                Issue.record("not ended: \(script.last?.expect ?? "")")
                return
            }
        }
    }

    /// An ID token whose header already refuses it (not RS256, or critical parameters) asks for no key: the store's
    /// check answers id_token_invalid, whatever the key set would have answered.
    @Test func aTokenItsHeaderRefusesAsksForNoKey() throws {
        // {"alg":"HS256","kid":"k1"}, {"alg":"none"}, {"alg":"RS256","kid":"k1","crit":["exp"]}
        let headers = [
            "eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0", "eyJhbGciOiJub25lIn0",
            "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIiwiY3JpdCI6WyJleHAiXX0",
        ]
        for header in headers {
            var f = try flow(redirectURI: "myapp://auth", browser: .none)
            play(
                &f,
                [
                    step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "finish browser_pending"),
                    step(.action(.submitRedirect("myapp://auth?code=x&state=S")), "send redeemCode"),
                    step(answer(.tokens(tokens(idToken: header + ".e30.c2ln"))), "store"),
                ],
                on
            )
        }
    }

    /// A custom-scheme redirect URI has no listener: the app opens the URL and submits the redirect it captured; a
    /// mistyped one leaves the flow as it was.
    @Test func aCustomSchemeRedirectIsSubmittedByTheApp() throws {
        var f = try flow(redirectURI: "myapp://auth", browser: .none)
        let effects = play(
            &f,
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "finish browser_pending"),
                step(.action(.wait(timeoutMs: nil)), "fail flow_invalid kept"),
                step(.action(.submitRedirect("otherapp://auth?code=x&state=S")), "fail invalid_argument kept"),
                step(.action(.submitRedirect("myapp://auth?code=x&state=S")), "send redeemCode"),
                // An ID token that does not decode is not looked up: the store's check refuses it.
                step(answer(.tokens(tokens())), "store"), step(storedOK, "finish signed_in ended"),
            ],
            on
        )
        guard case .finish(.browserPending(let pending), _) = effects[1] else {
            Issue.record("no pending")
            return
        }
        #expect(pending.authorizationURL.hasPrefix("https://contoso.ciamlogin.com/tenant/oauth2/v2.0/authorize?"))
        #expect(pending.authorizationURL.contains("state=S") && pending.authorizationURL.contains("nonce=N"))
    }

    /// "browser":"none" with a loopback redirect URI (issue 28, defect 8): the app is shown the authorization URL,
    /// not a start page; the listener has none, so a redirect needs no cookie, but its path and state still count.
    @Test func browserNoneShowsTheAuthorizationURLAndItsListenerHasNoStartPage() throws {
        var f = try flow(browser: .none)
        let effects = play(
            &f,
            [
                step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "openListener"),
                step(.listenerOpened(FakeListener()), "finish browser_pending"),
            ],
            on
        )
        guard case .finish(.browserPending(let pending), _) = effects[2], let session = f.session else {
            Issue.record("no pending")
            return
        }
        #expect(pending.authorizationURL.hasPrefix("https://contoso.ciamlogin.com/tenant/oauth2/v2.0/authorize?"))
        #expect(pending.authorizationURL.contains("state=S") && pending.authorizationURL.contains("nonce=N"))
        #expect(pending.redirectURI == "http://localhost:4321" && session.start == nil)
        func status(_ path: String, _ parameters: [String: String]) -> Int {
            InteractiveFlow.decide(RedirectRequest(method: "GET", path: path, parameters: parameters), session, now: 0)
                .status
        }
        #expect(status("/start", [:]) == 404)
        #expect(status("/", ["code": "x", "state": "T"]) == 400)
        #expect(status("/elsewhere", ["code": "x", "state": "S"]) == 404)
        #expect(status("/", ["code": "x", "state": "S"]) == 200)
    }

    /// The system browser needs a listener: a custom scheme with "browser":"system" is refused.
    @Test func aCustomSchemeCannotUseTheSystemBrowser() throws {
        var f = try flow(redirectURI: "myapp://auth", browser: .system)
        play(&f, [step(.start, "send discovery"), step(answer(.metadata(Self.metadata)), "fail invalid_argument")], on)
    }
}
