import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// The Entra tenant's browser side: prompts and the browser session, the account picker, consent and sign-up pages,
/// form_post, ID tokens, end session and the authorize / end-session logs.
@Suite struct BrowserTests {
    static let bob = ("bob@contoso.com", "Bob-Passw0rd!")

    func endpoint(_ h: Harness) -> String { h.authority + "/oauth2/v2.0/authorize" }

    /// Opens the authorize page (prompt=login unless `extra` says otherwise) and signs `user` in with its password.
    func signIn(
        _ b: PageClient,
        _ user: (String, String),
        _ extra: [(String, String)] = [("prompt", "login")]
    ) async throws -> [String: String] {
        let page = try await b.get(b.authorizeURL(endpoint(b.h), clientID: b.h.clientID, extra))
        try expect(page.page == "sign_in", "expected the sign-in page: \(page.text)")
        let done = try await b.submit(page, [("username", user.0), ("password", user.1)])
        return done.authorizationResponse
    }

    func redeem(_ h: Harness, _ b: PageClient, _ code: String) async throws -> Harness.Reply {
        try await h.post(
            "/oauth2/v2.0/token",
            [
                "grant_type": "authorization_code", "code": code, "redirect_uri": b.redirect,
                "code_verifier": b.verifier, "scope": "openid profile offline_access", "client_info": "1",
            ]
        )
    }

    @Test func promptNoneLoginAndSingleSignOn() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let first = try await signIn(b, ann)
            #expect(first["code"] != nil && first["state"] == "st-1" && first["client_info"] != nil)
            #expect(first["iss"] == nil)  // Entra does not send RFC 9207's iss
            #expect(b.cookies["naemu_session"] != nil)
            let tokens = try await redeem(h, b, first["code"] ?? "")
            let claims = try await verifiedClaims(
                tokens.string["id_token"] ?? "",
                jwksURL: h.authority + "/discovery/v2.0/keys",
                h
            )
            #expect(claims["nonce"] == "n-1")
            let loginHint = try #require(claims["login_hint"]?.stringValue)
            #expect(loginHint.hasPrefix("O.") && !loginHint.contains("@"))
            func open(_ extra: [(String, String)]) async throws -> Harness.Reply {
                try await b.get(b.authorizeURL(endpoint(h), clientID: h.clientID, extra))
            }
            // No prompt, one account in the browser: signed in without a page. prompt=none too.
            let sso = try await open([])
            #expect(sso.status == 302 && sso.authorizationResponse["code"] != nil)
            #expect(try await open([("prompt", "none")]).authorizationResponse["code"] != nil)
            // The login_hint claim and the email both name ann.
            for hint in [loginHint, ann.0] {
                let r = try await open([("prompt", "none"), ("login_hint", hint)])
                #expect(r.authorizationResponse["code"] != nil, "\(hint)")
            }
            // Another user hinted: login_required (AADSTS50058), as Entra answers.
            let other = try await open([("prompt", "none"), ("login_hint", olivia)]).authorizationResponse
            #expect(other["error"] == "login_required" && other["state"] == "st-1")
            #expect(other["error_description"]?.contains("none of the currently signed in user(s) match") == true)
            // Without a hint that matches, the sign-in page (prefilled with the hint).
            let hinted = try await open([("login_hint", olivia)])
            #expect(hinted.page == "sign_in" && hinted.text.contains("value=\"olivia@contoso.com\""))
            // prompt=login always asks.
            #expect(try await open([("prompt", "login")]).page == "sign_in")
            // A browser without the cookie: login_required.
            let bare = try await h.get(b.authorizeURL(endpoint(h), clientID: h.clientID, [("prompt", "none")]))
            #expect(bare.authorizationResponse["error"] == "login_required")
            #expect(bare.authorizationResponse["error_description"]?.contains("no user is signed in") == true)
            let log = try await h.control("GET", "authorize_log?idp=entra")["requests"]?.arrayValue ?? []
            #expect(
                log.map { $0["outcome"]?.stringValue ?? "" } == [
                    "code", "code", "code", "code", "code", "error", "page", "page", "error",
                ]
            )
            #expect(log[1]["had_session"] == true && log[1]["page"] == .null && log[1]["user"] == "ann@contoso.com")
            #expect(try await h.control("GET", "counters")["sso_sign_ins"] == 4)
        }
    }

    @Test func accountPickerWithTwoAccounts() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "users", ["email": .string(Self.bob.0), "password": .string(Self.bob.1)])
            let b = try PageClient(h)
            _ = try await signIn(b, ann)
            _ = try await signIn(b, Self.bob)  // the same browser: bob joins the session, first
            let sessions = try await h.control("GET", "sessions")["sessions"]?.arrayValue ?? []
            #expect(sessions.count == 1 && sessions.first?["users"] == [.string(Self.bob.0), .string(ann.0)])
            func open(_ extra: [(String, String)]) async throws -> Harness.Reply {
                try await b.get(b.authorizeURL(endpoint(h), clientID: h.clientID, extra))
            }
            // prompt=none cannot choose: interaction_required (AADSTS16000).
            let none = try await open([("prompt", "none")]).authorizationResponse
            #expect(
                none["error"] == "interaction_required" && none["error_description"]?.hasPrefix("AADSTS16000") == true
            )
            // No prompt and two accounts: the picker, as for prompt=select_account.
            #expect(try await open([]).page == "select_account")
            let picker = try await open([("prompt", "select_account")])
            #expect(picker.page == "select_account")
            #expect(picker.text.contains("id=\"account-0\" name=\"account\" value=\"bob@contoso.com\""))
            #expect(picker.text.contains("id=\"account-1\" name=\"account\" value=\"ann@contoso.com\""))
            #expect(picker.text.contains("id=\"use-another-account\""))
            let picked = try await b.submit(picker, [("account", ann.0)]).authorizationResponse
            let tokens = try await redeem(h, b, picked["code"] ?? "")
            #expect(try JWT(decoding: tokens.string["id_token"] ?? "").claims["preferred_username"] == .string(ann.0))
            // An account the browser does not hold is refused; "use another account" is the sign-in page.
            let again = try await open([("prompt", "select_account")])
            #expect(try await b.submit(again, [("account", olivia)]).page == "select_account")
            #expect(try await b.submit(again, [("action", "use_another_account")]).page == "sign_in")
            // select_account without a session is the sign-in page.
            let fresh = try PageClient(h)
            #expect(
                try await fresh.get(b.authorizeURL(endpoint(h), clientID: h.clientID, [("prompt", "select_account")]))
                    .page == "sign_in"
            )
        }
    }

    @Test func consentPageAcceptAndCancel() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let url = b.authorizeURL(
                endpoint(h),
                clientID: h.clientID,
                scope: "\(todoRead) openid",
                [("prompt", "consent")]
            )
            let page = try await b.get(url)
            #expect(page.page == "sign_in")
            let consent = try await b.submit(page, [("username", ann.0), ("password", ann.1)])
            #expect(consent.page == "consent" && consent.text.contains("<code>\(todoRead)</code>"))
            #expect(b.cookies["naemu_session"] != nil)  // signed in before consenting
            #expect(try await b.submit(consent, [("action", "accept")]).authorizationResponse["code"] != nil)
            // With the session: straight to the consent page; cancel answers access_denied / cancel.
            let second = try await b.get(url)
            #expect(second.page == "consent")
            let cancelled = try await b.submit(second, [("action", "cancel")]).authorizationResponse
            #expect(cancelled["error"] == "access_denied" && cancelled["error_subcode"] == "cancel")
            #expect(cancelled["error_description"]?.hasPrefix("AADSTS65004") == true)
        }
    }

    @Test func signUpThroughThePages() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let page = try await b.get(
                b.authorizeURL(
                    endpoint(h),
                    clientID: h.clientID,
                    [("prompt", "create"), ("login_hint", "new@contoso.com")]
                )
            )
            #expect(page.page == "sign_up" && page.text.contains("value=\"new@contoso.com\""))
            for id in ["email", "password", "attr_displayName", "attr_city", "attr_postalCode", "sign-up", "back"] {
                #expect(page.text.contains("id=\"\(id)\""), "\(id)")
            }
            let weak = try await b.submit(
                page,
                [("email", "new@contoso.com"), ("password", "weak"), ("attr_displayName", "N")]
            )
            #expect(weak.page == "sign_up" && weak.text.contains("id=\"error\""))
            let missing = try await b.submit(page, [("email", "new@contoso.com"), ("password", "New-Passw0rd!")])
            #expect(missing.text.contains("displayName"))
            let verify = try await b.submit(
                page,
                [
                    ("email", "new@contoso.com"), ("password", "New-Passw0rd!"), ("attr_displayName", "New Person"),
                    ("attr_postalCode", "98052"),
                ]
            )
            #expect(verify.page == "verify_email")
            let outbox = try await h.control("GET", "outbox?to=new@contoso.com")["messages"]?.arrayValue ?? []
            #expect(outbox.last?["purpose"] == "web_sign_up")
            let done = try await b.submit(verify, [("code", try await h.lastCode("new@contoso.com"))])
            #expect(done.authorizationResponse["code"] != nil)
            // The account exists: native sign-in works, and the sign-in page offers "create one".
            #expect(try await h.passwordSignIn("new@contoso.com", "New-Passw0rd!").status == 200)
            let signInPage = try await b.get(b.authorizeURL(endpoint(h), clientID: h.clientID, [("prompt", "login")]))
            #expect(try await b.submit(signInPage, [("action", "create")]).page == "sign_up")
        }
    }

    @Test func formPostAndFragment() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let page = try await b.get(
                b.authorizeURL(endpoint(h), clientID: h.clientID, [("response_mode", "form_post")])
            )
            let done = try await b.submit(page, [("username", ann.0), ("password", ann.1)])
            #expect(
                done.status == 200
                    && done.text.contains("<form id=\"form_post\" method=\"post\" action=\"\(b.redirect)\"")
            )
            #expect(done.text.contains("onload=\"document.forms[0].submit()\""))
            let r = done.authorizationResponse
            #expect(r["code"] != nil && r["state"] == "st-1" && r["iss"] == nil)
            let fragment = try await b.get(
                b.authorizeURL(endpoint(h), clientID: h.clientID, [("response_mode", "fragment")])
            )
            #expect(fragment.response.header("location")?.contains("#code=") == true)
        }
    }

    @Test func endSessionIsLoggedAndSignsOut() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "users", ["email": .string(Self.bob.0), "password": .string(Self.bob.1)])
            let b = try PageClient(h)
            let code = try await signIn(b, ann)["code"] ?? ""
            _ = try await signIn(b, Self.bob)
            let idToken = try #require(try await redeem(h, b, code).string["id_token"])
            let hint = try #require(try JWT(decoding: idToken).claims["login_hint"]?.stringValue)
            let q = [
                ("id_token_hint", idToken), ("post_logout_redirect_uri", "http://localhost:9/bye"),
                ("client_id", h.clientID), ("logout_hint", hint), ("state", "s1"),
            ]
            let out = try await b.get(
                h.authority + "/oauth2/v2.0/logout?"
                    + q.map { "\($0.0)=\(FormEncoding.component($0.1))" }.joined(separator: "&")
            )
            #expect(out.status == 302 && out.response.header("location") == "http://localhost:9/bye?state=s1")
            // ann is signed out of the browser; bob stays.
            let sessions = try await h.control("GET", "sessions")["sessions"]?.arrayValue ?? []
            #expect(sessions.first?["users"] == [.string(Self.bob.0)])
            let log = try #require(try await h.control("GET", "end_session_log")["requests"]?.arrayValue?.first)
            #expect(log["id_token_hint"] == "valid" && log["id_token_hint_user"] == "ann@contoso.com")
            #expect(log["logout_hint"] == .string(hint) && log["logout_hint_user"] == "ann@contoso.com")
            #expect(log["client_id"] == .string(h.clientID) && log["state"] == "s1" && log["outcome"] == "redirect")
            #expect(
                log["post_logout_redirect_uri"] == "http://localhost:9/bye" && log["signed_out"] == ["ann@contoso.com"]
            )
            #expect(log["params"]?["id_token_hint"] == "***" && log["had_session"] == true)
            // No hints: the cookie's whole session ends, the cookie is cleared, the signed-out page shows.
            let bare = try await b.get(h.authority + "/oauth2/v2.0/logout?id_token_hint=not.a.jwt")
            #expect(bare.page == "signed_out" && b.cookies["naemu_session"] == nil)
            let second = try await h.control("GET", "end_session_log")["requests"]?.arrayValue?.last
            #expect(second?["id_token_hint"] == "invalid" && second?["signed_out"] == ["bob@contoso.com"])
            // A post_logout_redirect_uri no client allows is refused.
            let evil = try await h.get(
                h.authority + "/oauth2/v2.0/logout?post_logout_redirect_uri=https%3A%2F%2Fevil.example"
            )
            #expect(evil.status == 400 && evil.page == "error")
        }
    }

    @Test func authorizeLogRecordsTheParameters() async throws {
        try await withEmulator { h in
            let b = try PageClient(h)
            let claims = #"{"access_token":{"xms_cc":{"values":["cp1"]}}}"#
            _ = try await b.get(
                b.authorizeURL(
                    endpoint(h),
                    clientID: h.clientID,
                    [
                        ("prompt", "select_account"), ("login_hint", ann.0), ("domain_hint", "contoso.com"),
                        ("claims", claims), ("client_info", "1"), ("response_mode", "query"),
                    ]
                )
            )
            let e = try #require(try await h.control("GET", "authorize_log")["requests"]?.arrayValue?.first)
            #expect(e["idp"] == "entra" && e["prompt"] == "select_account" && e["login_hint"] == .string(ann.0))
            #expect(e["domain_hint"] == "contoso.com" && e["claims"] == .string(claims) && e["client_info"] == "1")
            #expect(e["code_challenge_method"] == "S256" && e["response_mode"] == "query")
            #expect(e["has_nonce"] == true && e["has_state"] == true && e["has_code_challenge"] == true)
            #expect(e["outcome"] == "page" && e["page"] == "sign_in" && e["params"]?["nonce"] == "n-1")
            _ = try await h.control("DELETE", "authorize_log")
            #expect(try await h.control("GET", "authorize_log")["requests"] == [])
        }
    }
}
