import Foundation
import NativeAuthCrypto
import NativeAuthJSON

/// The browser side: the authorize page (auth code + PKCE), end-session, the device-code page, and an index page.
extension Emulator {
    static let sessionCookie = "naemu_session"

    /// RFC 8252 §7.3: a loopback redirect URI with any port, with or without a path; otherwise an exact match.
    func redirectAllowed(_ uri: String, _ client: ClientApp) -> Bool {
        if client.redirectURIs.contains(uri) { return true }
        guard let c = URLComponents(string: uri), c.scheme == "http", let host = c.host?.lowercased(), c.fragment == nil
        else { return false }
        return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]"
    }

    private func page(
        _ title: String,
        _ body: String,
        status: Int = 200,
        headers: [(String, String)] = []
    ) -> EmulatorResponse {
        let html = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" \
            content="width=device-width,initial-scale=1">
            <title>\(htmlEscape(title)) · NativeAuth emulator</title>
            <style>
            body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f3f4f6;margin:0;color:#1f2937}
            main{max-width:420px;margin:8vh auto;background:#fff;border-radius:12px;box-shadow:0 2px 16px \
            #0002;padding:32px 36px}
            h1{font-size:1.35rem;margin:0 0 4px}.sub{color:#6b7280;margin:0 0 20px;font-size:.9rem}
            label{display:block;font-size:.85rem;margin:14px 0 4px}
            input{width:100%;box-sizing:border-box;padding:9px 10px;border:1px solid \
            #d1d5db;border-radius:6px;font-size:1rem}
            button{margin-top:18px;padding:9px \
            18px;border:0;border-radius:6px;background:#2563eb;color:#fff;font-size:1rem;cursor:pointer}
            button.link{background:none;color:#2563eb;padding:0;margin-left:14px}
            .err{background:#fef2f2;color:#b91c1c;border-radius:6px;padding:8px 10px;font-size:.9rem}
            .note{color:#6b7280;font-size:.8rem;margin-top:22px}
            code{background:#f3f4f6;padding:1px 4px;border-radius:4px}
            </style></head>
            <body><main>\(body)<p class="note">NativeAuth emulator — a local stand-in for Microsoft Entra External \
            ID. Not a real identity provider.</p></main></body></html>
            """
        return .html(html, status: status, headers: headers)
    }

    private func errorPage(_ message: String, status: Int = 400) -> EmulatorResponse {
        page(
            "Sign-in error",
            "<h1>Sorry, we can't sign you in</h1><p class=\"err\">\(htmlEscape(message))</p>",
            status: status
        )
    }

    private func redirectWithError(
        _ p: PendingAuthorization,
        _ error: String,
        _ description: String
    ) -> EmulatorResponse {
        var pairs = [("error", error), ("error_description", description)]
        if let st = p.state { pairs.append(("state", st)) }
        return respond(to: p, pairs)
    }

    /// Delivers `pairs` to the client's redirect URI with its response mode.
    private func respond(
        to p: PendingAuthorization,
        _ pairs: [(String, String)],
        headers: [(String, String)] = []
    ) -> EmulatorResponse {
        switch p.responseMode {
        case "form_post":
            let inputs = pairs.map {
                "<input type=\"hidden\" name=\"\(htmlEscape($0.0))\" value=\"\(htmlEscape($0.1))\">"
            }.joined()
            return .html(
                """
                <!doctype html><html><head><meta charset="utf-8"><title>Working…</title></head>
                <body onload="document.forms[0].submit()"><form method="post" \
                action="\(htmlEscape(p.redirectURI))">\(inputs)
                <noscript><button type="submit">Continue</button></noscript></form></body></html>
                """,
                headers: headers
            )
        case "fragment":
            return .redirect(p.redirectURI + "#" + Form.query(pairs), headers: headers)
        default:
            return .redirect(
                p.redirectURI + (p.redirectURI.contains("?") ? "&" : "?") + Form.query(pairs),
                headers: headers
            )
        }
    }

    private func signInForm(_ id: String, _ p: PendingAuthorization, error: String? = nil) -> EmulatorResponse {
        let err = error.map { "<p class=\"err\">\(htmlEscape($0))</p>" } ?? ""
        if p.awaitingMFA || p.code != nil {
            let what =
                p.awaitingMFA
                ? "We sent a verification code to your security email."
                : "We sent a code to \(htmlEscape(p.username ?? ""))."
            return page(
                "Enter code",
                """
                <h1>Enter code</h1><p class="sub">\(what)</p>\(err)
                <form method="post"><input type="hidden" name="request" value="\(htmlEscape(id))">
                <label for="code">Code</label><input id="code" name="code" autocomplete="one-time-code" \
                inputmode="numeric" autofocus>
                <button type="submit">Verify</button></form>
                """
            )
        }
        return page(
            "Sign in",
            """
            <h1>Sign in</h1><p class="sub">to continue to the application</p>\(err)
            <form method="post"><input type="hidden" name="request" value="\(htmlEscape(id))">
            <label for="username">Email</label><input id="username" name="username" type="email" \
            autocomplete="username" value="\(htmlEscape(p.username ?? p.loginHint ?? ""))" autofocus>
            <label for="password">Password</label><input id="password" name="password" type="password" \
            autocomplete="current-password">
            <button type="submit">Sign in</button><button class="link" type="submit" name="action" \
            value="send_code">Email me a code instead</button>
            </form>
            """
        )
    }

    // MARK: authorize

    func authorize(_ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        if req.method == "POST", let form = req.form, let id = form["request"] {
            return authorizeSubmit(id, form, req, ctx)
        }
        let q = req.method == "POST" ? (req.form ?? [:]) : req.query
        return store.withLock { s -> EmulatorResponse in
            guard let clientID = q["client_id"], let client = s.client(clientID) else {
                return errorPage(
                    "AADSTS700016: Application with identifier '\(q["client_id"] ?? "")' was not found in the "
                        + "directory '\(tenantDomain)'."
                )
            }
            guard let redirectURI = q["redirect_uri"], redirectAllowed(redirectURI, client) else {
                return errorPage(
                    "AADSTS50011: The redirect URI '\(q["redirect_uri"] ?? "")' specified in the request does not "
                        + "match the redirect URIs configured for the application."
                )
            }
            let mode = q["response_mode"] ?? "query"
            var p = PendingAuthorization(
                clientID: clientID,
                redirectURI: redirectURI,
                responseMode: ["query", "form_post", "fragment"].contains(mode) ? mode : "query",
                state: q["state"],
                nonce: q["nonce"],
                scope: q["scope"] ?? "openid profile offline_access",
                challenge: q["code_challenge"] ?? "",
                loginHint: q["login_hint"],
                expires: ctx.now + 900
            )
            guard ["query", "form_post", "fragment"].contains(mode) else {
                return redirectWithError(p, "invalid_request", "AADSTS900144: Unsupported response_mode '\(mode)'.")
            }
            guard q["response_type"] == "code" else {
                return redirectWithError(
                    p,
                    "unsupported_response_type",
                    "AADSTS70005: response_type '\(q["response_type"] ?? "")' is not enabled for the client."
                )
            }
            guard !p.challenge.isEmpty, (q["code_challenge_method"] ?? "plain") == "S256" else {
                return redirectWithError(
                    p,
                    "invalid_request",
                    "AADSTS9002325: Proof Key for Code Exchange with the S256 method is required."
                )
            }
            do throws(ServiceError) { _ = try resolveScopes(p.scope, client: client, s) } catch {
                return redirectWithError(p, error.error, error.text)
            }
            let prompt = q["prompt"] ?? ""
            if prompt == "none" {
                guard let sid = req.cookies[Self.sessionCookie], let email = s.sessions[sid], s.users[email] != nil
                else {
                    return redirectWithError(
                        p,
                        "login_required",
                        "AADSTS50058: A silent sign-in request was sent but no user is signed in."
                    )
                }
                return complete(p, email: email, &s, ctx)
            }
            guard ["", "login", "select_account", "consent", "create"].contains(prompt) else {
                return redirectWithError(p, "invalid_request", "AADSTS90023: Invalid prompt value '\(prompt)'.")
            }
            p.username = nil
            let id = Ids.token("AR.", bytes: 18)
            s.pending[id] = p
            return signInForm(id, p)
        }
    }

    private func authorizeSubmit(
        _ id: String,
        _ form: [String: String],
        _ req: EmulatorRequest,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        store.withLock { s -> EmulatorResponse in
            guard var p = s.pending[id], p.expires > ctx.now else {
                return errorPage("This sign-in page has expired. Go back to the application and start again.")
            }
            if p.awaitingMFA || (p.code != nil && form["code"] != nil) {
                guard let code = p.code, let entered = form["code"],
                    constantTimeStringEquals(code, entered.trimmingCharacters(in: .whitespaces)),
                    let email = p.username, let user = s.users[email]
                else { return signInForm(id, p, error: "That code didn't work. Check the code and try again.") }
                if p.awaitingMFA { return finish(id, p, user, &s, ctx) }
                return secondFactorOrComplete(id, p, user, &s, ctx)
            }
            let email = (form["username"] ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            p.username = email
            guard let user = s.users[email] else {
                s.pending[id] = p
                return signInForm(id, p, error: "We couldn't find an account with that email address.")
            }
            if form["action"] == "send_code" || user.password == nil && (form["password"] ?? "").isEmpty {
                p.code = s.sendCode(to: email, purpose: "web_sign_in", now: ctx.now)
                s.pending[id] = p
                return signInForm(id, p)
            }
            guard let stored = user.password, constantTimeStringEquals(stored, form["password"] ?? "") else {
                s.pending[id] = p
                return signInForm(id, p, error: "Your account or password is incorrect.")
            }
            return secondFactorOrComplete(id, p, user, &s, ctx)
        }
    }

    /// After a first factor: a code to the user's strong method when MFA applies, else done.
    private func secondFactorOrComplete(
        _ id: String,
        _ pending: PendingAuthorization,
        _ user: UserRecord,
        _ s: inout Store,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        guard user.mfaRequired, let mfa = user.mfaEmail else { return finish(id, pending, user, &s, ctx) }
        var p = pending
        p.awaitingMFA = true
        p.code = s.sendCode(to: mfa, purpose: "web_mfa", now: ctx.now)
        s.pending[id] = p
        return signInForm(id, p)
    }

    private func finish(
        _ id: String,
        _ p: PendingAuthorization,
        _ user: UserRecord,
        _ s: inout Store,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        s.pending.removeValue(forKey: id)
        return complete(p, email: user.email, &s, ctx)
    }

    /// Issues the authorization code, starts the browser session and sends the user back to the app.
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
            family: Ids.token("F.", bytes: 9)
        )
        let sid = Ids.token("S.", bytes: 18)
        s.sessions[sid] = email
        var pairs = [("code", code)]
        if let st = p.state { pairs.append(("state", st)) }
        pairs.append(("client_info", clientInfo(user)))
        return respond(
            to: p,
            pairs,
            headers: [("Set-Cookie", "\(Self.sessionCookie)=\(sid); Path=/; HttpOnly; SameSite=Lax")]
        )
    }

    // MARK: end session

    func logout(_ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        let q = req.method == "POST" ? (req.form ?? [:]) : req.query
        let clear = ("Set-Cookie", "\(Self.sessionCookie)=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax")
        return store.withLock { s -> EmulatorResponse in
            if let sid = req.cookies[Self.sessionCookie] { s.sessions.removeValue(forKey: sid) }
            if let hint = q["logout_hint"]?.lowercased() { s.sessions = s.sessions.filter { $0.value != hint } }
            if let target = q["post_logout_redirect_uri"], !target.isEmpty {
                let allowed = s.config.clients.contains { redirectAllowed(target, $0) }
                guard allowed else { return errorPage("AADSTS50011: post_logout_redirect_uri is not allowed.") }
                var url = target
                if let st = q["state"] { url += (url.contains("?") ? "&" : "?") + Form.query([("state", st)]) }
                return .redirect(url, headers: [clear])
            }
            return page(
                "Signed out",
                "<h1>You signed out of your account</h1><p class=\"sub\">It's a good idea to close all browser "
                    + "windows.</p>",
                headers: [clear]
            )
        }
    }

    // MARK: device code page

    func devicePage(_ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        let form = req.method == "POST" ? (req.form ?? [:]) : req.query
        func show(_ error: String?) -> EmulatorResponse {
            page(
                "Enter code",
                """
                <h1>Enter code</h1><p class="sub">Enter the code displayed on your device, then sign \
                in.</p>\(error.map { "<p class=\"err\">\(htmlEscape($0))</p>" } ?? "")
                <form method="post"><label for="user_code">Code</label><input id="user_code" name="user_code" \
                value="\(htmlEscape(form["user_code"] ?? ""))" autofocus>
                <label for="username">Email</label><input id="username" name="username" type="email" \
                autocomplete="username">
                <label for="password">Password</label><input id="password" name="password" type="password">
                <button type="submit">Sign in</button></form>
                """
            )
        }
        guard req.method == "POST" else { return show(nil) }
        let email = (form["username"] ?? "").lowercased()
        let ok = store.withLock { s -> Bool in
            guard let u = s.users[email], let pw = u.password else { return false }
            return constantTimeStringEquals(pw, form["password"] ?? "")
        }
        guard ok else { return show("Your account or password is incorrect.") }
        guard approveDevice(userCode: form["user_code"] ?? "", email: email, deny: false) else {
            return show("That code is not valid or has expired.")
        }
        return page(
            "Signed in",
            "<h1>You're signed in</h1><p class=\"sub\">You can return to your device and close this window.</p>"
        )
    }

    func indexPage(_ ctx: RequestContext) -> EmulatorResponse {
        let c = config
        let users = c.users.map { "<li><code>\(htmlEscape($0.email))</code> — \(htmlEscape($0.kind))</li>" }.joined()
        let apis = c.apis.map {
            "<li><code>\(htmlEscape($0.path))</code> — "
                + "\($0.permissions.map { htmlEscape($0) }.joined(separator: ", "))</li>"
        }.joined()
        return page(
            "Emulator",
            """
            <h1>NativeAuth emulator</h1><p class="sub">Tenant <code>\(htmlEscape(c.tenantDomain))</code></p>
            <p>Authority: <code>\(htmlEscape(ctx.baseURL))/\(htmlEscape(c.tenantDomain))</code></p>
            <p>Users:</p><ul>\(users)</ul><p>APIs:</p><ul>\(apis)</ul>
            <p>Controls: <code>/_emulator/outbox</code>, <code>/_emulator/requests</code>, \
            <code>/_emulator/counters</code></p>
            """
        )
    }
}
