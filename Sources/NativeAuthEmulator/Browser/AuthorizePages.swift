import NativeAuthJSON

/// The authorize pages posted back (each carries the hidden `request`), and the authorization responses.
extension BrowserService {
    /// A page posted back: the next step, or the authorization response.
    func submit(_ id: String, _ form: [String: String], _ ctx: RequestContext, idp: IdP) -> EmulatorResponse {
        state.withLock { s -> EmulatorResponse in
            guard let p = s.pending[id], p.expires > ctx.now, p.idp == idp else {
                return PageRenderer.errorPage(
                    "This sign-in page has expired. Go back to the application and start again."
                )
            }
            let action = form["action"] ?? ""
            switch p.step {
            case .signIn: return signInSubmitted(id, p, form, action: action, ctx, &s)
            case .emailCode, .mfaCode: return codeSubmitted(id, p, form, ctx, &s)
            case .selectAccount:
                if action == "use_another_account" { return show(id, p, step: .signIn, &s) }
                guard let email = form["account"]?.lowercased(),
                    s.sessionUsers(p.sessionID, idp: idp, directory).contains(email)
                else { return showStep(id, p, error: "Pick one of the accounts, or use another account.", &s) }
                return authenticated(id, p, email, fresh: false, ctx, &s)
            case .consent:
                guard let email = p.authenticated else {
                    return PageRenderer.errorPage("The account no longer exists.")
                }
                s.pending.removeValue(forKey: id)
                if action == "accept" || action.isEmpty { return complete(p, email: email, ctx, &s) }
                return redirectWithError(p, .consentDeclined, &s)
            case .signUp:
                if action == "back" { return show(id, p, step: .signIn, &s) }
                return signUpSubmitted(id, p, form, ctx, &s)
            case .verifyEmail: return newAddressVerified(id, p, form, ctx, &s)
            }
        }
    }

    /// Moves `p` to `step` and shows that page.
    private func show(
        _ id: String,
        _ pending: PendingAuthorization,
        step: BrowserStep,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        var p = pending
        p.step = step
        s.pending[id] = p
        return showStep(id, p, &s)
    }

    /// The sign-in page: create an account, email a code, or check the password.
    private func signInSubmitted(
        _ id: String,
        _ pending: PendingAuthorization,
        _ form: [String: String],
        action: String,
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        var p = pending
        let email = (form["username"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let config = directory.config
        if action == "create", config.signUpEnabled {
            p.draft = ["email": email]
            return show(id, p, step: .signUp, &s)
        }
        p.username = email
        s.pending[id] = p
        guard let user = directory.user(email) else {
            return showStep(id, p, error: "We couldn't find an account with that email address.", &s)
        }
        if action == "send_code" || user.password == nil && (form["password"] ?? "").isEmpty {
            p.code = outbox.send(to: email, purpose: "web_sign_in", length: config.otpLength, now: ctx.now)
            return show(id, p, step: .emailCode, &s)
        }
        guard let stored = user.password, constantTimeStringEquals(stored, form["password"] ?? "") else {
            return showStep(id, p, error: "Your account or password is incorrect.", &s)
        }
        return secondFactorOrDone(id, p, user, ctx, &s)
    }

    /// The email or MFA code page.
    private func codeSubmitted(
        _ id: String,
        _ pending: PendingAuthorization,
        _ form: [String: String],
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        var p = pending
        guard let code = p.code, let entered = form["code"],
            constantTimeStringEquals(code, entered.trimmingCharacters(in: .whitespaces)),
            let email = p.username, let user = directory.user(email)
        else { return showStep(id, p, error: "That code didn't work. Check the code and try again.", &s) }
        p.code = nil
        if p.step == .mfaCode { return authenticated(id, p, email, fresh: true, ctx, &s) }
        return secondFactorOrDone(id, p, user, ctx, &s)
    }

    /// After a first factor: a code to the user's strong method when MFA applies, else signed in.
    private func secondFactorOrDone(
        _ id: String,
        _ pending: PendingAuthorization,
        _ user: UserRecord,
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        guard user.mfaRequired, let mfa = (user.defaultStrongMethod ?? user.strongMethods.first)?.target else {
            return authenticated(id, pending, user.email, fresh: true, ctx, &s)
        }
        var p = pending
        p.code = outbox.send(to: mfa, purpose: "web_mfa", length: directory.config.otpLength, now: ctx.now)
        return show(id, p, step: .mfaCode, &s)
    }

    /// The sign-up page: checks the address, password and attributes, then sends a code to the address.
    private func signUpSubmitted(
        _ id: String,
        _ pending: PendingAuthorization,
        _ form: [String: String],
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        var p = pending
        let config = directory.config
        let email = (form["email"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        var attributes: [String: String] = [:]
        for def in config.signUpAttributes {
            let v = (form["attr_" + def.name] ?? "").trimmingCharacters(in: .whitespaces)
            if !v.isEmpty { attributes[def.name] = v }
        }
        p.draft = attributes
        p.draft["email"] = email
        s.pending[id] = p
        var password: String? = nil
        if let problem = signUpProblem(email, form, attributes, config, password: &password) {
            return showStep(id, p, error: problem, &s)
        }
        p.newUser = AccountPolicy.newUser(email: email, password: password, attributes: attributes)
        p.code = outbox.send(to: email, purpose: "web_sign_up", length: config.otpLength, now: ctx.now)
        return show(id, p, step: .verifyEmail, &s)
    }

    /// What the sign-up page must say is wrong, if anything; else the password to set (email+password sign-up).
    private func signUpProblem(
        _ email: String,
        _ form: [String: String],
        _ attributes: [String: String],
        _ config: EmulatorConfig,
        password: inout String?
    ) -> String? {
        guard isValidEmail(email) else { return "Enter a valid email address." }
        guard directory.user(email) == nil else { return "An account with this email address already exists." }
        if config.signUpMethod == "email_password" {
            let pw = form["password"] ?? ""
            guard !pw.isEmpty else { return "Enter a password." }
            if let problem = AccountPolicy.passwordProblem(pw, user: nil, config) {
                return passwordPolicySuberrors[problem.suberror ?? ""] ?? problem.text
            }
            password = pw
        }
        let missing = config.signUpAttributes.filter { $0.required && attributes[$0.name] == nil }.map(\.name)
        guard missing.isEmpty else { return "Fill in: \(missing.joined(separator: ", "))." }
        let bad = AccountPolicy.invalidAttributes(attributes, config)
        guard bad.isEmpty else { return "Not valid: \(bad.joined(separator: ", "))." }
        return nil
    }

    /// The new address's code page: the account is created and signed in.
    private func newAddressVerified(
        _ id: String,
        _ pending: PendingAuthorization,
        _ form: [String: String],
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        var p = pending
        guard let code = p.code, let entered = form["code"],
            constantTimeStringEquals(code, entered.trimmingCharacters(in: .whitespaces)),
            let user = p.newUser
        else { return showStep(id, p, error: "That code didn't work. Check the code and try again.", &s) }
        guard directory.addUser(user, for: user.email) else {
            p.step = .signUp
            p.code = nil
            s.pending[id] = p
            return showStep(id, p, error: "An account with this email address already exists.", &s)
        }
        counters.add(.usersSignedUp)
        return authenticated(id, p, user.email, fresh: true, ctx, &s)
    }

    // MARK: - Authorization responses

    /// `email` is signed in (by the pages, or from the browser session when `fresh` is false): records it in the
    /// browser session, then asks for consent (prompt=consent) or completes.
    func authenticated(
        _ id: String,
        _ pending: PendingAuthorization,
        _ email: String,
        fresh: Bool,
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        var p = pending
        let existing = p.sessionID.flatMap { s.sessions[$0]?.authTimes[email] }
        p.authTime = fresh ? ctx.now : (existing ?? ctx.now)
        let session = s.signIn(toSession: p.sessionID, idp: p.idp, user: email, authTime: p.authTime)
        p.sessionID = session.id
        if session.started { counters.add(.browserSessionsStarted) }
        if !fresh { counters.add(.ssoSignIns) }
        if p.prompt == "consent" {
            p.authenticated = email
            return show(id, p, step: .consent, &s)
        }
        s.pending.removeValue(forKey: id)
        return complete(p, email: email, ctx, &s)
    }

    /// Issues the authorization code for `email` and sends the browser back to the app.
    private func complete(
        _ p: PendingAuthorization,
        email: String,
        _ ctx: RequestContext,
        _ s: inout BrowserState
    ) -> EmulatorResponse {
        guard let user = directory.user(email) else { return PageRenderer.errorPage("The account no longer exists.") }
        let code = Ids.token("AC.", bytes: 32)
        let record = AuthCodeRecord(
            user: email,
            clientID: p.clientID,
            redirectURI: p.redirectURI,
            challenge: p.challenge,
            scope: p.scope,
            nonce: p.nonce,
            expires: ctx.now + Double(directory.config.lifetimes.authCode),
            family: Ids.token("F.", bytes: 9),
            idp: p.idp,
            authTime: p.authTime
        )
        grants.withLock { $0.authCodes[code] = record }
        var pairs = [("code", code)]
        if let st = p.state { pairs.append(("state", st)) }
        if p.idp == .entra { pairs.append(("client_info", minter.clientInfo(user))) }
        s.updateAuthorizeLog(p.logSeq) { e in
            e.outcome = "code"
            e.user = email
        }
        counters.add(.authorizationCodesIssued)
        return respond(to: p, pairs, headers: sessionHeaders(p))
    }

    /// An error authorization response (`error`, `error_description`, `error_subcode`?, `state`, `iss`?).
    func redirectWithError(
        _ p: PendingAuthorization,
        _ browserError: BrowserError,
        _ s: inout BrowserState
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
        return respond(to: p, pairs, headers: sessionHeaders(p))
    }

    /// Delivers `pairs` (plus `iss` for the generic provider, RFC 9207) to the client's redirect URI with its
    /// response mode.
    private func respond(
        to p: PendingAuthorization,
        _ pairs: [(String, String)],
        headers: [(String, String)]
    ) -> EmulatorResponse {
        var pairs = pairs
        if let iss = p.responseIssuer { pairs.append(("iss", iss)) }
        switch p.responseMode {
        case "form_post": return PageRenderer.formPost(to: p.redirectURI, pairs, headers: headers)
        case "fragment": return .redirect(p.redirectURI + "#" + Form.query(pairs), headers: headers)
        default:
            return .redirect(
                p.redirectURI + (p.redirectURI.contains("?") ? "&" : "?") + Form.query(pairs),
                headers: headers
            )
        }
    }
}
