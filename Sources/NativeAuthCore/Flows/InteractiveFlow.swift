internal import NativeAuthCrypto
internal import NativeAuthHTTP

/// Browser sign-in (authorization code + PKCE, RFC 8252 loopback redirect): discovery, a loopback listener (for an
/// http://localhost or http://127.0.0.1 redirect URI), then the browser on the one-time start page (or
/// `browser_pending` with the authorization URL for the app to show); `wait` serves the listener until the redirect
/// with this sign-in's `state` arrives, `submit_redirect` takes a redirect the app captured (or its user pasted); the
/// code is redeemed with the verifier and the ID token is checked (signature, issuer, audience, lifetime, nonce)
/// before the account is cached.
struct InteractiveFlow: Sendable {
    /// Where the browser's redirect goes.
    enum RedirectTarget: Sendable {
        /// A loopback listener: the redirect URI's host (`localhost` or `127.0.0.1`), port (0: ephemeral) and path.
        case loopback(host: String, port: UInt16, path: String)
        /// Any other URI (a custom scheme the app handles itself).
        case custom(String)
    }

    enum State: Sendable {
        case new
        case discovering
        case openingListener(OIDCMetadata, endpoint: String, host: String, path: String)
        case openingBrowser(AuthorizationSession)
        /// Waiting for the app (`wait`, `submit_redirect`).
        case waiting(AuthorizationSession)
        /// Serving the listener until the redirect, a deadline or a cancel.
        case listening(AuthorizationSession)
        case redeeming(AuthorizationSession)
        /// The ID token's signing key, before the sign-in is stored (its check reads no key over the network).
        case loadingKey(AuthorizationSession, TokenResponse)
        case storing(AuthorizationSession)
        case ended
    }

    let request: InteractiveRequest
    let configuration: ClientConfiguration
    let secrets: AuthorizationSecrets
    private(set) var state: State

    init(_ request: InteractiveRequest, configuration: ClientConfiguration, secrets: AuthorizationSecrets) {
        self.request = request
        self.configuration = configuration
        self.secrets = secrets
        state = .new
    }

    var scopes: [String] { request.scopes }

    /// The sign-in's session, once it has one.
    var session: AuthorizationSession? {
        switch state {
        case .openingBrowser(let s), .waiting(let s), .listening(let s), .redeeming(let s), .loadingKey(let s, _),
            .storing(let s):
            return s
        default: return nil
        }
    }

    /// When the sign-in ends by itself (its listening socket closes with it).
    var expiresAt: Double? { session?.expiresAt }

    mutating func on(_ event: FlowEvent, at now: Double) -> FlowEffect {
        switch (state, event) {
        case (.new, .start):
            state = .discovering
            return .send(.discovery)
        case (.discovering, .answer(.success(.metadata(let metadata)))):
            return discovered(metadata, now)
        case (.openingListener(let metadata, let endpoint, let host, let path), .listenerOpened(let listener)):
            return listenerOpened(listener, metadata, endpoint: endpoint, host: host, path: path, now)
        case (.openingBrowser(let session), .browserLaunched(let launch)):
            return browserLaunched(launch, session, now)
        case (.listening(let session), .browserLaunched(.failed(let reason))):
            return end(Self.browserUnavailable(session, reason))
        case (.waiting(let session), .action(let action)):
            return waiting(session, action, now)
        case (.listening(let session), .redirect(let outcome)):
            return redirected(outcome, session, now)
        case (.redeeming(let session), .answer(.success(.tokens(let response)))):
            // An ID token that does not decode, or whose header already refuses it (not RS256, critical parameters),
            // goes straight to the store, whose check refuses it: id_token_invalid, whatever the key set would
            // answer, and no request to it.
            guard let idToken = response.idToken, let jwt = try? JWT(decoding: idToken),
                jwt.header["alg"]?.stringValue == "RS256", jwt.header["crit"] == nil
            else { return store(response, session, key: nil) }
            state = .loadingKey(session, response)
            return .send(.signingKey(kid: jwt.header["kid"]?.stringValue))
        case (.loadingKey(let session, let response), .answer(.success(.signingKey(let key)))):
            return store(response, session, key: key)
        case (.storing, .stored(.success(let s))):
            state = .ended
            return .finish(.signedIn(s.account, s.token), continues: false)
        case (_, .answer(.failure(let e))), (_, .stored(.failure(let e))):
            return end(e)
        default:
            return end(.unexpectedAnswer("browser sign-in"))
        }
    }

    /// The sign-in stored, its ID token checked with `key` (the one loaded for it).
    private mutating func store(
        _ response: TokenResponse,
        _ session: AuthorizationSession,
        key: RSAPublicKey?
    ) -> FlowEffect {
        state = .storing(session)
        return .store(
            response,
            scopes: scopes,
            policy: TokenService.IDTokenPolicy(nonce: session.nonce, signature: true, signingKey: key)
        )
    }

    /// Discovery answered: the authorization endpoint, then the listener (a loopback redirect URI) or the session.
    private mutating func discovered(_ metadata: OIDCMetadata, _ now: Double) -> FlowEffect {
        var endpoint = metadata.authorizationEndpoint
        if endpoint == nil, configuration.authorityType.isEntra {
            endpoint = configuration.authority.endpoint(Endpoint.authorize.rawValue)
        }
        guard let endpoint else {
            return end(
                NativeAuthError(.server, "The provider's discovery document names no authorization_endpoint.")
            )
        }
        let target: RedirectTarget
        do { target = try Self.redirect(configuration.browserRedirectURI) } catch { return end(error) }
        switch target {
        case .custom(let uri):
            guard request.browser == .none else {
                return end(
                    .invalidArgument(
                        "browser: a redirect_uri that is not http://localhost or http://127.0.0.1 has no listener; "
                            + "use \"browser\":\"none\" and submit_redirect",
                        field: "browser"
                    )
                )
            }
            return begin(metadata, endpoint: endpoint, listener: nil, redirectURI: uri, path: "", host: "", now)
        case .loopback(let host, let port, let path):
            state = .openingListener(metadata, endpoint: endpoint, host: host, path: path)
            return .openListener(host == "localhost" ? .localhost : .ipv4, port: port)
        }
    }

    /// The loopback listener opened (or could not be): the session, with the redirect URI on its port.
    private mutating func listenerOpened(
        _ listener: (any RedirectListener)?,
        _ metadata: OIDCMetadata,
        endpoint: String,
        host: String,
        path: String,
        _ now: Double
    ) -> FlowEffect {
        guard let listener else {
            return end(
                NativeAuthError(.network, "Cannot listen on the loopback interface for the browser's redirect.")
            )
        }
        let redirectURI = "http://\(host):\(listener.port)\(path)"
        return begin(
            metadata,
            endpoint: endpoint,
            listener: listener,
            redirectURI: redirectURI,
            path: path.isEmpty ? "/" : path,
            host: host,
            now
        )
    }

    /// The browser was launched (or not): listen for the redirect.
    private mutating func browserLaunched(
        _ launch: BrowserLaunch,
        _ session: AuthorizationSession,
        _ now: Double
    ) -> FlowEffect {
        switch launch {
        case .failed(let reason): return end(Self.browserUnavailable(session, reason))
        case .opened: break
        case .running(let process): session.watch(process)
        }
        state = .listening(session)
        // The first wait: the whole sign-in, or wait_ms (then browser_pending, and the app may offer a paste).
        let first = request.waitMs.map { now + Double($0) / 1000 } ?? session.expiresAt
        return .listen(session, until: min(session.expiresAt, first))
    }

    /// The app's action while the sign-in waits for it: `wait` (listen again) or `submit_redirect`.
    private mutating func waiting(_ session: AuthorizationSession, _ action: FlowAction, _ now: Double) -> FlowEffect {
        switch action {
        case .wait(let timeoutMs):
            guard let listener = session.listener else {
                // No listener (the redirect URI is not a loopback one): the flow stays, waiting for the redirect.
                return .fail(.wrongStep(.wait(timeoutMs: timeoutMs), expected: .submitRedirect), keepsFlow: true)
            }
            guard listener.isOpen else {
                return end(NativeAuthError(.flowInvalid, "This sign-in is no longer waiting for a redirect."))
            }
            state = .listening(session)
            return .listen(session, until: min(session.expiresAt, now + Double(timeoutMs ?? 300_000) / 1000))
        case .submitRedirect(let url):
            // Checked first: a mistyped URL is invalid_argument and leaves the flow (and its listener) as it was.
            let parameters: [String: String]
            do { parameters = try Self.parameters(of: url, expecting: session.redirectURI) } catch {
                return .fail(error, keepsFlow: true)
            }
            return exchange(parameters, session)
        default:
            return .fail(.wrongStep(action, expected: .wait), keepsFlow: true)
        }
    }

    /// What the listener heard: the redirect (redeem its code), a stop, a cancel or the end of the wait.
    private mutating func redirected(
        _ outcome: RedirectWaitOutcome,
        _ session: AuthorizationSession,
        _ now: Double
    ) -> FlowEffect {
        switch outcome {
        case .accepted(let request):
            return exchange(request.parameters, session)
        case .stopped:
            return end(
                NativeAuthError(
                    .flowInvalid,
                    "The sign-in's start page was requested twice, so another program may have read its address; "
                        + "the sign-in was stopped. Start it again."
                )
            )
        case .cancelled:
            return end(NativeAuthError(.cancelled, "The sign-in was cancelled."))
        case .timedOut:
            guard now < session.expiresAt else {
                return end(NativeAuthError(.timeout, "The browser sign-in did not complete in time."))
            }
            state = .waiting(session)
            return .finish(.browserPending(Self.pending(session, now)), continues: true)
        }
    }

    /// The session, once the redirect URI is known (with its listener, if it has one): the browser opens on its start
    /// page, or the app gets `browser_pending`.
    private mutating func begin(
        _ metadata: OIDCMetadata,
        endpoint: String,
        listener: (any RedirectListener)?,
        redirectURI: String,
        path: String,
        host: String,
        _ now: Double
    ) -> FlowEffect {
        let url = ServerAPI.authorizationURL(
            configuration,
            endpoint: endpoint,
            AuthorizationParameters(
                scopes: request.scopes,
                redirectURI: redirectURI,
                state: secrets.state,
                nonce: secrets.nonce,
                codeChallenge: PKCE.challenge(for: secrets.verifier),
                responseMode: request.responseMode,
                prompt: request.prompt,
                loginHint: request.loginHint,
                domainHint: request.domainHint,
                claims: request.claims,
                extra: request.extraQueryParameters
            )
        )
        // Only a browser the library launches gets the start page (its command line is public). With browser none
        // the app is shown the authorization URL itself: it may load it in its own web view, or its user may open it
        // on another device (whose own localhost would not reach this listener) and paste the redirect back.
        var start: StartPage? = nil
        if let listener, request.browser == .system {
            guard StartPage.isHeaderSafe(url) else {
                listener.shutdown()
                return end(NativeAuthError(.server, "The provider's authorization_endpoint is not a usable URL."))
            }
            start = StartPage(host: host, port: listener.port, secrets: secrets)
        }
        let session = AuthorizationSession(
            listener: listener,
            start: start,
            responseMode: request.responseMode,
            state: secrets.state,
            nonce: secrets.nonce,
            verifier: Secret(secrets.verifier),
            redirectURI: redirectURI,
            redirectPath: path,
            authorizationURL: url,
            expiresAt: now + Double(request.timeoutMs) / 1000,
            metadata: metadata
        )
        switch request.browser {
        case .none:
            state = .waiting(session)
            return .finish(.browserPending(Self.pending(session, now)), continues: true)
        case .system:
            // The launcher is looked up when the driver opens the browser (the app may have replaced its callback
            // during discovery), and is given the start page: a browser's command line is readable by every local
            // user.
            state = .openingBrowser(session)
            return .openBrowser(session.browserURL)
        }
    }

    /// The authorization response → the code redemption (or the error it carried). Whatever happens, the flow ends
    /// with it.
    private mutating func exchange(_ parameters: [String: String], _ session: AuthorizationSession) -> FlowEffect {
        guard let response = ServerAPI.authorizationResponse(parameters) else {
            return end(NativeAuthError(.server, "The redirect carried neither a code nor an error."))
        }
        guard let state = response.state, constantTimeEquals(state, session.state) else {
            return end(NativeAuthError(.server, "The redirect's state does not match this sign-in; it was refused."))
        }
        // RFC 9207: a provider that says it sends `iss` must, and it must be the issuer (a mix-up defence).
        if let iss = response.issuer {
            guard iss == session.metadata.issuer else {
                return end(NativeAuthError(.server, "The redirect came from another issuer (iss); it was refused."))
            }
        } else if session.metadata.sendsIssuerInResponse {
            return end(NativeAuthError(.server, "The redirect lacks the issuer (iss) the provider promises to send."))
        }
        switch response {
        case .error(let error, _, _):
            return end(.fromAuthorizationError(error))
        case .code(let code, _, _):
            self.state = .redeeming(session)
            return .send(
                .redeemCode(
                    endpoint: session.metadata.tokenEndpoint,
                    code: code,
                    verifier: session.verifier,
                    redirectURI: session.redirectURI,
                    scopes: scopes,
                    claims: request.claims
                )
            )
        }
    }

    /// Ends the sign-in with `e` (its listener closes with the session).
    private mutating func end(_ e: NativeAuthError) -> FlowEffect {
        session?.listener?.shutdown()
        state = .ended
        return .fail(e, keepsFlow: false)
    }

    /// No browser could be opened (or the one started failed before it fetched the start page): the sign-in ends.
    static func browserUnavailable(_ session: AuthorizationSession, _ reason: String?) -> NativeAuthError {
        let why = reason.map { "No browser could be opened (\($0)); " } ?? "No browser could be opened; "
        var e = NativeAuthError(
            .browserUnavailable,
            why + "the sign-in has ended. Start it again with browser none to show the user an address."
        )
        e.authorizationURL = session.browserURL
        return e
    }

    static func pending(_ session: AuthorizationSession, _ now: Double) -> BrowserPending {
        BrowserPending(
            authorizationURL: session.browserURL,
            redirectURI: session.redirectURI,
            expiresIn: max(0, Int64((session.expiresAt - now).rounded(.up)))
        )
    }

    /// The redirect URI's target: a loopback listener for `http://localhost` (which listens on 127.0.0.1 and ::1: a
    /// browser may resolve localhost to either, and another user listening on the other one would get the redirect)
    /// and `http://127.0.0.1` (127.0.0.1 only); any other scheme is the app's to capture.
    static func redirect(_ uri: String) throws(NativeAuthError) -> RedirectTarget {
        guard let u = try? HTTPURL(uri), u.scheme == "http" else { return .custom(uri) }
        guard u.host == "localhost" || u.host == "127.0.0.1" else {
            throw .invalidArgument(
                "redirect_uri: an http redirect URI must be http://localhost or http://127.0.0.1 (RFC 8252)",
                field: "redirect_uri"
            )
        }
        guard u.query == nil else {
            throw .invalidArgument("redirect_uri: must not have a query", field: "redirect_uri")
        }
        return .loopback(host: u.host, port: UInt16(u.port ?? 0), path: u.path)
    }

    /// The listener's answer to one request. The start page's first fetch is sent on to the authorization URL with
    /// this sign-in's cookie; a second fetch stops the sign-in. The redirect of this sign-in (its path, `state`, and
    /// the cookie when a start page set one) ends the wait; anything else gets an error page and the wait goes on.
    /// No page repeats what the request carried.
    static func decide(_ r: RedirectRequest, _ session: AuthorizationSession, now: Double) -> RedirectReply {
        if let start = session.start, r.path == start.path {
            guard start.claim() else {
                return RedirectReply(
                    status: 410,
                    html: page(
                        "This sign-in page was already opened once, so it was stopped. Start the sign-in again."
                    ),
                    ending: .stopped
                )
            }
            let left = (session.expiresAt - now).rounded(.up)
            let lifetime: Int64 = left.isFinite ? Int64(max(1, min(86_400, left))) : 1
            return start.forward(to: session.authorizationURL, cookieLifetime: lifetime, ending: .none)
        }
        guard r.path == session.redirectPath else {
            return RedirectReply(status: 404, html: page("Not found."), accepted: false)
        }
        guard let state = ServerAPI.redirectState(r.parameters), constantTimeEquals(state, session.state) else {
            return RedirectReply(
                status: 400,
                html: page("This response does not belong to the sign-in in progress; it was ignored."),
                accepted: false
            )
        }
        // The redirect must come from the browser that opened the start page: it carries the page's cookie. A
        // form_post redirect is a cross-site POST (the provider's page posts to this listener), with which browsers
        // do not send SameSite=Lax cookies, so it cannot be asked for there; the state (never on a command line)
        // and the check that the connection is this user's guard it.
        if let start = session.start, !(session.responseMode == .formPost && r.method == "POST"),
            !start.isCarried(by: r.cookies)
        {
            return RedirectReply(
                status: 400,
                html: page("This response did not come from the browser that started the sign-in; it was ignored."),
                accepted: false
            )
        }
        let failed = ServerAPI.redirectIsError(r.parameters)
        return RedirectReply(
            status: 200,
            html: page(
                failed
                    ? "Sign-in did not complete. You can close this window and return to the application."
                    : "You are signed in. You can close this window and return to the application."
            ),
            accepted: true
        )
    }

    static func page(_ text: String) -> String {
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Sign-in</title></head><body><p>\(text)</p>"
            + "</body></html>"
    }

    /// The parameters of a redirect URL the app captured (or its user pasted: spaces, tabs and line breaks around it
    /// are not part of it): it must be this sign-in's redirect URI.
    static func parameters(of text: String, expecting redirectURI: String) throws(NativeAuthError) -> [String: String] {
        func base(_ s: Substring) -> Substring { s.prefix { $0 != "?" && $0 != "#" } }
        guard text.utf8.count <= 16 * 1024 else {
            throw .invalidArgument("redirect_url: longer than 16 KiB", field: "redirect_url")
        }
        let blank: Set<Character> = [" ", "\t", "\r", "\n", "\r\n"]
        var url = Substring(text)
        while let c = url.first, blank.contains(c) { url.removeFirst() }
        while let c = url.last, blank.contains(c) { url.removeLast() }
        let expected = redirectURI.hasSuffix("/") ? String(redirectURI.dropLast()) : redirectURI
        var got = base(url[...])
        if got.hasSuffix("/") { got = got.dropLast() }
        guard got.lowercased() == expected.lowercased() else {
            throw .invalidArgument("redirect_url: is not this sign-in's redirect URI", field: "redirect_url")
        }
        var parameters: [String: String] = [:]
        // The response is in the query (response_mode=query); a fragment is read too, for apps that captured a
        // redirect some provider sent that way.
        for part in [url.firstIndex(of: "?"), url.firstIndex(of: "#")] {
            guard let start = part else { continue }
            let query = url[url.index(after: start)...].prefix { $0 != "#" }
            for (k, v) in FormEncoding.decode(String(query)) ?? [] where parameters[k] == nil { parameters[k] = v }
        }
        return parameters
    }
}
