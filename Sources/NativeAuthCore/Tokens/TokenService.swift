internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON
import Synchronization

/// Access tokens: a sign-in's tokens into the cache, cached tokens out, and the refresh-token grant, single-flight.
final class TokenService: Sendable {
    let server: ServerAPI
    let cache: TokenCache
    let clock: any Clock
    let logger: Logger
    let provider: OIDCProvider
    let gate = RefreshGate()
    /// Refreshes of cancelled started calls finishing on threads of their own (see `BackgroundRefreshes`).
    let background = BackgroundRefreshes()
    /// Whether waits should end now (the client is being freed).
    let isCancelled: @Sendable () -> Bool

    init(
        server: ServerAPI,
        cache: TokenCache,
        clock: any Clock,
        logger: Logger,
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) {
        self.server = server
        self.cache = cache
        self.clock = clock
        self.logger = logger
        self.isCancelled = isCancelled
        self.provider = OIDCProvider(clock: clock, logger: logger)
    }

    /// How a token response's ID token is checked, and where the account's claims come from.
    struct IDTokenPolicy: Sendable {
        /// A failed check fails the call (a sign-in); otherwise (a refresh) the cached account is kept.
        var strict = true
        /// The sign-in's nonce, for tokens of a browser sign-in.
        var nonce: String? = nil
        /// Check the signature against the provider's keys (tokens that passed through a browser).
        var signature = false
        /// The provider's key for that check (`OIDCProvider.loadSigningKey`); none: the signature is refused.
        var signingKey: RSAPublicKey? = nil
        /// Claims from the userinfo endpoint, for a response without an ID token (some device-code providers).
        var userinfo: JSONValue? = nil
    }

    /// A token response as a cached token and the account it names, when it names one. Entra: from
    /// `client_info` (`<uid>.<utid>`), else — as MSAL Python does for a response without client_info — from the ID
    /// token (`oid`, else `sub`, with `tid`). Other providers: from (`iss`, `sub`), see `oidcAccountID`.
    /// On a refresh (`strict` false) an ID token that fails its checks names no account — the cached one is kept —
    /// instead of failing the call: the access token itself is fine.
    func accept(
        _ r: TokenResponse,
        requestedScopes: [String],
        server: ServerAPI,
        policy: IDTokenPolicy = IDTokenPolicy()
    )
        throws(NativeAuthError) -> (Account?, AccessToken)
    {
        let now = clock.now()
        let granted = r.grantedScopes ?? requestScopes(requestedScopes)
        let token = AccessToken(
            value: r.accessToken,
            scopes: granted,
            expiresOn: now + Double(r.expiresIn),
            refreshOn: r.refreshIn.map { now + Double($0) },
            cachedAt: now,
            extExpiresOn: r.extExpiresIn.map { now + Double($0) },
            dpopKey: r.dpopKey
        )
        var claims: JSONValue = policy.userinfo ?? .object([:])
        if policy.nonce != nil, r.idToken == nil {
            throw NativeAuthError(.idTokenInvalid, "The token response of the browser sign-in has no ID token.")
        }
        if let idToken = r.idToken {
            guard let jwt = try? JWT(decoding: idToken) else { throw .unexpected("id_token is not a JWT") }
            claims = jwt.claims
            do {
                try provider.validate(
                    jwt,
                    server,
                    nonce: policy.nonce,
                    signature: policy.signature,
                    signingKey: policy.signingKey
                )
            } catch {
                guard !policy.strict else { throw error }
                logger.log(
                    .warning,
                    "a refreshed ID token failed its checks; the account is unchanged",
                    correlationID: server.correlationID
                )
                return (nil, token)
            }
        }
        let configuration = server.configuration
        let homeAccountID: String
        var tenantID = claims["tid"]?.stringValue
        if !configuration.authorityType.isEntra {
            var iss = r.idToken == nil ? nil : claims["iss"]?.stringValue
            if iss == nil { iss = try provider.metadata(server)?.issuer ?? configuration.authority.url }
            guard let sub = claims["sub"]?.stringValue, !sub.isEmpty, let iss else { return (nil, token) }
            homeAccountID = Self.oidcAccountID(issuer: iss, subject: sub)
        } else if let (uid, utid) = r.clientInfo {
            homeAccountID = "\(uid).\(utid)"
            tenantID = tenantID ?? utid
        } else if let uid = claims["oid"]?.stringValue ?? claims["sub"]?.stringValue, !uid.isEmpty {
            homeAccountID = tenantID.map { "\(uid).\($0)" } ?? uid
        } else {
            return (nil, token)
        }
        let username =
            claims["preferred_username"]?.stringValue ?? claims["email"]?.stringValue ?? claims["sub"]?.stringValue
            ?? ""
        let account = Account(
            homeAccountID: homeAccountID,
            username: username,
            tenantID: tenantID ?? "",
            environment: configuration.authority.parsed.host,
            idToken: r.idToken,
            claims: claims,
            realm: realm(server)
        )
        return (account, token)
    }

    /// A generic OpenID Connect account's `home_account_id`: `<sub>.<h>`, where `<h>` is the first 22 characters of
    /// the base64url SHA-256 of the issuer — stable, and distinct for each (`iss`, `sub`) pair (a `sub` is unique
    /// only within its issuer, OIDC Core §2).
    static func oidcAccountID(issuer: String, subject: String) -> String {
        "\(subject).\(Base64.urlEncode(SHA256.hash(Array(issuer.utf8))).prefix(22))"
    }

    /// The realm MSAL files this client's tokens under: the tenant segment of the token endpoint (OIDC discovery's,
    /// as MSAL Python's `Authority.tenant` — usually the tenant id), else of the authority.
    private func realm(_ server: ServerAPI) -> String {
        let endpoint = provider.cachedMetadata?.tokenEndpoint ?? server.configuration.authority.url
        guard let url = try? HTTPURL(endpoint), let first = url.path.split(separator: "/").first else { return "" }
        return String(first)
    }

    /// MSAL's declined-scopes rule (see `SilentTokenFlow.declined`).
    private func checkDeclined(_ token: AccessToken, requested: [String]) throws(NativeAuthError) {
        if let declined = SilentTokenFlow.declined(token, requested: requested) { throw declined }
    }

    /// Saves a sign-in's tokens: the user's account is added, or replaces that user's previous entry (keeping its
    /// other access tokens); other accounts are untouched. `epoch` is the sign-out epoch when the call began: if
    /// this user (or everyone) signed out since, nothing is stored and the call answers `cancelled`.
    func acceptSignIn(
        _ r: TokenResponse,
        requestedScopes: [String],
        server: ServerAPI,
        admission: SignInAdmission,
        policy: IDTokenPolicy = IDTokenPolicy()
    )
        throws(NativeAuthError) -> (Account, AccessToken)
    {
        let (account, token) = try accept(r, requestedScopes: requestedScopes, server: server, policy: policy)
        guard let account else {
            throw .unexpected("token response without client_info or an ID token that names the user")
        }
        let store = { () throws(NativeAuthError) -> Bool in
            try self.storeSignIn(account, token, r, requestedScopes, admission)
        }
        let fenced = { () throws(NativeAuthError) -> Bool in
            if let fence = admission.fence { return try fence.commit(store) }
            return try store()
        }
        // A started call's cancel and the flow's are both ordered with the storing (CallCancellation, FlowFence).
        let stored: Bool
        if let call = admission.call { stored = try call.commit(fenced) } else { stored = try fenced() }
        // A notice of a cache file set aside (its key was lost) is moot once the user signed in again.
        if stored { _ = cache.takeNotice() }
        guard stored else {
            throw NativeAuthError(
                .cancelled,
                "The user signed out while this sign-in was in progress; nothing was kept."
            )
        }
        try checkDeclined(token, requested: requestedScopes)
        return (account, token)
    }

    /// Stores a sign-in unless its user (or everyone) signed out since the call began; answers whether it did.
    private func storeSignIn(
        _ account: Account,
        _ token: AccessToken,
        _ r: TokenResponse,
        _ requestedScopes: [String],
        _ admission: SignInAdmission
    ) throws(NativeAuthError) -> Bool {
        let epoch = admission.signOutEpoch
        return try cache.update { d -> Bool in
            guard !d.signedOut(account.homeAccountID, since: epoch) else { return false }
            var entry = AccountEntry(account: account, refreshToken: r.refreshToken)
            // As MSAL, a new sign-in of the same user keeps that user's other access tokens (each valid on its
            // own until it expires); the refresh token, ID token and sign-in scopes are the new sign-in's.
            entry.accessTokens = d.accounts[account.homeAccountID]?.accessTokens ?? [:]
            entry.signInScopes = requestedScopes
            d.lastSession += 1
            entry.session = d.lastSession
            entry.store(token)
            d.accounts[account.homeAccountID] = entry
            return true
        }
    }

    /// The error for a selection that names no account.
    static func noSuchAccount(_ why: TokenCache.Lookup) -> NativeAuthError {
        if case .accountRequired(let accounts) = why {
            var e = NativeAuthError(
                .accountRequired,
                "Several accounts are signed in; name one with \"account\" (a home_account_id or a username)."
            )
            e.accounts = accounts
            return e
        }
        return NativeAuthError(.noAccount, "No such account is signed in.")
    }

    /// The id of the account a selection names.
    func accountID(_ selection: AccountSelection) throws(NativeAuthError) -> String {
        switch cache.account(selection) {
        case .account(let id): return id
        case .none(let why): throw Self.noSuchAccount(why)
        }
    }

    /// The account a selection names.
    func account(_ selection: AccountSelection) throws(NativeAuthError) -> Account {
        if let notice = cache.takeNotice() { throw notice }
        let id = try accountID(selection)
        guard let account = cache.read({ $0.accounts[id]?.account }) else {
            throw NativeAuthError(.noAccount, "No such account is signed in.")
        }
        return account
    }

    /// Every signed-in account, by username.
    func accounts() -> [Account] {
        cache.read { $0.accounts.values.map(\.account) }.sorted {
            ($0.username, $0.homeAccountID) < ($1.username, $1.homeAccountID)
        }
    }

    /// Forgets the selected account's entries, or — with `all` — every account's. A call in flight for a removed
    /// account stores nothing afterwards. Answers the accounts removed (none when no account was signed in and the
    /// call named none).
    func signOut(_ selection: AccountSelection, all: Bool) throws(NativeAuthError) -> [Account] {
        if !all, case .named = selection { _ = try accountID(selection) }
        var removed: [Account] = []
        do {
            try signOutUpdate(selection, all: all, removed: &removed)
        } catch {
            // The change stands in memory; the error carries what was removed (see NativeAuthClient.signOut).
            var e = error
            e.accounts = removed
            throw e
        }
        if !all, case .only = selection, removed.isEmpty {
            // Several accounts and no selector: which one is meant is the app's to say.
            if case .none(let why) = cache.account(.only), case .accountRequired = why { throw Self.noSuchAccount(why) }
        }
        return removed
    }

    private func signOutUpdate(
        _ selection: AccountSelection,
        all: Bool,
        removed: inout [Account]
    ) throws(NativeAuthError) {
        var out: [Account] = []
        defer { removed = out }
        try cache.update { d in
            d.signOutEpoch += 1
            if all {
                out = d.accounts.values.map(\.account)
                d.accounts = [:]
                d.allSignedOutAt = d.signOutEpoch
                return
            }
            let id: String
            switch selection {
            case .named(let name):
                guard let found = TokenCache.find(name, in: d.accounts) else { return }
                id = found
            case .only:
                guard let only = d.accounts.first?.key else {
                    // Nobody is signed in: a sign-in under way when the user asked to sign out keeps nothing.
                    d.allSignedOutAt = d.signOutEpoch
                    return
                }
                guard d.accounts.count == 1 else { return }
                id = only
            }
            if let entry = d.accounts.removeValue(forKey: id) { out.append(entry.account) }
            d.signedOutAt[id] = d.signOutEpoch
        }
    }

    /// The scopes a request means: its own, or — without any, or with OIDC scopes only — the sign-in's (MSAL iOS's
    /// native-auth `getAccessToken()` needs no scopes and answers the sign-in's token). A request for `openid` alone
    /// is never matched against a token cached later for some API.
    private func scopes(
        _ request: TokenRequest,
        account id: String
    ) throws(NativeAuthError) -> (
        scopes: [String], key: ScopeKey
    ) {
        if let scopes = request.scopes, let key = request.key, !key.set.isEmpty { return (scopes, key) }
        guard let signIn = cache.read({ $0.accounts[id]?.signInScopes }) else {
            throw NativeAuthError(.noAccount, "No such account is signed in.")
        }
        return (signIn, ScopeKey(signIn))
    }

    /// `na_get_access_token`: from the cache when a usable token covers the scopes — a direct lookup — else the
    /// silent-token flow (`SilentTokenFlow`): past its `refresh_in` the token is refreshed early, and still served if
    /// that fails; otherwise one refresh shared by concurrent callers and, with a persistent store, by every process
    /// sharing it.
    func accessToken(_ request: TokenRequest) throws(NativeAuthError) -> TokenResult {
        if let notice = cache.takeNotice() { throw notice }
        let now = clock.now()
        var selection = request.account
        let scopes: [String]
        let key: ScopeKey
        if let s = request.scopes, let k = request.key, !k.set.isEmpty {
            (scopes, key) = (s, k)
        } else {
            let id = try self.accountID(selection)
            selection = .named(id)
            (scopes, key) = try self.scopes(request, account: id)
        }
        // The token this call would have been served: a forced refresh wants it replaced; past its refresh_in, it is
        // refreshed early, but still good if that fails.
        var replaced: AccessToken? = nil
        var fallback: AccessToken? = nil
        let id: String
        let found = cache.lookup(key, account: selection, at: now)
        switch found {
        case .noAccount, .accountRequired:
            throw Self.noSuchAccount(found)
        case .hit(let token, let account, let generation):
            id = account
            replaced = token
            if !request.forceRefresh, request.claims == nil {
                guard token.wantsRefresh(at: now) else {
                    logger.log(.verbose, "access token served from cache")
                    return TokenResult(token: token, fromCache: true, cacheGeneration: generation)
                }
                fallback = token
            }
        case .miss(let account):
            id = account
        }
        let flow = SilentTokenFlow(
            SilentTokenFlow.Request(
                account: id,
                scopes: scopes,
                key: key,
                claims: request.claims,
                forceRefresh: request.forceRefresh,
                fallback: fallback,
                replaced: replaced,
                began: now,
                isEntra: server.configuration.authorityType.isEntra
            )
        )
        return try SilentTokenDriver(tokens: self, correlationID: request.correlationID).run(flow)
    }
}

/// An access token as `na_get_access_token` answers it.
public struct TokenResult: Sendable {
    public var token: AccessToken
    public var fromCache: Bool
    /// For a token served straight from the cache: the cache generation it was found at. While
    /// `NativeAuthClient.cacheGeneration` still equals it (and the token is within its lifetime), the same request
    /// gets the same answer.
    public var cacheGeneration: UInt64? = nil
}
