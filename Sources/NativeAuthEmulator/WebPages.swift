import Foundation
import NativeAuthCrypto
import NativeAuthJSON

// The browser side of both identity providers: the Entra tenant (`/<tenant>/oauth2/v2.0/authorize`, `…/logout`,
// `/devicelogin`) and the generic OpenID Connect provider (`/oidc/authorize`, `/oidc/logout`, `/oidc/device`). The
// pages' HTML and shape: PageRenderer.swift.
extension Emulator {
    static let sessionCookie = "naemu_session"
    static let oidcSessionCookie = "naemu_oidc_session"

    func cookieName(_ idp: IdP) -> String { idp == .entra ? Self.sessionCookie : Self.oidcSessionCookie }
    func cookiePath(_ idp: IdP) -> String { idp == .entra ? "/" : "/oidc" }

    private func setCookie(_ idp: IdP, _ sid: String) -> (String, String) {
        ("Set-Cookie", "\(cookieName(idp))=\(sid); Path=\(cookiePath(idp)); HttpOnly; SameSite=Lax")
    }

    private func clearCookie(_ idp: IdP) -> (String, String) {
        ("Set-Cookie", "\(cookieName(idp))=; Path=\(cookiePath(idp)); Max-Age=0; HttpOnly; SameSite=Lax")
    }

    /// RFC 8252 §7.3: a loopback redirect URI with any port, with or without a path; otherwise an exact match.
    func redirectAllowed(_ uri: String, _ client: ClientApp) -> Bool {
        if client.redirectURIs.contains(uri) { return true }
        guard let c = URLComponents(string: uri), c.scheme == "http", let host = c.host?.lowercased(), c.fragment == nil
        else { return false }
        return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]"
    }

    /// The client `id` names at `idp`: a tenant application, or the generic provider's one client.
    func browserClient(_ idp: IdP, _ id: String?, _ s: Store) -> ClientApp? {
        guard let id, !id.isEmpty else { return nil }
        switch idp {
        case .entra: return s.client(id)
        case .oidc:
            guard id == s.config.oidc.clientID else { return nil }
            return ClientApp(
                clientID: id,
                name: "OIDC demo (public)",
                isPublic: true,
                nativeAuthEnabled: false,
                redirectURIs: s.config.oidc.redirectURIs,
                consentedScopes: nil
            )
        }
    }

    func errorPage(_ message: String, status: Int = 400) -> EmulatorResponse {
        PageRenderer.errorPage(message, status: status)
    }

    /// The page of the step `p` is at, for request `id`.
    private func showStep(
        _ id: String,
        _ p: PendingAuthorization,
        error: String? = nil,
        _ s: inout Store
    ) -> EmulatorResponse {
        s.updateAuthorizeLog(p.logSeq) { e in
            e.outcome = "page"
            e.page = p.step.rawValue
        }
        let headers = p.sessionID.map { [setCookie(p.idp, $0)] } ?? []
        let page: AuthorizePage
        switch p.step {
        case .signIn:
            let prefill = p.username ?? resolveHint(p.loginHint, idp: p.idp, s) ?? p.loginHint ?? ""
            page = .signIn(prefill: prefill, offerSignUp: s.config.signUpEnabled)
        case .emailCode: page = .code(step: p.step, message: "We sent a code to \(p.username ?? "your email address").")
        case .mfaCode: page = .code(step: p.step, message: "We sent a verification code to your security email.")
        case .verifyEmail:
            page = .code(step: p.step, message: "We sent a code to \(p.newUser?.email ?? "your email address").")
        case .selectAccount:
            page = .selectAccount(
                s.sessionUsers(p.sessionID, idp: p.idp).map { ($0, s.users[$0]?.displayName ?? $0) }
            )
        case .consent:
            page = .consent(account: p.authenticated ?? "", scopes: p.scope.split(separator: " ").map(String.init))
        case .signUp:
            page = .signUp(
                email: p.draft["email"] ?? resolveHint(p.loginHint, idp: p.idp, s) ?? p.loginHint ?? "",
                askPassword: s.config.signUpMethod == "email_password",
                attributes: s.config.signUpAttributes.map { ($0.name, $0.required, p.draft[$0.name] ?? "") }
            )
        }
        return PageRenderer.authorize(page, action: p.action, request: id, error: error, headers: headers)
    }

    // MARK: - Authorization responses

    /// Delivers `pairs` (plus `iss` for the generic provider, RFC 9207) to the client's redirect URI with its
    /// response mode.
    private func respond(
        to p: PendingAuthorization,
        _ pairs: [(String, String)],
        headers: [(String, String)] = []
    ) -> EmulatorResponse {
        var pairs = pairs
        if let iss = p.responseIssuer { pairs.append(("iss", iss)) }
        switch p.responseMode {
        case "form_post":
            return PageRenderer.formPost(to: p.redirectURI, pairs, headers: headers)
        case "fragment":
            return .redirect(p.redirectURI + "#" + Form.query(pairs), headers: headers)
        default:
            return .redirect(
                p.redirectURI + (p.redirectURI.contains("?") ? "&" : "?") + Form.query(pairs),
                headers: headers
            )
        }
    }

    /// An error authorization response (`error`, `error_description`, `error_subcode`?, `state`, `iss`?).
    private func redirectWithError(
        _ p: PendingAuthorization,
        _ browserError: BrowserError,
        _ s: inout Store
    ) -> EmulatorResponse {
        let error = browserError.error
        var pairs = [("error", error), ("error_description", browserError.description(p.idp))]
        if let subcode = browserError.subcode(p.idp) { pairs.append(("error_subcode", subcode)) }
        if let st = p.state { pairs.append(("state", st)) }
        s.updateAuthorizeLog(p.logSeq) { e in
            e.outcome = "error"
            e.error = error
        }
        counters.add(.authorizeErrors)
        return respond(to: p, pairs, headers: p.sessionID.map { [setCookie(p.idp, $0)] } ?? [])
    }

    /// Issues the authorization code for `email` and sends the browser back to the app.
    private func complete(
        _ p: PendingAuthorization,
        email: String,
        _ s: inout Store,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        guard let user = s.users[email] else { return errorPage("The account no longer exists.") }
        let code = Ids.token("AC.", bytes: 32)
        s.authCodes[code] = AuthCodeRecord(
            user: email,
            clientID: p.clientID,
            redirectURI: p.redirectURI,
            challenge: p.challenge,
            scope: p.scope,
            nonce: p.nonce,
            expires: ctx.now + Double(s.config.lifetimes.authCode),
            family: Ids.token("F.", bytes: 9),
            idp: p.idp,
            authTime: p.authTime
        )
        var pairs = [("code", code)]
        if let st = p.state { pairs.append(("state", st)) }
        if p.idp == .entra { pairs.append(("client_info", clientInfo(user))) }
        s.updateAuthorizeLog(p.logSeq) { e in
            e.outcome = "code"
            e.user = email
        }
        counters.add(.authorizationCodesIssued)
        return respond(to: p, pairs, headers: p.sessionID.map { [setCookie(p.idp, $0)] } ?? [])
    }

    /// `email` is signed in (by the pages, or from the browser session when `fresh` is false): records it in the
    /// browser session, then asks for consent (prompt=consent) or completes.
    private func authenticated(
        _ id: String,
        _ pending: PendingAuthorization,
        _ email: String,
        fresh: Bool,
        _ s: inout Store,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        var p = pending
        let existing = p.sessionID.flatMap { s.sessions[$0]?.authTimes[email] }
        p.authTime = fresh ? ctx.now : (existing ?? ctx.now)
        p.sessionID = s.signInToSession(p.sessionID, idp: p.idp, user: email, authTime: p.authTime, counters)
        if !fresh { counters.add(.ssoSignIns) }
        if p.prompt == "consent" {
            p.authenticated = email
            p.step = .consent
            s.pending[id] = p
            return showStep(id, p, &s)
        }
        s.pending.removeValue(forKey: id)
        return complete(p, email: email, &s, ctx)
    }

    // MARK: - Authorize

    /// `GET|POST <authorize endpoint>`: validates the request, then signs in from the browser session or shows the
    /// page `prompt` asks for. A POST carrying `request` is a page being submitted.
    func authorize(_ req: EmulatorRequest, _ ctx: RequestContext, idp: IdP) -> EmulatorResponse {
        if req.method == "POST", let form = req.form, let id = form["request"] {
            return authorizeSubmit(id, form, ctx, idp: idp)
        }
        let q = req.method == "POST" ? (req.form ?? [:]) : req.query
        let cookie = req.cookies[cookieName(idp)]
        let iss = idp == .oidc ? oidcIssuer(ctx) : nil
        let (idTokenHint, idTokenHintClaims) = checkIDTokenHint(q["id_token_hint"], idp: idp, ctx)
        return store.withLock { s -> EmulatorResponse in
            counters.add(.authorizeRequests)
            s.seq += 1
            let seq = s.seq
            var params = q
            if params["id_token_hint"] != nil { params["id_token_hint"] = "***" }
            let accounts = s.sessionUsers(cookie, idp: idp)
            s.authorizeLog.append(
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
            if s.authorizeLog.count > 10_000 { s.authorizeLog.removeFirst(s.authorizeLog.count - 10_000) }
            func reject(_ message: String) -> EmulatorResponse {
                s.updateAuthorizeLog(seq) { e in
                    e.outcome = "rejected"
                    e.error = message
                }
                return errorPage(message)
            }
            guard let client = browserClient(idp, q["client_id"], s) else {
                return reject(BrowserError.unknownClient(q["client_id"] ?? "", tenant: tenantDomain).description(idp))
            }
            guard let redirectURI = q["redirect_uri"], redirectAllowed(redirectURI, client) else {
                return reject(BrowserError.redirectURINotAllowed(q["redirect_uri"] ?? "").description(idp))
            }
            let modes = idp == .entra ? ["query", "form_post", "fragment"] : ["query", "form_post"]
            let mode = q["response_mode"] ?? "query"
            let id = Ids.token("AR.", bytes: 18)
            var p = PendingAuthorization(
                idp: idp,
                action: req.path,
                responseIssuer: iss,
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
                sessionID: accounts.isEmpty ? nil : cookie
            )
            guard modes.contains(mode) else {
                return redirectWithError(p, .unsupportedResponseMode(mode), &s)
            }
            guard q["response_type"] == "code" else {
                return redirectWithError(p, .unsupportedResponseType(q["response_type"] ?? ""), &s)
            }
            guard !p.challenge.isEmpty, (q["code_challenge_method"] ?? "plain") == "S256" else {
                return redirectWithError(p, .pkceRequired, &s)
            }
            if let problem = browserScopeProblem(idp, p.scope, client, s) {
                return redirectWithError(p, problem, &s)
            }
            // login_hint, else an id_token_hint (OpenID Connect Core §3.1.2.1): the account it names.
            var hinted = resolveHint(p.loginHint, idp: idp, s)
            var hasHint = !(p.loginHint ?? "").isEmpty
            if !hasHint, idTokenHint != "absent" {
                hasHint = true
                hinted = idTokenHintClaims.flatMap { hintUser($0, idp: idp, s) }
            }
            switch p.prompt {
            case "none":
                guard !accounts.isEmpty else {
                    return redirectWithError(p, .noUserSignedIn, &s)
                }
                if hasHint {
                    guard let h = hinted, accounts.contains(h) else {
                        return redirectWithError(p, .loginHintNotSignedIn, &s)
                    }
                    return authenticated(id, p, h, fresh: false, &s, ctx)
                }
                guard accounts.count == 1 else {
                    return redirectWithError(p, .severalUsersSignedIn, &s)
                }
                return authenticated(id, p, accounts[0], fresh: false, &s, ctx)
            case "login":
                p.step = .signIn
            case "select_account":
                p.step = accounts.isEmpty ? .signIn : .selectAccount
            case "create":
                p.step = s.config.signUpEnabled ? .signUp : .signIn
            case "", "consent":
                // Single sign-on: the hinted account, or the browser's only account, needs no page.
                let sso = hasHint ? hinted.flatMap { accounts.contains($0) ? $0 : nil } : accounts.first
                if let sso, hasHint || accounts.count == 1 { return authenticated(id, p, sso, fresh: false, &s, ctx) }
                p.step = !hasHint && accounts.count > 1 ? .selectAccount : .signIn
            default:
                return redirectWithError(p, .invalidPrompt(p.prompt), &s)
            }
            s.pending[id] = p
            let notice =
                p.prompt == "create" && !s.config.signUpEnabled
                ? "Self-service sign-up is not enabled for this application." : nil
            return showStep(id, p, error: notice, &s)
        }
    }

    /// A page posted back: the next step, or the authorization response.
    private func authorizeSubmit(
        _ id: String,
        _ form: [String: String],
        _ ctx: RequestContext,
        idp: IdP
    ) -> EmulatorResponse {
        store.withLock { s -> EmulatorResponse in
            guard var p = s.pending[id], p.expires > ctx.now, p.idp == idp else {
                return errorPage("This sign-in page has expired. Go back to the application and start again.")
            }
            let action = form["action"] ?? ""
            switch p.step {
            case .signIn:
                if action == "create", s.config.signUpEnabled {
                    p.step = .signUp
                    p.draft = ["email": (form["username"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()]
                    s.pending[id] = p
                    return showStep(id, p, &s)
                }
                let email = (form["username"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
                p.username = email
                s.pending[id] = p
                guard let user = s.users[email] else {
                    return showStep(id, p, error: "We couldn't find an account with that email address.", &s)
                }
                if action == "send_code" || user.password == nil && (form["password"] ?? "").isEmpty {
                    p.code = s.sendCode(to: email, purpose: "web_sign_in", now: ctx.now, counters)
                    p.step = .emailCode
                    s.pending[id] = p
                    return showStep(id, p, &s)
                }
                guard let stored = user.password, constantTimeStringEquals(stored, form["password"] ?? "") else {
                    return showStep(id, p, error: "Your account or password is incorrect.", &s)
                }
                return secondFactorOrDone(id, p, user, &s, ctx)
            case .emailCode, .mfaCode:
                guard let code = p.code, let entered = form["code"],
                    constantTimeStringEquals(code, entered.trimmingCharacters(in: .whitespaces)),
                    let email = p.username, let user = s.users[email]
                else { return showStep(id, p, error: "That code didn't work. Check the code and try again.", &s) }
                p.code = nil
                if p.step == .mfaCode { return authenticated(id, p, email, fresh: true, &s, ctx) }
                return secondFactorOrDone(id, p, user, &s, ctx)
            case .selectAccount:
                if action == "use_another_account" {
                    p.step = .signIn
                    s.pending[id] = p
                    return showStep(id, p, &s)
                }
                guard let email = form["account"]?.lowercased(), s.sessionUsers(p.sessionID, idp: idp).contains(email)
                else { return showStep(id, p, error: "Pick one of the accounts, or use another account.", &s) }
                return authenticated(id, p, email, fresh: false, &s, ctx)
            case .consent:
                guard let email = p.authenticated else { return errorPage("The account no longer exists.") }
                s.pending.removeValue(forKey: id)
                if action == "accept" || action.isEmpty { return complete(p, email: email, &s, ctx) }
                return redirectWithError(p, .consentDeclined, &s)
            case .signUp:
                if action == "back" {
                    p.step = .signIn
                    s.pending[id] = p
                    return showStep(id, p, &s)
                }
                return signUpSubmit(id, p, form, &s, ctx)
            case .verifyEmail:
                guard let code = p.code, let entered = form["code"],
                    constantTimeStringEquals(code, entered.trimmingCharacters(in: .whitespaces)),
                    let user = p.newUser
                else { return showStep(id, p, error: "That code didn't work. Check the code and try again.", &s) }
                guard s.users[user.email] == nil else {
                    p.step = .signUp
                    p.code = nil
                    s.pending[id] = p
                    return showStep(id, p, error: "An account with this email address already exists.", &s)
                }
                s.users[user.email] = user
                counters.add(.usersSignedUp)
                return authenticated(id, p, user.email, fresh: true, &s, ctx)
            }
        }
    }

    /// After a first factor: a code to the user's strong method when MFA applies, else signed in.
    private func secondFactorOrDone(
        _ id: String,
        _ pending: PendingAuthorization,
        _ user: UserRecord,
        _ s: inout Store,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        guard user.mfaRequired, let mfa = user.mfaEmail else {
            return authenticated(id, pending, user.email, fresh: true, &s, ctx)
        }
        var p = pending
        p.step = .mfaCode
        p.code = s.sendCode(to: mfa, purpose: "web_mfa", now: ctx.now, counters)
        s.pending[id] = p
        return showStep(id, p, &s)
    }

    /// The sign-up page posted: checks the address, password and attributes, then sends a code to the address.
    private func signUpSubmit(
        _ id: String,
        _ pending: PendingAuthorization,
        _ form: [String: String],
        _ s: inout Store,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        var p = pending
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        var attributes: [String: String] = [:]
        for def in s.config.signUpAttributes {
            let v = (form["attr_" + def.name] ?? "").trimmingCharacters(in: .whitespaces)
            if !v.isEmpty { attributes[def.name] = v }
        }
        p.draft = attributes
        p.draft["email"] = email
        s.pending[id] = p
        guard isValidEmail(email) else { return showStep(id, p, error: "Enter a valid email address.", &s) }
        guard s.users[email] == nil else {
            return showStep(id, p, error: "An account with this email address already exists.", &s)
        }
        var password: String? = nil
        if s.config.signUpMethod == "email_password" {
            let pw = form["password"] ?? ""
            guard !pw.isEmpty else { return showStep(id, p, error: "Enter a password.", &s) }
            if let problem = passwordProblem(pw, user: nil, s) {
                return showStep(id, p, error: passwordPolicySuberrors[problem.suberror ?? ""] ?? problem.text, &s)
            }
            password = pw
        }
        let missing = s.config.signUpAttributes.filter { $0.required && attributes[$0.name] == nil }.map(\.name)
        guard missing.isEmpty else {
            return showStep(id, p, error: "Fill in: \(missing.joined(separator: ", ")).", &s)
        }
        let bad = invalidAttributes(attributes, s)
        guard bad.isEmpty else { return showStep(id, p, error: "Not valid: \(bad.joined(separator: ", ")).", &s) }
        p.newUser = UserRecord(
            email: email,
            password: password,
            displayName: attributes["displayName"] ?? email,
            givenName: attributes["givenName"],
            surname: attributes["surname"],
            attributes: attributes,
            objectID: Ids.uuid(),
            mfaEmail: nil,
            mfaRequired: false
        )
        p.code = s.sendCode(to: email, purpose: "web_sign_up", now: ctx.now, counters)
        p.step = .verifyEmail
        s.pending[id] = p
        return showStep(id, p, &s)
    }

    // MARK: - End session

    /// What an `id_token_hint` is worth: "absent", "invalid", or "valid" (our signature and issuer, a client of this
    /// provider as audience) with its claims; an expired hint is still valid, as OpenID Connect RP-Initiated Logout
    /// allows.
    private func checkIDTokenHint(_ token: String?, idp: IdP, _ ctx: RequestContext) -> (String, JSONValue?) {
        guard let token, !token.isEmpty else { return ("absent", nil) }
        let key = idp == .entra ? signingKey : oidcSigningKey
        guard let jwt = try? JWT(decoding: token),
            jwt.header["kid"]?.stringValue == (idp == .entra ? kid : oidcKid), let pub = try? key.publicKey(),
            jwt.verify(with: pub),
            jwt.claims["iss"]?.stringValue == (idp == .entra ? "\(ctx.baseURL)/\(tenantID)/v2.0" : oidcIssuer(ctx))
        else { return ("invalid", nil) }
        return ("valid", jwt.claims)
    }

    /// The account an ID token's claims name (Entra: `oid`; generic: the pairwise `sub`).
    private func hintUser(_ claims: JSONValue, idp: IdP, _ s: Store) -> String? {
        idp == .entra
            ? s.users.values.first { $0.objectID == claims["oid"]?.stringValue }?.email
            : s.users.values.first { oidcSubject($0) == claims["sub"]?.stringValue }?.email
    }

    /// `GET|POST <end_session_endpoint>`: signs the account the hints name (`logout_hint`, else `id_token_hint`) out
    /// of every browser session, or else the whole session of the request's cookie; logs the call
    /// (`GET /_emulator/end_session_log`); redirects to an allowed `post_logout_redirect_uri` (with `state`), or
    /// shows the signed-out page. Refresh tokens are not revoked (as with Entra).
    func endSession(_ req: EmulatorRequest, _ ctx: RequestContext, idp: IdP) -> EmulatorResponse {
        let q = req.method == "POST" ? (req.form ?? [:]) : req.query
        let cookie = req.cookies[cookieName(idp)]
        let (hintStatus, hintClaims) = checkIDTokenHint(q["id_token_hint"], idp: idp, ctx)
        return store.withLock { s -> EmulatorResponse in
            counters.add(.endSessionRequests)
            s.seq += 1
            var params = q
            if params["id_token_hint"] != nil { params["id_token_hint"] = "***" }
            var status = hintStatus
            let aud = hintClaims?["aud"]?.stringValue
            var hintUser: String? = nil
            if let c = hintClaims {
                hintUser = self.hintUser(c, idp: idp, s)
                if browserClient(idp, aud, s) == nil { status = "invalid" }
            }
            let expired = (hintClaims?["exp"]?.doubleValue ?? .infinity) <= ctx.now
            var entry = EndSessionLogEntry(
                seq: s.seq,
                time: ctx.now,
                idp: idp,
                method: req.method,
                path: req.path,
                params: params,
                idTokenHint: status,
                idTokenHintExpired: status == "valid" && expired,
                idTokenHintUser: status == "valid" ? hintUser : nil,
                logoutHintUser: resolveHint(q["logout_hint"], idp: idp, s),
                hadSession: !s.sessionUsers(cookie, idp: idp).isEmpty,
                signedOut: [],
                outcome: "page",
                redirect: nil
            )
            func finish(_ r: EmulatorResponse) -> EmulatorResponse {
                s.endSessionLog.append(entry)
                if s.endSessionLog.count > 10_000 { s.endSessionLog.removeFirst(s.endSessionLog.count - 10_000) }
                return r
            }
            var client: ClientApp? = nil
            if let id = q["client_id"], !id.isEmpty {
                guard let c = browserClient(idp, id, s) else {
                    entry.outcome = "error"
                    return finish(errorPage(BrowserError.unknownClientID(id)))
                }
                guard status != "valid" || aud == id else {
                    entry.outcome = "error"
                    return finish(errorPage(BrowserError.idTokenHintOfAnotherClient(id)))
                }
                client = c
            } else if status == "valid" {
                client = browserClient(idp, aud, s)
            }
            // Who signs out.
            if let target = entry.logoutHintUser ?? entry.idTokenHintUser {
                if s.endBrowserSessions(of: target, idp: idp) > 0 { entry.signedOut = [target] }
            } else if let cookie, let session = s.sessions[cookie], session.idp == idp {
                entry.signedOut = session.users
                s.sessions.removeValue(forKey: cookie)
            }
            let headers = cookie != nil && s.sessionUsers(cookie, idp: idp).isEmpty ? [clearCookie(idp)] : []
            if let target = q["post_logout_redirect_uri"], !target.isEmpty {
                let allowed =
                    client.map { redirectAllowed(target, $0) }
                    ?? (idp == .entra && s.config.clients.contains { redirectAllowed(target, $0) })
                if allowed {
                    var url = target
                    if let st = q["state"] { url += (url.contains("?") ? "&" : "?") + Form.query([("state", st)]) }
                    entry.outcome = "redirect"
                    entry.redirect = url
                    return finish(.redirect(url, headers: headers))
                }
                // The generic provider redirects only for an identified client (client_id or id_token_hint).
                if idp == .entra || client != nil {
                    entry.outcome = "error"
                    return finish(
                        errorPage(BrowserError.postLogoutRedirectURINotAllowed.description(idp))
                    )
                }
            }
            return finish(PageRenderer.signedOut(headers: headers))
        }
    }

    // MARK: - Device code page

    /// The verification page of the device flow (`/devicelogin`, `/oidc/device`): a user code (prefilled from the
    /// `user_code` query parameter), then the account's email and password; or deny.
    func devicePage(_ req: EmulatorRequest, _ ctx: RequestContext, idp: IdP) -> EmulatorResponse {
        let form = req.method == "POST" ? (req.form ?? [:]) : req.query
        func show(_ error: String?) -> EmulatorResponse {
            PageRenderer.deviceCode(action: req.path, userCode: form["user_code"] ?? "", error: error)
        }
        guard req.method == "POST" else { return show(nil) }
        if form["action"] == "deny" {
            guard approveDevice(userCode: form["user_code"] ?? "", email: nil, deny: true) else {
                return show("That code is not valid or has expired.")
            }
            return PageRenderer.deviceDenied
        }
        let email = (form["username"] ?? "").lowercased()
        let ok = store.withLock { s -> Bool in
            guard let u = s.users[email], let pw = u.password else { return false }
            return constantTimeStringEquals(pw, form["password"] ?? "")
        }
        guard ok else { return show("Your account or password is incorrect.") }
        guard approveDevice(userCode: form["user_code"] ?? "", email: email, deny: false) else {
            return show("That code is not valid or has expired.")
        }
        return PageRenderer.deviceDone
    }

    func indexPage(_ ctx: RequestContext) -> EmulatorResponse {
        PageRenderer.index(config, baseURL: ctx.baseURL, oidcIssuer: oidcIssuer(ctx))
    }
}
