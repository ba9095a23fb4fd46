internal import NativeAuthCrypto
internal import NativeAuthHTTP

/// What one browser sign-in holds while it waits: the loopback listener and its one-time start page (none for a
/// custom-scheme redirect URI), the `state`, `nonce` and PKCE verifier, and the addresses. Shared by the flow's
/// values; its listener is used by one call at a time (the flow is checked out) and closes when the sign-in ends or
/// the last value goes.
final class AuthorizationSession: Sendable {
    let listener: (any RedirectListener)?
    /// The page on the listener that the browser is given instead of `authorizationURL` (see `StartPage`).
    let start: StartPage?
    let responseMode: ResponseMode
    let state: String
    let nonce: String
    let verifier: Secret
    let redirectURI: String
    /// The redirect URI's path ("/" when it has none): the listener answers only there.
    let redirectPath: String
    let authorizationURL: String
    let expiresAt: Double
    let metadata: OIDCMetadata

    init(
        listener: (any RedirectListener)?,
        start: StartPage?,
        responseMode: ResponseMode,
        state: String,
        nonce: String,
        verifier: Secret,
        redirectURI: String,
        redirectPath: String,
        authorizationURL: String,
        expiresAt: Double,
        metadata: OIDCMetadata
    ) {
        self.listener = listener
        self.start = start
        self.responseMode = responseMode
        self.state = state
        self.nonce = nonce
        self.verifier = verifier
        self.redirectURI = redirectURI
        self.redirectPath = redirectPath
        self.authorizationURL = authorizationURL
        self.expiresAt = expiresAt
        self.metadata = metadata
    }

    /// The URL a browser is given and the app is shown: the start page when there is a listener, else the
    /// authorization URL itself (a custom-scheme redirect URI: the app opens it and captures the redirect).
    var browserURL: String { start?.url ?? authorizationURL }

    deinit { listener?.shutdown() }
}

/// Browser sign-in (authorization code + PKCE, RFC 8252 loopback redirect): `start` opens the browser (or answers
/// `browser_pending`), `wait` serves the loopback listener until the redirect with this sign-in's `state` arrives,
/// `submit_redirect` takes a redirect the app captured itself; the code is redeemed with the verifier and the ID
/// token is checked (signature, issuer, audience, lifetime, nonce) before the account is cached.
struct InteractiveFlow: Sendable {
    let session: AuthorizationSession
    let scopes: [String]

    static func start(
        _ request: InteractiveRequest,
        _ ctx: FlowContext,
        launcher: any BrowserLauncher
    ) throws(NativeAuthError) -> Transition {
        let configuration = ctx.server.configuration
        let metadata = try ctx.tokens.provider.requiredMetadata(ctx.server)
        var endpoint = metadata.authorizationEndpoint
        if endpoint == nil, configuration.authorityType.isEntra {
            endpoint = configuration.authority.endpoint(Endpoint.authorize.rawValue)
        }
        guard let endpoint else {
            throw NativeAuthError(.server, "The provider's discovery document names no authorization_endpoint.")
        }
        let (listener, redirectURI, path, host) = try Self.redirect(configuration.browserRedirectURI, ctx.listeners)
        if listener == nil, request.browser == .system {
            throw .invalidArgument(
                "browser: a redirect_uri that is not http://localhost or http://127.0.0.1 has no listener; use "
                    + "\"browser\":\"none\" and submit_redirect",
                field: "browser"
            )
        }
        let state: String
        let nonce: String
        let verifier: String
        do {
            state = Base64.urlEncode(try SecureRandom.bytes(24))
            nonce = Base64.urlEncode(try SecureRandom.bytes(24))
            verifier = try PKCE.makeVerifier()
        } catch {
            throw NativeAuthError(.internal, "The system random generator failed.")
        }
        let url = ctx.server.authorizationURL(
            endpoint: endpoint,
            AuthorizationParameters(
                scopes: request.scopes,
                redirectURI: redirectURI,
                state: state,
                nonce: nonce,
                codeChallenge: PKCE.challenge(for: verifier),
                responseMode: request.responseMode,
                prompt: request.prompt,
                loginHint: request.loginHint,
                domainHint: request.domainHint,
                claims: request.claims,
                extra: request.extraQueryParameters
            )
        )
        var start: StartPage? = nil
        if let listener {
            guard StartPage.isHeaderSafe(url) else {
                throw NativeAuthError(.server, "The provider's authorization_endpoint is not a usable URL.")
            }
            start = try StartPage(host: host, port: listener.port)
        }
        let session = AuthorizationSession(
            listener: listener,
            start: start,
            responseMode: request.responseMode,
            state: state,
            nonce: nonce,
            verifier: Secret(verifier),
            redirectURI: redirectURI,
            redirectPath: path,
            authorizationURL: url,
            expiresAt: ctx.clock.now() + Double(request.timeoutMs) / 1000,
            metadata: metadata
        )
        let flow = InteractiveFlow(session: session, scopes: request.scopes)
        ctx.log(.info, listener == nil ? "browser sign-in started" : "browser sign-in started; listening on loopback")
        switch request.browser {
        case .none:
            return Transition(next: .interactive(flow), status: .browserPending(flow.pending(ctx)))
        case .system:
            // The launcher is looked up now (the app may have replaced its callback during discovery), and is given
            // the start page: a browser's command line is readable by every local user.
            guard launcher.open(session.browserURL) else {
                var e = NativeAuthError(
                    .browserUnavailable,
                    "No browser could be opened; the sign-in has ended. Start it again with browser none to show "
                        + "the user an address."
                )
                e.authorizationURL = session.browserURL
                throw e
            }
            return try flow.wait(until: session.expiresAt, ctx)
        }
    }

    /// The listener for a loopback redirect URI (its port, or an ephemeral one, added to the URI), or none for any
    /// other URI (a custom scheme the app handles itself); the redirect URI, its path, and its host.
    /// `http://localhost` listens on 127.0.0.1 and ::1 (a browser may resolve localhost to either, and another user
    /// listening on the other one would get the redirect); `http://127.0.0.1` on 127.0.0.1 only.
    static func redirect(
        _ uri: String,
        _ listeners: any RedirectListeners
    ) throws(NativeAuthError) -> ((any RedirectListener)?, String, String, String) {
        guard let u = try? HTTPURL(uri), u.scheme == "http" else { return (nil, uri, "", "") }
        guard u.host == "localhost" || u.host == "127.0.0.1" else {
            throw .invalidArgument(
                "redirect_uri: an http redirect URI must be http://localhost or http://127.0.0.1 (RFC 8252)",
                field: "redirect_uri"
            )
        }
        guard u.query == nil else {
            throw .invalidArgument("redirect_uri: must not have a query", field: "redirect_uri")
        }
        guard
            let listener = listeners.listen(host: u.host == "localhost" ? .localhost : .ipv4, port: UInt16(u.port ?? 0))
        else {
            throw NativeAuthError(.network, "Cannot listen on the loopback interface for the browser's redirect.")
        }
        let path = u.path.isEmpty ? "/" : u.path
        return (listener, "http://\(u.host):\(listener.port)\(u.path)", path, u.host)
    }

    func pending(_ ctx: FlowContext) -> BrowserPending {
        BrowserPending(
            authorizationURL: session.browserURL,
            redirectURI: session.redirectURI,
            expiresIn: max(0, Int64((session.expiresAt - ctx.clock.now()).rounded(.up)))
        )
    }

    func apply(_ action: FlowAction, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        switch action {
        case .wait(let timeoutMs):
            guard session.listener != nil else {
                // No listener (the redirect URI is not a loopback one): the flow stays, waiting for the redirect.
                throw ctx.wrongStep(action, expected: .submitRedirect)
            }
            let deadline = min(session.expiresAt, ctx.clock.now() + Double(timeoutMs ?? 300_000) / 1000)
            return try wait(until: deadline, ctx)
        case .submitRedirect(let url):
            // Checked first: a mistyped URL is invalid_argument and leaves the flow (and its listener) as it was.
            let parameters = try Self.parameters(of: url, expecting: session.redirectURI)
            session.listener?.shutdown()
            return redeem(parameters, ctx)
        default:
            throw ctx.wrongStep(action, expected: .wait)
        }
    }

    /// Serves the listener until the redirect, `deadline`, or a cancel. At the sign-in's own expiry the flow ends
    /// with `timeout`; at an earlier deadline it answers `browser_pending` again, flow intact.
    func wait(until deadline: Double, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        guard let listener = session.listener, listener.isOpen else {
            throw NativeAuthError(.flowInvalid, "This sign-in is no longer waiting for a redirect.")
        }
        let session = self.session
        let outcome = listener.wait(
            deadline: deadline,
            now: { ctx.clock.now() },
            isCancelled: ctx.isCancelled,
            decide: { request in Self.decide(request, session, now: ctx.clock.now()) }
        )
        switch outcome {
        case .accepted(let request):
            return redeem(request.parameters, ctx)
        case .stopped:
            return .ended(
                NativeAuthError(
                    .flowInvalid,
                    "The sign-in's start page was requested twice, so another program may have read its address; "
                        + "the sign-in was stopped. Start it again."
                )
            )
        case .cancelled:
            throw NativeAuthError(.cancelled, "The sign-in was cancelled.")
        case .timedOut:
            guard ctx.clock.now() < session.expiresAt else {
                listener.shutdown()
                return .ended(NativeAuthError(.timeout, "The browser sign-in did not complete in time."))
            }
            return Transition(next: .interactive(self), status: .browserPending(pending(ctx)))
        }
    }

    /// The listener's answer to one request. The start page's first fetch is sent on to the authorization URL with
    /// this sign-in's cookie; a second fetch stops the sign-in. The redirect of this sign-in (its path, `state`, and
    /// the cookie) ends the wait; anything else gets an error page and the wait goes on. No page repeats what the
    /// request carried.
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
        guard let state = r.parameters["state"], constantTimeEquals(state, session.state) else {
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
        let failed = r.parameters["error"] != nil
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

    /// The parameters of a redirect URL the app captured: it must be this sign-in's redirect URI.
    static func parameters(of url: String, expecting redirectURI: String) throws(NativeAuthError) -> [String: String] {
        func base(_ s: Substring) -> Substring { s.prefix { $0 != "?" && $0 != "#" } }
        guard url.utf8.count <= 16 * 1024 else {
            throw .invalidArgument("redirect_url: longer than 16 KiB", field: "redirect_url")
        }
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
            let text = url[url.index(after: start)...].prefix { $0 != "#" }
            for (k, v) in FormEncoding.decode(String(text)) ?? [] where parameters[k] == nil { parameters[k] = v }
        }
        return parameters
    }

    /// The authorization response → tokens. Whatever happens, the flow ends here.
    func redeem(_ parameters: [String: String], _ ctx: FlowContext) -> Transition {
        do {
            return .ended(try exchange(parameters, ctx))
        } catch {
            return .ended(error)
        }
    }

    private func exchange(_ parameters: [String: String], _ ctx: FlowContext) throws(NativeAuthError) -> FlowStatus {
        guard let response = ServerAPI.authorizationResponse(parameters) else {
            throw NativeAuthError(.server, "The redirect carried neither a code nor an error.")
        }
        guard let state = response.state, constantTimeEquals(state, session.state) else {
            throw NativeAuthError(.server, "The redirect's state does not match this sign-in; it was refused.")
        }
        // RFC 9207: a provider that says it sends `iss` must, and it must be the issuer (a mix-up defence).
        if let iss = response.issuer {
            guard iss == session.metadata.issuer else {
                throw NativeAuthError(.server, "The redirect came from another issuer (iss); it was refused.")
            }
        } else if session.metadata.sendsIssuerInResponse {
            throw NativeAuthError(.server, "The redirect lacks the issuer (iss) the provider promises to send.")
        }
        switch response {
        case .error(let error, _, _):
            var details = ServerErrorDetails(error: error)
            details.correlationID = ctx.correlationID
            switch error {
            case "access_denied":
                throw NativeAuthError(.accessDenied, "The user or the provider refused the sign-in.", server: details)
            case "interaction_required", "login_required", "consent_required":
                throw NativeAuthError(
                    .interactionRequired,
                    "The provider needs the user to interact (prompt=none cannot complete).",
                    server: details
                )
            default:
                throw NativeAuthError(
                    .server,
                    "The provider refused the sign-in (\(DisplayText.bounded(error))).",
                    server: details
                )
            }
        case .code(let code, _, _):
            let tokens = ctx.tokens
            let r = try ctx.server.redeemCode(
                endpoint: session.metadata.tokenEndpoint,
                code: code,
                verifier: session.verifier,
                redirectURI: session.redirectURI,
                scopes: scopes
            )
            let (account, token) = try tokens.acceptSignIn(
                r,
                requestedScopes: scopes,
                server: ctx.server,
                epoch: ctx.epoch,
                policy: TokenService.IDTokenPolicy(nonce: session.nonce, signature: true)
            )
            ctx.log(.info, "signed in through the browser")
            return .signedIn(account, token)
        }
    }
}
