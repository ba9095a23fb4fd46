import NativeAuthJSON

/// `GET|POST <end_session_endpoint>` (Entra: `/<tenant>/oauth2/v2.0/logout`; generic: `/oidc/logout`).
extension BrowserService {
    /// Signs the account the hints name (`logout_hint`, else `id_token_hint`) out of every browser session, or else
    /// the whole session of the request's cookie; logs the call (`GET /_emulator/end_session_log`); redirects to an
    /// allowed `post_logout_redirect_uri` (with `state`), or shows the signed-out page. Refresh tokens are not revoked
    /// (as with Entra).
    func endSession(_ call: Call, idp: IdP) -> EmulatorResponse {
        let req = call.request
        let ctx = call.context
        let q = call.form
        let cookie = req.cookies[cookieName(idp)]
        let (hintStatus, hintClaims) = minter.checkIDTokenHint(q["id_token_hint"], idp: idp, ctx)
        let config = directory.config
        return state.withLock { s -> EmulatorResponse in
            counters.add(.endSessionRequests)
            var entry = logEntry(call, idp: idp, hint: (hintStatus, hintClaims), cookie: cookie, config, &s)
            let aud = hintClaims?["aud"]?.stringValue
            var client: ClientApp? = nil
            if let id = q["client_id"], !id.isEmpty {
                guard let c = browserClient(idp, id, config) else {
                    entry.outcome = "error"
                    s.log(entry)
                    return PageRenderer.errorPage(BrowserError.unknownClientID(id))
                }
                guard entry.idTokenHint != "valid" || aud == id else {
                    entry.outcome = "error"
                    s.log(entry)
                    return PageRenderer.errorPage(BrowserError.idTokenHintOfAnotherClient(id))
                }
                client = c
            } else if entry.idTokenHint == "valid" {
                client = browserClient(idp, aud, config)
            }
            signOut(&entry, cookie: cookie, idp: idp, &s)
            let headers = cookie != nil && s.sessionUsers(cookie, idp: idp, directory).isEmpty ? [clearCookie(idp)] : []
            let answer = leave(q, client: client, idp: idp, headers: headers, config, &entry)
            s.log(entry)
            return answer
        }
    }

    /// The log entry of an end-session call: its parameters (`id_token_hint` masked), what the hints are worth.
    private func logEntry(
        _ call: Call,
        idp: IdP,
        hint: (String, JSONValue?),
        cookie: String?,
        _ config: EmulatorConfig,
        _ s: inout BrowserState
    ) -> EndSessionLogEntry {
        let q = call.form
        let seq = requestLog.nextSequence()
        var params = q
        if params["id_token_hint"] != nil { params["id_token_hint"] = "***" }
        var (status, hintUser) = (hint.0, String?.none)
        if let claims = hint.1 {
            hintUser = self.hintUser(claims, idp: idp)
            if browserClient(idp, claims["aud"]?.stringValue, config) == nil { status = "invalid" }
        }
        let expired = (hint.1?["exp"]?.doubleValue ?? .infinity) <= call.now
        return EndSessionLogEntry(
            seq: seq,
            time: call.now,
            idp: idp,
            method: call.request.method,
            path: call.request.path,
            params: params,
            idTokenHint: status,
            idTokenHintExpired: status == "valid" && expired,
            idTokenHintUser: status == "valid" ? hintUser : nil,
            logoutHintUser: resolveHint(q["logout_hint"], idp: idp),
            hadSession: !s.sessionUsers(cookie, idp: idp, directory).isEmpty,
            signedOut: [],
            outcome: "page",
            redirect: nil
        )
    }

    /// Who signs out: the account the hints name, from every session of `idp`; else the cookie's whole session.
    private func signOut(_ entry: inout EndSessionLogEntry, cookie: String?, idp: IdP, _ s: inout BrowserState) {
        if let target = entry.logoutHintUser ?? entry.idTokenHintUser {
            if s.endSessions(of: target, idp: idp) > 0 { entry.signedOut = [target] }
        } else if let cookie, let session = s.sessions[cookie], session.idp == idp {
            entry.signedOut = session.users
            s.sessions.removeValue(forKey: cookie)
        }
    }

    /// Where the browser goes: an allowed `post_logout_redirect_uri` (with `state`), an error page for one not
    /// allowed, or the signed-out page.
    private func leave(
        _ q: [String: String],
        client: ClientApp?,
        idp: IdP,
        headers: [(String, String)],
        _ config: EmulatorConfig,
        _ entry: inout EndSessionLogEntry
    ) -> EmulatorResponse {
        if let target = q["post_logout_redirect_uri"], !target.isEmpty {
            let allowed =
                client.map { redirectAllowed(target, $0) }
                ?? (idp == .entra && config.clients.contains { redirectAllowed(target, $0) })
            if allowed {
                var url = target
                if let st = q["state"] { url += (url.contains("?") ? "&" : "?") + Form.query([("state", st)]) }
                entry.outcome = "redirect"
                entry.redirect = url
                return .redirect(url, headers: headers)
            }
            // The generic provider redirects only for an identified client (client_id or id_token_hint).
            if idp == .entra || client != nil {
                entry.outcome = "error"
                return PageRenderer.errorPage(BrowserError.postLogoutRedirectURINotAllowed.description(idp))
            }
        }
        return PageRenderer.signedOut(headers: headers)
    }
}
