/// The refresh-token grant of `TokenService.accessToken`: shared by concurrent calls (`RefreshGate`), by processes
/// (the store's exclusive refresh lock), finished in the background when a started call that sent it is cancelled
/// (`BackgroundRefreshes`), and reserved before it is sent (`TokenStore.reserveWrite`).
extension TokenService {
    /// Everything a shared refresh needs, taken to the thread that runs it.
    struct RefreshPlan: Sendable {
        var gateKey: String
        /// Seconds since the epoch: the end of the waits (for another call's refresh, for the refresh lock).
        var deadline: Double
        /// Whether a token another call or process stored meanwhile answers this call.
        var canShare: Bool
        var wanted: Wanted
        var scopes: [String]
        var claims: ClaimsRequest?
        var correlationID: String
    }

    /// One refresh shared by the calls of this client (the gate) and the processes sharing its store.
    func sharedRefresh(_ plan: RefreshPlan) throws(NativeAuthError) -> RefreshGate.Outcome {
        let wanted = plan.wanted
        return try gate.run(
            key: plan.gateKey,
            deadline: plan.deadline,
            isCancelled: isCancelled,
            waiting: { logger.log(.verbose, "waiting for a token refresh another call is making") },
            check: { () -> AccessToken? in
                guard plan.canShare,
                    case .hit(let t, _, _) = cache.lookup(wanted.key, account: .named(wanted.account), at: clock.now())
                else { return nil }
                return t
            },
            refresh: { () throws(NativeAuthError) -> RefreshGate.Outcome in
                try refreshShared(wanted, scopes: plan.scopes, claims: plan.claims, deadline: plan.deadline) {
                    () throws(NativeAuthError) -> AccessToken in
                    try refresh(
                        account: wanted.account,
                        scopes: plan.scopes,
                        claims: plan.claims,
                        correlationID: plan.correlationID
                    )
                }
            }
        )
    }

    /// A refresh whose tokens could not be written (they are kept in memory: this client goes on with them, and
    /// writes them with its next change that can be written). When the server rotated the refresh token, the file
    /// still holds the redeemed one: the error says the sign-in may need renewing should this process end first.
    static func unwritten(_ error: NativeAuthError, rotated: Bool) -> NativeAuthError {
        guard rotated, error.category == .storage else { return error }
        var e = error
        e.message =
            "\(error.message) The refreshed tokens are kept in memory and written at the next chance; if this "
            + "program ends before that, the sign-in may need renewing (the server replaced the refresh token the "
            + "file still holds)."
        return e
    }

    /// What a refresh is for, to tell whether a token another process stored meanwhile already serves it.
    struct Wanted: Sendable {
        var key: ScopeKey
        var account: String
        /// Any servable token does (neither forced nor a claims request).
        var anyServable: Bool
        /// A forced refresh: a token other than the one it replaces, stored no earlier than the second the call
        /// began (the cache file keeps whole seconds).
        var newerThan: (replaced: AccessToken?, since: Double)?
    }

    /// A refresh shared with every process using the same store: under the store's exclusive refresh lock, the
    /// store is read again; a token another process stored while this one waited that serves the request is the
    /// answer (no request); otherwise `refresh` runs with the newest refresh token. A claims request always refreshes
    /// (MSAL's rule: it never takes a token from the cache).
    fileprivate func refreshShared(
        _ wanted: Wanted,
        scopes: [String],
        claims: ClaimsRequest?,
        deadline: Double,
        _ refresh: () throws(NativeAuthError) -> AccessToken
    ) throws(NativeAuthError) -> RefreshGate.Outcome {
        try cache.exclusiveRefresh(deadline: deadline, isCancelled: isCancelled) {
            () throws(NativeAuthError) -> RefreshGate.Outcome in
            let now = clock.now()
            if case .hit(let t, _, _) = cache.lookup(wanted.key, account: .named(wanted.account), at: now) {
                if wanted.anyServable, !t.wantsRefresh(at: now) {
                    logger.log(.verbose, "another process refreshed this token meanwhile; served from the cache")
                    return (t, true)
                }
                if let (replaced, since) = wanted.newerThan, t.cachedAt >= since.rounded(.down),
                    replaced.map({ !($0.value == t.value) }) ?? true
                {
                    logger.log(.verbose, "another process refreshed this token after the call began; served")
                    return (t, true)
                }
            }
            return (try refresh(), false)
        }
    }

    /// What an app passes as `login_hint` to sign this account in again: the ID token's `login_hint` claim when it
    /// has one (Entra issues it for this purpose), else the username.
    static func loginHint(_ account: Account) -> String? {
        if let hint = account.claims["login_hint"]?.stringValue, !hint.isEmpty { return hint }
        return account.username.isEmpty ? nil : account.username
    }

    /// The server could not answer (no connection, timeout, 5xx, throttling): no verdict on the token.
    static func serverUnavailable(_ e: NativeAuthError) -> Bool {
        switch e.code {
        case .network, .timeout, .throttled: return true
        case .server: return (e.server?.httpStatus ?? 0) >= 500 || e.server?.httpStatus == nil
        default: return false
        }
    }

    /// One refresh-token grant with the newest refresh token the cache holds; the rotated refresh token replaces the
    /// old one under the cache lock. A refresh token the server declares dead is dropped only if the cache (for a
    /// file: the file, re-read under its lock) still holds that very token; if it holds a newer one (another process
    /// or SDK rotated it meanwhile), the grant is tried once more with that.
    fileprivate func refresh(
        account accountID: String,
        scopes: [String],
        claims: ClaimsRequest?,
        correlationID: String
    ) throws(NativeAuthError)
        -> AccessToken
    {
        let server = server.with(correlationID: correlationID)
        var retried = false
        while true {
            let current = cache.read { d in d.accounts[accountID].map { ($0.refreshToken, $0.session) } }
            guard let (cached, session) = current, let rt = cached else {
                throw NativeAuthError(.interactionRequired, "No refresh token is cached; the user must sign in again.")
            }
            let endpoint = try provider.tokenEndpoint(server)
            // Reserve before you redeem: a refresh whose rotated refresh token could not be stored signs the user
            // out, so the room for the write is made first (a full disk refuses the refresh: nothing is sent).
            try cache.reserveWrite()
            defer { cache.releaseReservedWrite() }
            try BackgroundRefreshes.sending()
            logger.log(
                .info,
                "refreshing an access token for \(ScopeKey(scopes).set.count) scope(s)",
                correlationID: correlationID
            )
            let response: TokenResponse
            do {
                response = try server.refresh(endpoint: endpoint, refreshToken: rt, scopes: scopes, claims: claims)
            } catch {
                // Generic OpenID Connect providers refuse to widen a grant on refresh (RFC 6749 §6: the scope may
                // not exceed the original grant): for the app that is one more interactive sign-in, with these
                // scopes.
                if !server.configuration.authorityType.isEntra, error.code == .invalidScope {
                    var e = NativeAuthError(
                        .interactionRequired,
                        "The provider does not extend this sign-in to these scopes; sign in interactively for them.",
                        server: error.server
                    )
                    e.claims = error.claims
                    throw e
                }
                if error.meansRefreshTokenIsDead {
                    // Compare, then delete: only the token that was refused.
                    let newer = try? cache.update { d -> RefreshToken? in
                        guard let held = d.accounts[accountID]?.refreshToken else { return nil }
                        guard held == rt else { return held }
                        d.accounts[accountID]?.refreshToken = nil
                        return nil
                    }
                    if !retried, let newer = newer ?? nil, !(newer == rt) {
                        retried = true
                        logger.log(
                            .info,
                            "the refresh token was refused, and a newer one is cached; trying that once",
                            correlationID: correlationID
                        )
                        continue
                    }
                }
                throw error
            }
            let (account, token) = try accept(
                response,
                requestedScopes: scopes,
                server: server,
                policy: IDTokenPolicy(strict: false)
            )
            // A rotated refresh token that cannot be written is kept in memory and reported: the next process
            // would present the old one.
            do {
                try cache.update { d in
                    // Signed out, or signed in again, while this refresh was on the wire: keep nothing of it.
                    guard var entry = d.accounts[accountID], entry.session == session else { return }
                    if let newRT = response.refreshToken, entry.refreshToken == rt { entry.refreshToken = newRT }
                    if let account, account.homeAccountID == accountID, account.idToken != nil {
                        entry.account = account
                    }
                    entry.store(token)
                    d.accounts[accountID] = entry
                }
            } catch {
                throw Self.unwritten(error, rotated: response.refreshToken.map { !($0 == rt) } ?? false)
            }
            return token
        }
    }
}

extension TokenCache {
    /// See `TokenStore.reserveWrite`.
    func reserveWrite() throws(NativeAuthError) { try store.reserveWrite() }

    /// See `TokenStore.releaseReservedWrite`.
    func releaseReservedWrite() { store.releaseReservedWrite() }
}
