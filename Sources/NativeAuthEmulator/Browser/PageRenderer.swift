// The HTML of the browser endpoints of both identity providers: the Entra tenant (`/<tenant>/oauth2/v2.0/authorize`,
// `…/logout`, `/devicelogin`) and the generic OpenID Connect provider (`/oidc/authorize`, `/oidc/logout`,
// `/oidc/device`). The renderer decides nothing about the protocol: the services choose the page and what it shows.
//
// The pages are plain HTML forms that a person, a real browser (Selenium) or a plain HTTP client can drive, and their
// shape is stable. Every page is `<main id="page" data-page="PAGE">` holding at most one
// `<form id="form" method="post" action="PATH">` (PATH: the endpoint's path, no query); an error shows as
// `<p class="err" id="error">`. Inputs have `id` = `name`. Buttons are `<button type="submit" name="action" value=V>`
// with an `id`; posting without `action` means the page's first button. Every authorize page carries the hidden
// input `request` (id "request"), which names the authorization request: post it back with the page's fields.
//
//   data-page       inputs                                   buttons: id (name=action value)
//   sign_in         username, password                       sign-in (sign_in), send-code (send_code: email a
//                                                            one-time code instead), create-account (create: the
//                                                            sign_up page; only when sign-up is enabled)
//   email_code      code (sent to the user's email)          verify (verify)
//   mfa_code        code (sent to the user's MFA email)      verify (verify)
//   select_account  —                                        account-0, account-1, … (name=account
//                                                            value=<email>, the browser's accounts, most recent
//                                                            first), use-another-account (use_another_account)
//   consent         — (the scopes: <ul id="scopes">)         accept (accept), cancel (cancel → access_denied)
//   sign_up         email, password (email+password sign-up  sign-up (sign_up), back (back: the sign_in page)
//                   only), attr_<name> for each sign-up
//                   attribute (attr_displayName, attr_city,
//                   attr_postalCode)
//   verify_email    code (sent to the new address)           verify (verify)
//   device          user_code, username, password            sign-in (approve), deny (deny)
//   device_done, device_denied, signed_out, error: no form.
//
// Codes go to the outbox (`GET /_emulator/outbox`, purposes web_sign_in, web_mfa, web_sign_up). A successful page
// answers 302 to the redirect URI (query or fragment) or, with `response_mode=form_post`, a page whose
// `<form id="form_post" method="post" action=REDIRECT_URI>` of hidden inputs submits itself on load.

/// An authorize page: which one, and what it shows.
enum AuthorizePage {
    /// `prefill`: the email to show; `offerSignUp`: the create-account button.
    case signIn(prefill: String, offerSignUp: Bool)
    /// `email_code`, `mfa_code` or `verify_email`, with the line that says where the code went.
    case code(step: BrowserStep, message: String)
    /// The browser's accounts, most recent first.
    case selectAccount([(email: String, name: String)])
    case consent(account: String, scopes: [String])
    /// `askPassword`: an email+password sign-up; `attributes`: each sign-up attribute with its value so far.
    case signUp(email: String, askPassword: Bool, attributes: [(name: String, required: Bool, value: String)])
}

/// Renders the emulator's HTML pages.
enum PageRenderer {
    /// A page of the emulator's look: `<main id="page" data-page="PAGE">` around `body`.
    static func page(
        _ pageID: String,
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
            button.account{display:block;width:100%;text-align:left;background:#fff;color:#1f2937;border:1px solid \
            #d1d5db;margin-top:10px}
            button.account small{color:#6b7280}
            .err{background:#fef2f2;color:#b91c1c;border-radius:6px;padding:8px 10px;font-size:.9rem}
            .note{color:#6b7280;font-size:.8rem;margin-top:22px}
            code{background:#f3f4f6;padding:1px 4px;border-radius:4px}
            </style></head>
            <body><main id="page" data-page="\(htmlEscape(pageID))">\(body)<p class="note">NativeAuth emulator — a \
            local stand-in for Microsoft Entra External ID and a generic OpenID Connect provider. Not a real \
            identity provider.</p></main></body></html>
            """
        return .html(html, status: status, headers: headers)
    }

    static func errorPage(_ message: String, status: Int = 400) -> EmulatorResponse {
        page(
            "error",
            "Sign-in error",
            "<h1 id=\"title\">Sorry, we can't sign you in</h1><p class=\"err\" id=\"error\">\(htmlEscape(message))</p>",
            status: status
        )
    }

    private static func errorHTML(_ error: String?) -> String {
        error.map { "<p class=\"err\" id=\"error\">\(htmlEscape($0))</p>" } ?? ""
    }

    // MARK: - Authorize pages

    /// An authorize page posting to `action` with the hidden `request` id, showing `error` when given.
    static func authorize(
        _ page: AuthorizePage,
        action: String,
        request id: String,
        error: String?,
        headers: [(String, String)]
    ) -> EmulatorResponse {
        let open =
            "<form id=\"form\" method=\"post\" action=\"\(htmlEscape(action))\"><input type=\"hidden\" "
            + "id=\"request\" name=\"request\" value=\"\(htmlEscape(id))\">"
        let top = errorHTML(error)
        switch page {
        case .signIn(let prefill, let offerSignUp):
            return signIn(prefill: prefill, offerSignUp: offerSignUp, top, open, headers)
        case .code(let step, let message):
            return codePage(step, message, top, open, headers)
        case .selectAccount(let accounts):
            return selectAccount(accounts, top, open, headers)
        case .consent(let account, let scopes):
            return consent(account: account, scopes: scopes, top, open, headers)
        case .signUp(let email, let askPassword, let attributes):
            return signUp(email: email, askPassword: askPassword, attributes: attributes, top, open, headers)
        }
    }

    private static func codePage(
        _ step: BrowserStep,
        _ what: String,
        _ err: String,
        _ open: String,
        _ headers: [(String, String)]
    ) -> EmulatorResponse {
        page(
            step.rawValue,
            "Enter code",
            """
            <h1 id="title">Enter code</h1><p class="sub">\(htmlEscape(what))</p>\(err)\(open)
            <label for="code">Code</label><input id="code" name="code" autocomplete="one-time-code" \
            inputmode="numeric" autofocus>
            <button type="submit" id="verify" name="action" value="verify">Verify</button></form>
            """,
            headers: headers
        )
    }

    private static func signIn(
        prefill: String,
        offerSignUp: Bool,
        _ err: String,
        _ open: String,
        _ headers: [(String, String)]
    ) -> EmulatorResponse {
        let create =
            offerSignUp
            ? "<p class=\"sub\">No account? <button class=\"link\" type=\"submit\" id=\"create-account\" "
                + "name=\"action\" value=\"create\" formnovalidate>Create one</button></p>"
            : ""
        return page(
            "sign_in",
            "Sign in",
            """
            <h1 id="title">Sign in</h1><p class="sub">to continue to the application</p>\(err)\(open)
            <label for="username">Email</label><input id="username" name="username" type="email" \
            autocomplete="username" value="\(htmlEscape(prefill))" autofocus>
            <label for="password">Password</label><input id="password" name="password" type="password" \
            autocomplete="current-password">
            <button type="submit" id="sign-in" name="action" value="sign_in">Sign in</button><button \
            class="link" type="submit" id="send-code" name="action" value="send_code">Email me a code \
            instead</button>
            \(create)</form>
            """,
            headers: headers
        )
    }

    private static func selectAccount(
        _ accounts: [(email: String, name: String)],
        _ err: String,
        _ open: String,
        _ headers: [(String, String)]
    ) -> EmulatorResponse {
        let buttons = accounts.enumerated().map { i, account in
            "<button type=\"submit\" class=\"account\" id=\"account-\(i)\" name=\"account\" "
                + "value=\"\(htmlEscape(account.email))\">\(htmlEscape(account.name))<br><small>"
                + "\(htmlEscape(account.email))</small></button>"
        }.joined(separator: "\n")
        return page(
            "select_account",
            "Pick an account",
            """
            <h1 id="title">Pick an account</h1><p class="sub">to continue to the application</p>\(err)\(open)
            \(buttons)
            <button type="submit" class="link" id="use-another-account" name="action" \
            value="use_another_account">Use another account</button></form>
            """,
            headers: headers
        )
    }

    private static func consent(
        account: String,
        scopes: [String],
        _ err: String,
        _ open: String,
        _ headers: [(String, String)]
    ) -> EmulatorResponse {
        let items = scopes.map { "<li><code>\(htmlEscape($0))</code></li>" }
        return page(
            "consent",
            "Permissions requested",
            """
            <h1 id="title">Permissions requested</h1><p class="sub">\(htmlEscape(account))</p>\
            \(err)<p>The application would like to:</p><ul id="scopes">\(items.joined())</ul>\(open)
            <button type="submit" id="accept" name="action" value="accept">Accept</button><button \
            class="link" type="submit" id="cancel" name="action" value="cancel">Cancel</button></form>
            """,
            headers: headers
        )
    }

    private static func signUp(
        email: String,
        askPassword: Bool,
        attributes: [(name: String, required: Bool, value: String)],
        _ err: String,
        _ open: String,
        _ headers: [(String, String)]
    ) -> EmulatorResponse {
        let password =
            askPassword
            ? "<label for=\"password\">Password</label><input id=\"password\" name=\"password\" "
                + "type=\"password\" autocomplete=\"new-password\">"
            : ""
        let fields = attributes.map { a in
            let field = htmlEscape("attr_" + a.name)
            return "<label for=\"\(field)\">\(htmlEscape(a.name))\(a.required ? " (required)" : "")</label>"
                + "<input id=\"\(field)\" name=\"\(field)\" value=\"\(htmlEscape(a.value))\">"
        }.joined(separator: "\n")
        return page(
            "sign_up",
            "Create account",
            """
            <h1 id="title">Create account</h1><p class="sub">for the application</p>\(err)\(open)
            <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" \
            value="\(htmlEscape(email))" autofocus>
            \(password)
            \(fields)
            <button type="submit" id="sign-up" name="action" value="sign_up">Create account</button><button \
            class="link" type="submit" id="back" name="action" value="back" formnovalidate>Back to sign \
            in</button></form>
            """,
            headers: headers
        )
    }

    // MARK: - Authorization responses, sign-out

    /// `response_mode=form_post`: a page whose form of hidden inputs posts `pairs` to `redirectURI` on load.
    static func formPost(
        to redirectURI: String,
        _ pairs: [(String, String)],
        headers: [(String, String)]
    ) -> EmulatorResponse {
        let inputs = pairs.map {
            "<input type=\"hidden\" name=\"\(htmlEscape($0.0))\" value=\"\(htmlEscape($0.1))\">"
        }.joined()
        return .html(
            """
            <!doctype html><html><head><meta charset="utf-8"><title>Working…</title></head>
            <body onload="document.forms[0].submit()"><form id="form_post" method="post" \
            action="\(htmlEscape(redirectURI))">\(inputs)
            <noscript><button type="submit" id="continue">Continue</button></noscript></form></body></html>
            """,
            headers: headers
        )
    }

    static func signedOut(headers: [(String, String)]) -> EmulatorResponse {
        page(
            "signed_out",
            "Signed out",
            "<h1 id=\"title\">You signed out of your account</h1><p class=\"sub\">It's a good idea to close "
                + "all browser windows.</p>",
            headers: headers
        )
    }

    // MARK: - Device code pages

    /// The verification page posting to `action`, the user code prefilled.
    static func deviceCode(action: String, userCode: String, error: String?) -> EmulatorResponse {
        page(
            "device",
            "Enter code",
            """
            <h1 id="title">Enter code</h1><p class="sub">Enter the code displayed on your device, then sign \
            in.</p>\(errorHTML(error))
            <form id="form" method="post" action="\(htmlEscape(action))"><label for="user_code">Code</label>\
            <input id="user_code" name="user_code" value="\(htmlEscape(userCode))" autofocus>
            <label for="username">Email</label><input id="username" name="username" type="email" \
            autocomplete="username">
            <label for="password">Password</label><input id="password" name="password" type="password">
            <button type="submit" id="sign-in" name="action" value="approve">Sign in</button><button \
            class="link" type="submit" id="deny" name="action" value="deny">Deny</button></form>
            """
        )
    }

    static let deviceDenied = page(
        "device_denied",
        "Denied",
        "<h1 id=\"title\">Sign-in denied</h1><p class=\"sub\">You can close this window.</p>"
    )

    static let deviceDone = page(
        "device_done",
        "Signed in",
        "<h1 id=\"title\">You're signed in</h1><p class=\"sub\">You can return to your device and close this "
            + "window.</p>"
    )

    // MARK: - Index

    /// `GET /`: the tenant, its authorities, users and APIs.
    static func index(_ c: EmulatorConfig, baseURL: String, oidcIssuer: String) -> EmulatorResponse {
        let users = c.users.map { "<li><code>\(htmlEscape($0.email))</code> — \(htmlEscape($0.kind))</li>" }.joined()
        let apis = c.apis.map {
            "<li><code>\(htmlEscape($0.path))</code> — "
                + "\($0.permissions.map { htmlEscape($0) }.joined(separator: ", "))</li>"
        }.joined()
        return page(
            "index",
            "Emulator",
            """
            <h1>NativeAuth emulator</h1><p class="sub">Tenant <code>\(htmlEscape(c.tenantDomain))</code></p>
            <p>Authority: <code>\(htmlEscape(baseURL))/\(htmlEscape(c.tenantDomain))</code></p>
            <p>Generic OpenID Connect provider: <code>\(htmlEscape(oidcIssuer))</code> (client \
            <code>\(htmlEscape(c.oidc.clientID))</code>)</p>
            <p>Users:</p><ul>\(users)</ul><p>APIs:</p><ul>\(apis)</ul>
            <p>Controls: <code>/_emulator/outbox</code>, <code>/_emulator/requests</code>, \
            <code>/_emulator/counters</code></p>
            """
        )
    }
}
