internal import NativeAuthCrypto
public import NativeAuthJSON
import Synchronization

/// Access tokens: a sign-in's tokens into the cache, cached tokens out, and the refresh-token grant, single-flight.
final class TokenService: Sendable {
    let server: ServerAPI
    let cache: TokenCache
    let clock: any Clock
    let logger: Logger
    private let gate = RefreshGate()
    private let tokenEndpoint = Mutex<String?>(nil)

    init(server: ServerAPI, cache: TokenCache, clock: any Clock, logger: Logger) {
        self.server = server
        self.cache = cache
        self.clock = clock
        self.logger = logger
    }

    /// A token response as a cached token (rendered) and, when it carries account information, the account.
    private func accept(
        _ r: TokenResponse,
        requestedScopes: [String]
    ) throws(NativeAuthError) -> (Account?, AccessToken) {
        let now = clock.now()
        let granted = r.grantedScopes ?? requestScopes(requestedScopes)
        let token = cache.rendering(
            AccessToken(
                value: r.accessToken,
                scopes: granted,
                expiresOn: now + Double(r.expiresIn),
                refreshOn: r.refreshIn.map { now + Double($0) },
                cachedAt: now
            )
        )
        guard let (uid, utid) = r.clientInfo else { return (nil, token) }
        var claims: JSONValue = .object([:])
        if let idToken = r.idToken {
            guard let jwt = try? JWT(decoding: idToken) else { throw .unexpected("id_token is not a JWT") }
            claims = jwt.claims
        }
        let username =
            claims["preferred_username"]?.stringValue ?? claims["email"]?.stringValue ?? claims["sub"]?.stringValue
            ?? ""
        let account = Account(
            homeAccountID: "\(uid).\(utid)",
            username: username,
            tenantID: claims["tid"]?.stringValue ?? utid,
            environment: server.configuration.authority.parsed.host,
            idToken: r.idToken,
            claims: claims
        )
        return (account, token)
    }

    /// Saves a sign-in's tokens: the new account replaces any previous one (one account per client).
    func acceptSignIn(_ r: TokenResponse, requestedScopes: [String]) throws(NativeAuthError) -> (Account, AccessToken) {
        let (account, token) = try accept(r, requestedScopes: requestedScopes)
        guard let account else { throw .unexpected("token response without client_info") }
        cache.update { d in
            var entry = AccountEntry(account: account, refreshToken: r.refreshToken)
            entry.store(token)
            d.accounts = [account.homeAccountID: entry]
        }
        return (account, token)
    }

    /// The signed-in account.
    func account() -> Account? { cache.read { $0.current?.account } }

    /// Forgets every account and token. Returns whether an account was signed in.
    func removeAll() -> Bool {
        cache.update { d -> Bool in
            let had = !d.accounts.isEmpty
            d = CacheData()
            return had
        }
    }

    /// `na_get_access_token`: from the cache when a usable token covers the scopes (past its `refresh_in` the token
    /// is refreshed early, and still served if that fails), else one refresh shared by concurrent callers.
    func accessToken(_ request: TokenRequest) throws(NativeAuthError) -> TokenResult {
        let now = clock.now()
        var fallback: AccessToken? = nil
        if !request.forceRefresh, request.claims == nil {
            switch cache.lookup(request.key, at: now) {
            case .noAccount:
                throw NativeAuthError(.noAccount, "No user is signed in.")
            case .hit(let token, let generation):
                guard token.wantsRefresh(at: now) else {
                    logger.log(.verbose, "access token served from cache")
                    return TokenResult(token: token, fromCache: true, cacheGeneration: generation)
                }
                fallback = token  // refresh_in passed: refresh early, but the token is still good if that fails
            case .miss:
                break
            }
        }
        let current = cache.read { d in d.current.map { ($0.account.homeAccountID, $0.refreshToken) } }
        guard let (accountID, refreshToken) = current else {
            throw NativeAuthError(.noAccount, "No user is signed in.")
        }
        guard let rt = refreshToken else {
            if let fallback { return TokenResult(token: fallback, fromCache: true) }
            throw NativeAuthError(.interactionRequired, "No refresh token is cached; the user must sign in again.")
        }
        let fingerprint = rt.secret.withUnsafeBytes { Base64.urlEncode(SHA256.hash($0)) }
        let key = [accountID, fingerprint, request.key.key, request.claims?.json ?? ""].joined(separator: "|")
        let canShare = !request.forceRefresh && fallback == nil && request.claims == nil
        do {
            let (token, fromCache) = try gate.run(
                key: key,
                check: { () -> AccessToken? in
                    guard canShare, case .hit(let t, _) = cache.lookup(request.key, at: clock.now()) else { return nil }
                    return t
                },
                refresh: { () throws(NativeAuthError) -> AccessToken in try refresh(request) }
            )
            return TokenResult(token: token, fromCache: fromCache)
        } catch {
            if let fallback {
                logger.log(.warning, "early refresh failed (\(error.code)); serving the cached token")
                return TokenResult(token: fallback, fromCache: true)
            }
            throw error
        }
    }

    /// The token endpoint from OIDC discovery, fetched once per client.
    private func refreshEndpoint() throws(NativeAuthError) -> String {
        if let cached = tokenEndpoint.withLock({ $0 }) { return cached }
        let endpoint = try server.discoverTokenEndpoint()
        tokenEndpoint.withLock { $0 = endpoint }
        return endpoint
    }

    /// One refresh-token grant; the rotated refresh token replaces the old one under the cache lock.
    private func refresh(_ request: TokenRequest) throws(NativeAuthError) -> AccessToken {
        let current = cache.read { d in d.current.map { ($0.account.homeAccountID, $0.refreshToken) } }
        guard let (accountID, cached) = current, let rt = cached else {
            throw NativeAuthError(.interactionRequired, "No refresh token is cached; the user must sign in again.")
        }
        let endpoint = try refreshEndpoint()
        logger.log(.info, "refreshing an access token for \(request.key.set.count) scope(s)")
        let response: TokenResponse
        do {
            response = try server.refresh(
                endpoint: endpoint,
                refreshToken: rt,
                scopes: request.scopes,
                claims: request.claims
            )
        } catch {
            if error.code == .interactionRequired || error.code == .refreshTokenExpired {
                // Dead: never present it again.
                cache.update { d in
                    if d.accounts[accountID]?.refreshToken == rt { d.accounts[accountID]?.refreshToken = nil }
                }
            }
            throw error
        }
        let (account, token) = try accept(response, requestedScopes: request.scopes)
        cache.update { d in
            // Signed out, or another user signed in, while this refresh was on the wire: keep nothing of it.
            guard var entry = d.accounts[accountID] else { return }
            if let newRT = response.refreshToken, entry.refreshToken == rt { entry.refreshToken = newRT }
            if let account, account.homeAccountID == accountID, account.idToken != nil { entry.account = account }
            entry.store(token)
            d.accounts[accountID] = entry
        }
        return token
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
