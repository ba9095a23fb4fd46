import NativeAuthJSON

/// An answer given before an authorize request gets a page (an error page or an error redirect).
struct EarlyAnswer: Error {
    let response: EmulatorResponse
}

/// `GET|POST <authorize endpoint>` (Entra: `/<tenant>/oauth2/v2.0/authorize`; generic: `/oidc/authorize`).
extension BrowserService {
    /// Validates the request, then signs in from the browser session or shows the page `prompt` asks for. A POST
    /// carrying `request` is a page being submitted.
    func authorize(_ call: Call, idp: IdP) -> EmulatorResponse {
        let req = call.request
        let ctx = call.context
        if req.method == "POST", let form = req.form, let id = form["request"] {
            return submit(id, form, ctx, idp: idp)
        }
        let q = call.form
        let cookie = req.cookies[cookieName(idp)]
        let idTokenHint = minter.checkIDTokenHint(q["id_token_hint"], idp: idp, ctx)
        let config = directory.config
        return state.withLock { s -> EmulatorResponse in
            counters.add(.authorizeRequests)
            let seq = requestLog.nextSequence()
            var params = q
            if params["id_token_hint"] != nil { params["id_token_hint"] = "***" }
            let accounts = s.sessionUsers(cookie, idp: idp, directory)
            s.log(
                AuthorizeLogEntry(
                    seq: seq,
                    time: ctx.now,
                    idp: idp,
                    method: req.method,
                    path: req.path,
                    params: params,
                    hadSession: !accounts.isEmpty
                )
            )
            do throws(EarlyAnswer) {
                let sessionID = accounts.isEmpty ? nil : cookie
                var p = try validate(q, idp: idp, action: req.path, seq: seq, sessionID: sessionID, config, ctx, &s)
                return try choosePage(&p, accounts: accounts, idTokenHint: idTokenHint, config, ctx, &s)
            } catch {
                return error.response
            }
        }
    }

    /// The checks before any page: client, redirect URI (an error page: nothing can be sent back), then response
    /// mode, response type, PKCE and scope (an error sent to the redirect URI).
    private func validate(
        _ q: [String: String],
        idp: IdP,
        action: String,
        seq: Int,
        sessionID: String?,
        _ config: EmulatorConfig,
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) throws(EarlyAnswer) -> PendingAuthorization {
        func reject(_ error: BrowserError) -> EarlyAnswer {
            let message = error.description(idp)
            s.updateAuthorizeLog(seq) { e in
                e.outcome = "rejected"
                e.error = message
            }
            return EarlyAnswer(response: PageRenderer.errorPage(message))
        }
        guard let client = browserClient(idp, q["client_id"], config) else {
            throw reject(.unknownClient(q["client_id"] ?? "", tenant: config.tenantDomain))
        }
        guard let redirectURI = q["redirect_uri"], redirectAllowed(redirectURI, client) else {
            throw reject(.redirectURINotAllowed(q["redirect_uri"] ?? ""))
        }
        let modes = idp == .entra ? ["query", "form_post", "fragment"] : ["query", "form_post"]
        let mode = q["response_mode"] ?? "query"
        let p = PendingAuthorization(
            idp: idp,
            action: action,
            responseIssuer: idp == .oidc ? minter.issuer(.oidc, baseURL: ctx.baseURL) : nil,
            clientID: client.clientID,
            redirectURI: redirectURI,
            responseMode: modes.contains(mode) ? mode : "query",
            state: q["state"],
            nonce: q["nonce"],
            scope: q["scope"] ?? "openid profile offline_access",
            challenge: q["code_challenge"] ?? "",
            loginHint: q["login_hint"],
            prompt: q["prompt"] ?? "",
            expires: ctx.now + 900,
            logSeq: seq,
            sessionID: sessionID
        )
        func refuse(_ error: BrowserError) -> EarlyAnswer {
            EarlyAnswer(response: redirectWithError(p, error, &s))
        }
        guard modes.contains(mode) else { throw refuse(.unsupportedResponseMode(mode)) }
        guard q["response_type"] == "code" else { throw refuse(.unsupportedResponseType(q["response_type"] ?? "")) }
        guard !p.challenge.isEmpty, (q["code_challenge_method"] ?? "plain") == "S256" else {
            throw refuse(.pkceRequired)
        }
        if let problem = scopeProblem(idp, p.scope, client, config) { throw refuse(problem) }
        return p
    }

    /// What `prompt` asks for: a silent answer (`none`), single sign-on, or the first page.
    private func choosePage(
        _ p: inout PendingAuthorization,
        accounts: [String],
        idTokenHint: (String, JSONValue?),
        _ config: EmulatorConfig,
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) throws(EarlyAnswer) -> EmulatorResponse {
        let id = Ids.token("AR.", bytes: 18)
        // login_hint, else an id_token_hint (OpenID Connect Core §3.1.2.1): the account it names.
        var hinted = resolveHint(p.loginHint, idp: p.idp)
        var hasHint = !(p.loginHint ?? "").isEmpty
        if !hasHint, idTokenHint.0 != "absent" {
            hasHint = true
            hinted = idTokenHint.1.flatMap { hintUser($0, idp: p.idp) }
        }
        switch p.prompt {
        case "none":
            let user = try silentUser(p, accounts: accounts, hasHint: hasHint, hinted: hinted, &s)
            return authenticated(id, p, user, fresh: false, ctx, &s)
        case "login":
            p.step = .signIn
        case "select_account":
            p.step = accounts.isEmpty ? .signIn : .selectAccount
        case "create":
            p.step = config.signUpEnabled ? .signUp : .signIn
        case "", "consent":
            // Single sign-on: the hinted account, or the browser's only account, needs no page.
            let sso = hasHint ? hinted.flatMap { accounts.contains($0) ? $0 : nil } : accounts.first
            if let sso, hasHint || accounts.count == 1 { return authenticated(id, p, sso, fresh: false, ctx, &s) }
            p.step = !hasHint && accounts.count > 1 ? .selectAccount : .signIn
        default:
            return redirectWithError(p, .invalidPrompt(p.prompt), &s)
        }
        s.pending[id] = p
        let notice =
            p.prompt == "create" && !config.signUpEnabled
            ? "Self-service sign-up is not enabled for this application." : nil
        return showStep(id, p, error: notice, &s)
    }

    /// `prompt=none`: the one account the browser session (and the hint) allows, else an error redirect.
    private func silentUser(
        _ p: PendingAuthorization,
        accounts: [String],
        hasHint: Bool,
        hinted: String?,
        _ s: inout BrowserState
    ) throws(EarlyAnswer) -> String {
        guard !accounts.isEmpty else { throw EarlyAnswer(response: redirectWithError(p, .noUserSignedIn, &s)) }
        if hasHint {
            guard let h = hinted, accounts.contains(h) else {
                throw EarlyAnswer(response: redirectWithError(p, .loginHintNotSignedIn, &s))
            }
            return h
        }
        guard accounts.count == 1 else {
            throw EarlyAnswer(response: redirectWithError(p, .severalUsersSignedIn, &s))
        }
        return accounts[0]
    }

    /// The page of the step `p` is at, for request `id` (the authorize log notes it).
    func showStep(
        _ id: String,
        _ p: PendingAuthorization,
        error: String? = nil,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        s.updateAuthorizeLog(p.logSeq) { e in
            e.outcome = "page"
            e.page = p.step.rawValue
        }
        let config = directory.config
        let page: AuthorizePage
        switch p.step {
        case .signIn:
            let prefill = p.username ?? resolveHint(p.loginHint, idp: p.idp) ?? p.loginHint ?? ""
            page = .signIn(prefill: prefill, offerSignUp: config.signUpEnabled)
        case .emailCode: page = .code(step: p.step, message: "We sent a code to \(p.username ?? "your email address").")
        case .mfaCode: page = .code(step: p.step, message: "We sent a verification code to your security email.")
        case .verifyEmail:
            page = .code(step: p.step, message: "We sent a code to \(p.newUser?.email ?? "your email address").")
        case .selectAccount:
            let accounts = s.sessionUsers(p.sessionID, idp: p.idp, directory)
            page = .selectAccount(accounts.map { ($0, directory.user($0)?.displayName ?? $0) })
        case .consent:
            page = .consent(account: p.authenticated ?? "", scopes: p.scope.split(separator: " ").map(String.init))
        case .signUp:
            page = .signUp(
                email: p.draft["email"] ?? resolveHint(p.loginHint, idp: p.idp) ?? p.loginHint ?? "",
                askPassword: config.signUpMethod == "email_password",
                attributes: config.signUpAttributes.map { ($0.name, $0.required, p.draft[$0.name] ?? "") }
            )
        }
        return PageRenderer.authorize(page, action: p.action, request: id, error: error, headers: sessionHeaders(p))
    }
}
