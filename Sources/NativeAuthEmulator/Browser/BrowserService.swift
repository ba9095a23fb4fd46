import Foundation
import NativeAuthCrypto
import NativeAuthJSON
import Synchronization

/// The browser side of both identity providers: authorization requests and their pages, browser sessions (cookies),
/// sign-out. The pages' HTML is `PageRenderer`'s; this service decides which page and what it shows.
///
/// Locking: an endpoint holds the browser lock for its whole answer. Lock order: the native flows before it (a
/// password reset ends sessions); grants and the leaves (directory, outbox, counters, request log) after it.
final class BrowserService: Sendable {
    static let sessionCookie = "naemu_session"
    static let oidcSessionCookie = "naemu_oidc_session"

    let state = Mutex(BrowserState())
    let directory: Directory
    let outbox: Outbox
    let grants: Grants
    let minter: TokenMinter
    let counters: Counters
    let requestLog: RequestLog

    init(
        directory: Directory,
        outbox: Outbox,
        grants: Grants,
        minter: TokenMinter,
        counters: Counters,
        requestLog: RequestLog
    ) {
        self.directory = directory
        self.outbox = outbox
        self.grants = grants
        self.minter = minter
        self.counters = counters
        self.requestLog = requestLog
    }

    func reset() { state.withLock { $0 = BrowserState() } }

    // MARK: - Cookies

    func cookieName(_ idp: IdP) -> String { idp == .entra ? Self.sessionCookie : Self.oidcSessionCookie }
    func cookiePath(_ idp: IdP) -> String { idp == .entra ? "/" : "/oidc" }

    func setCookie(_ idp: IdP, _ sid: String) -> (String, String) {
        ("Set-Cookie", "\(cookieName(idp))=\(sid); Path=\(cookiePath(idp)); HttpOnly; SameSite=Lax")
    }

    func clearCookie(_ idp: IdP) -> (String, String) {
        ("Set-Cookie", "\(cookieName(idp))=; Path=\(cookiePath(idp)); Max-Age=0; HttpOnly; SameSite=Lax")
    }

    /// The session cookie header of a pending request's session, if it has one.
    func sessionHeaders(_ p: PendingAuthorization) -> [(String, String)] {
        p.sessionID.map { [setCookie(p.idp, $0)] } ?? []
    }

    // MARK: - Clients and accounts

    /// RFC 8252 §7.3: a loopback redirect URI with any port, with or without a path; otherwise an exact match.
    func redirectAllowed(_ uri: String, _ client: ClientApp) -> Bool {
        if client.redirectURIs.contains(uri) { return true }
        guard let c = URLComponents(string: uri), c.scheme == "http", let host = c.host?.lowercased(), c.fragment == nil
        else { return false }
        return host == "127.0.0.1" || host == "localhost" || host == "::1" || host == "[::1]"
    }

    /// The client `id` names at `idp`: a tenant application, or the generic provider's one client.
    func browserClient(_ idp: IdP, _ id: String?, _ config: EmulatorConfig) -> ClientApp? {
        guard let id, !id.isEmpty else { return nil }
        switch idp {
        case .entra: return config.clients.first { $0.clientID == id }
        case .oidc:
            guard id == config.oidc.clientID else { return nil }
            return ClientApp(
                clientID: id,
                name: "OIDC demo (public)",
                isPublic: true,
                nativeAuthEnabled: false,
                redirectURIs: config.oidc.redirectURIs,
                consentedScopes: nil
            )
        }
    }

    /// The account a `login_hint` / `logout_hint` names: an email address, an Entra `login_hint` claim, or (generic
    /// OIDC) a subject identifier.
    func resolveHint(_ hint: String?, idp: IdP) -> String? {
        guard let hint = hint?.trimmingCharacters(in: .whitespaces), !hint.isEmpty else { return nil }
        if directory.user(hint.lowercased()) != nil { return hint.lowercased() }
        if idp == .entra, hint.hasPrefix("O."), let bytes = Base64.decode(hint.dropFirst(2)),
            let doc = try? JSONValue.parse(bytes), let upn = doc["upn"]?.stringValue?.lowercased(),
            let user = directory.user(upn), doc["uid"]?.stringValue == user.objectID
        {
            return upn
        }
        if idp == .oidc, let user = directory.users.first(where: { minter.oidcSubject($0) == hint }) {
            return user.email
        }
        return nil
    }

    /// The account an ID token's claims name (Entra: `oid`; generic: the pairwise `sub`).
    func hintUser(_ claims: JSONValue, idp: IdP) -> String? {
        idp == .entra
            ? directory.users.first { $0.objectID == claims["oid"]?.stringValue }?.email
            : directory.users.first { minter.oidcSubject($0) == claims["sub"]?.stringValue }?.email
    }

    /// What is wrong with an authorize request's `scope` at `idp`, if anything.
    func scopeProblem(_ idp: IdP, _ scope: String, _ client: ClientApp, _ config: EmulatorConfig) -> BrowserError? {
        switch idp {
        case .entra:
            do throws(ServiceError) { _ = try ScopeGrant(scope, client: client, config) } catch {
                return BrowserError(error: error.error, entra: error.text, generic: error.text)
            }
        case .oidc:
            do throws(OIDCError) { _ = try OIDCScopes.list(scope, config) } catch {
                return BrowserError(error: error.error, entra: error.description, generic: error.description)
            }
        }
        return nil
    }

    // MARK: - Sessions (controls, revocation)

    /// Signs `user` out of every browser session (of `idp`, or of both); returns how many sessions held them.
    func endSessions(of user: String, idp: IdP?) -> Int { state.withLock { $0.endSessions(of: user, idp: idp) } }

    /// `GET /_emulator/sessions`.
    var sessionsJSON: JSONValue {
        let list = state.withLock { s in
            s.sessions.sorted { $0.key < $1.key }.map { sid, session -> JSONValue in
                [
                    "id": .string(sid), "idp": .string(session.idp.rawValue),
                    "users": .array(session.users.map { .string($0) }),
                ]
            }
        }
        return ["sessions": .array(list)]
    }

    func clearSessions() { state.withLock { $0.sessions.removeAll() } }

    /// `GET /_emulator/authorize_log`: the entries of `idp` (all when nil).
    func authorizeLogJSON(idp: String?) -> [JSONValue] {
        state.withLock { s in s.authorizeLog.filter { idp == nil || $0.idp.rawValue == idp }.map(\.json) }
    }

    func clearAuthorizeLog() { state.withLock { $0.authorizeLog.removeAll() } }

    /// `GET /_emulator/end_session_log`: the entries of `idp` (all when nil).
    func endSessionLogJSON(idp: String?) -> [JSONValue] {
        state.withLock { s in s.endSessionLog.filter { idp == nil || $0.idp.rawValue == idp }.map(\.json) }
    }

    func clearEndSessionLog() { state.withLock { $0.endSessionLog.removeAll() } }
}

/// Ends what an account holds: its refresh-token families (both providers) and its browser sessions.
struct Revocation: Sendable {
    let grants: Grants
    let browser: BrowserService

    /// Everything, as a password change or the account's deletion does.
    func revoke(_ email: String) { _ = revoke(email, refreshTokens: true, sessions: true) }

    /// Returns how many refresh-token families and browser sessions it ended.
    func revoke(_ email: String, refreshTokens: Bool, sessions: Bool) -> (families: Int, sessions: Int) {
        let families = refreshTokens ? grants.withLock { $0.revokeRefreshTokens(of: email) } : 0
        let ended = sessions ? browser.endSessions(of: email, idp: nil) : 0
        return (families, ended)
    }
}
