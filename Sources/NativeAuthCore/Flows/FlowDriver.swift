internal import NativeAuthHTTP

/// How one call on a flow ended: the app's answer, and the flow to keep (nil: it ended).
enum FlowOutcome: Sendable {
    case answered(FlowStatus, next: Flow?)
    case failed(NativeAuthError, next: Flow?)
}

/// Performs a flow's effects — the only place a flow's requests are sent, its waits waited, its sign-in stored, its
/// browser opened and its listener served — feeding each result back to the flow until the flow answers the app.
struct FlowDriver: Sendable {
    let ctx: FlowContext

    /// Runs `event` on `flow` and every effect it leads to.
    func run(_ flow: Flow, _ event: FlowEvent) -> FlowOutcome {
        var flow = flow
        var effect = flow.on(event, at: ctx.clock.now())
        while true {
            switch effect {
            case .send(let call):
                let answer = Result { () throws(NativeAuthError) in try perform(call) }
                effect = flow.on(.answer(answer), at: ctx.clock.now())
            case .wait(let seconds):
                do { try ctx.sleep(seconds) } catch { return .failed(error, next: nil) }
                effect = flow.on(.waited, at: ctx.clock.now())
            case .store(let response, let scopes, let policy):
                let stored = Result { () throws(NativeAuthError) -> StoredSignIn in
                    let (account, token) = try ctx.tokens.acceptSignIn(
                        response,
                        requestedScopes: scopes,
                        server: ctx.server,
                        admission: ctx.epoch,
                        policy: policy
                    )
                    return StoredSignIn(account: account, token: token)
                }
                if case .success = stored { ctx.log(.info, "signed in") }
                effect = flow.on(.stored(stored), at: ctx.clock.now())
            case .openListener(let host, let port):
                let listener = ctx.listeners.listen(host: host, port: port)
                if listener != nil { ctx.log(.info, "browser sign-in started; listening on loopback") }
                effect = flow.on(.listenerOpened(listener), at: ctx.clock.now())
            case .openBrowser(let url):
                effect = flow.on(.browserLaunched(ctx.browser.launch(url)), at: ctx.clock.now())
            case .listen(let session, let deadline):
                let (outcome, browserFailure) = listen(session, until: deadline)
                if let reason = browserFailure {
                    // The browser command failed before it fetched the start page (the wait was stopped for it).
                    effect = flow.on(.browserLaunched(.failed(reason: reason)), at: ctx.clock.now())
                } else {
                    effect = flow.on(.redirect(outcome), at: ctx.clock.now())
                }
            case .finish(let status, let continues):
                return .answered(status, next: continues ? flow : nil)
            case .handOff(let next, let status):
                return .answered(status, next: next)
            case .fail(let error, let keepsFlow):
                var e = error
                // An error from an answer of this flow's server carries its correlation id.
                if e.server != nil, e.server?.correlationID == nil { e.server?.correlationID = ctx.correlationID }
                return .failed(e, next: keepsFlow ? flow : nil)
            }
        }
    }

    /// Serves the session's listener until the redirect, `deadline`, or a cancel; with why the browser the library
    /// started failed, when that stopped the wait.
    private func listen(
        _ session: AuthorizationSession,
        until deadline: Double
    ) -> (RedirectWaitOutcome, browserFailure: String??) {
        guard let listener = session.listener, listener.isOpen else { return (.cancelled, nil) }
        let clock = ctx.clock
        let isCancelled = ctx.isCancelled
        // The start page is served at once, also while the browser command the library started still runs; each
        // round of the wait looks at that command (without blocking), and stops the wait when it failed before the
        // page was fetched. Once the page was fetched, or when the wait ends, the command is let go.
        defer { session.releaseBrowser() }
        var failure: String?? = nil
        let outcome = listener.wait(
            deadline: deadline,
            now: { clock.now() },
            isCancelled: {
                if isCancelled() { return true }
                failure = session.browserFailure()
                return failure != nil
            },
            decide: { request in InteractiveFlow.decide(request, session, now: clock.now()) }
        )
        if case .cancelled = outcome, !isCancelled(), let failure { return (outcome, failure) }
        return (outcome, nil)
    }

    /// Sends one call through `ServerAPI` (with the flow's correlation id) and answers it typed.
    func perform(_ call: ServerCall) throws(NativeAuthError) -> ServerAnswer {
        let server = ctx.server
        switch call {
        case .initiate(let username):
            return .continuation(try server.initiate(username: username))
        case .challenge(let ct, let methodID, let context):
            return .challenge(try server.challenge(ct, methodID: methodID, context: context))
        case .token(let grant, let scopes, let claims):
            return .token(try server.token(grant, scopes: scopes, claims: claims))
        case .introspect(let ct):
            let (next, methods) = try server.introspect(ct)
            return .methods(next, methods)
        case .registerIntrospect(let ct):
            let (next, methods) = try server.registerIntrospect(ct)
            return .methods(next, methods)
        case .registerChallenge(let ct, let method, let target):
            return .registerChallenge(try server.registerChallenge(ct, method: method, target: target))
        case .registerContinue(let ct, let code):
            return .continuation(try server.registerContinue(ct, code: code))
        case .signUpStart(let username, let password, let attributes):
            return .continuation(try server.signUpStart(username: username, password: password, attributes: attributes))
        case .signUpChallenge(let ct):
            return .challenge(try server.signUpChallenge(ct))
        case .signUpContinue(let ct, let submission):
            return .signUpContinue(try server.signUpContinue(ct, submission))
        case .resetStart(let username):
            return .continuation(try server.resetStart(username: username))
        case .resetChallenge(let ct):
            let (next, challenge) = try server.resetChallenge(ct)
            return .codeChallenge(next, challenge)
        case .resetContinue(let ct, let code):
            return .continuation(try server.resetContinue(ct, code: code))
        case .resetSubmit(let ct, let password):
            let (pollToken, interval) = try server.resetSubmit(ct, newPassword: password)
            return .resetSubmitted(pollToken, interval: interval)
        case .resetPoll(let ct):
            return .resetPoll(try server.resetPoll(ct))
        case .discovery:
            return .metadata(try ctx.tokens.provider.requiredMetadata(server))
        case .deviceAuthorization(let endpoint, let scopes):
            return .deviceAuthorization(try server.deviceAuthorization(endpoint: endpoint, scopes: scopes))
        case .pollDeviceCode(let endpoint, let deviceCode):
            return .devicePoll(try server.pollDeviceCode(endpoint: endpoint, deviceCode: deviceCode))
        case .redeemCode(let endpoint, let code, let verifier, let redirectURI, let scopes, let claims):
            return .tokens(
                try server.redeemCode(
                    endpoint: endpoint,
                    code: code,
                    verifier: verifier,
                    redirectURI: redirectURI,
                    scopes: scopes,
                    claims: claims
                )
            )
        case .signingKey(let kid):
            return .signingKey(try ctx.tokens.provider.loadSigningKey(kid: kid, server))
        case .userinfo(let endpoint, let accessToken, let dpopKey):
            return .userinfo(try server.userinfo(endpoint: endpoint, accessToken: accessToken, dpopKey: dpopKey))
        case .tokenEndpoint, .refresh:
            return try SilentTokenDriver.perform(call, server: server, provider: ctx.tokens.provider)
        }
    }
}
