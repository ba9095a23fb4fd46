internal import Glibc
public import NativeAuthJSON
internal import NativeAuthCrypto
internal import NativeAuthHTTP
import Synchronization

/// Access tokens from the cache or the refresh-token grant (spec §2.5, §4.2), single-flight.
final class TokenManager: Sendable {
    let api: ServerAPI
    let cache: TokenCache
    let clock: any Clock
    let logger: Logger
    private let gate = RefreshGate()
    private let tokenEndpoint = Mutex<String?>(nil)

    init(api: ServerAPI, cache: TokenCache, clock: any Clock, logger: Logger) {
        self.api = api
        self.cache = cache
        self.clock = clock
        self.logger = logger
    }

    struct Parsed {
        var account: CachedAccount?
        var accessToken: CachedAccessToken
        var refreshToken: String?
    }

    /// Validates a token response (what MSAL requires: access_token, Bearer, expires_in > 0, client_info).
    func parse(_ body: JSONValue, requestedScopes: [String]) throws(NativeAuthError) -> Parsed {
        guard let at = body["access_token"]?.stringValue, !at.isEmpty else { throw .unexpected("token response without access_token") }
        if let type = body["token_type"]?.stringValue, type.lowercased() != "bearer" {
            throw .unexpected("token_type \(type.prefix(20)) is not Bearer")
        }
        let expiresIn = body["expires_in"]?.intValue ?? body["expires_in"]?.stringValue.flatMap { Int64($0) } ?? 0
        guard expiresIn > 0 else { throw .unexpected("token response without a positive expires_in") }
        let now = clock.now()
        let granted = body["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) } ?? requestScopes(requestedScopes)
        var token = CachedAccessToken(secret: at, scopes: granted, key: scopeKey(granted), expiresOn: now + Double(expiresIn),
                                      refreshOn: nil, cachedAt: now)
        if let r = body["refresh_in"]?.intValue ?? body["refresh_in"]?.stringValue.flatMap({ Int64($0) }), r > 0 {
            token.refreshOn = now + Double(r)
        }
        var account: CachedAccount? = nil
        if let ci = body["client_info"]?.stringValue {
            guard let raw = Base64.decode(ci), let info = try? JSONValue.parse(raw), let uid = info["uid"]?.stringValue,
                  let utid = info["utid"]?.stringValue
            else { throw .unexpected("client_info is not base64url JSON with uid and utid") }
            var claims: JSONValue = .object([:])
            let idToken = body["id_token"]?.stringValue
            if let idToken {
                guard let jwt = try? JWT(decoding: idToken) else { throw .unexpected("id_token is not a JWT") }
                claims = jwt.claims
            }
            let username = claims["preferred_username"]?.stringValue ?? claims["email"]?.stringValue ?? claims["sub"]?.stringValue ?? ""
            account = CachedAccount(homeAccountID: "\(uid).\(utid)", username: username, tenantID: claims["tid"]?.stringValue ?? utid,
                                    environment: api.configuration.authority.parsed.host, idToken: idToken, idTokenClaims: claims)
        }
        return Parsed(account: account, accessToken: token, refreshToken: body["refresh_token"]?.stringValue)
    }

    /// Saves a sign-in's tokens: the new account replaces any previous one (one account per client, spec §4.3).
    func acceptSignIn(_ body: JSONValue, requestedScopes: [String]) throws(NativeAuthError) -> JSONValue {
        let p = try parse(body, requestedScopes: requestedScopes)
        guard let account = p.account else { throw .unexpected("token response without client_info") }
        cache.update { d in
            d = CacheData(account: account, refreshToken: p.refreshToken, accessTokens: [p.accessToken])
        }
        return ["account": accountJSON(account, includeIDToken: false), "token": tokenJSON(p.accessToken, fromCache: false)]
    }

    func accountJSON(_ a: CachedAccount, includeIDToken: Bool) -> JSONValue {
        var o = a.json.objectValue ?? [:]
        o["claims"] = a.idTokenClaims
        if includeIDToken, let t = a.idToken { o["id_token"] = .string(t) }
        return .object(o)
    }

    func tokenJSON(_ t: CachedAccessToken, fromCache: Bool) -> JSONValue {
        ["access_token": .string(t.secret), "token_type": "Bearer", "scopes": .array(t.scopes.map { .string($0) }),
         "expires_on": .int(Int64(t.expiresOn)), "from_cache": .bool(fromCache)]
    }

    /// The token endpoint from OIDC discovery (spec §2.5), fetched once per client. It must be on the authority's
    /// own origin: refresh tokens are never sent anywhere else.
    func refreshEndpoint() throws(NativeAuthError) -> String {
        if let cached = tokenEndpoint.withLock({ $0 }) { return cached }
        let authority = api.configuration.authority
        let doc = try api.getJSON(url: authority.url + "/v2.0/.well-known/openid-configuration", name: "/v2.0/.well-known/openid-configuration")
        guard let endpoint = doc["token_endpoint"]?.stringValue, let u = try? HTTPURL(endpoint),
              u.origin == authority.parsed.origin
        else { throw .unexpected("discovery token_endpoint missing or not on the authority's origin") }
        tokenEndpoint.withLock { $0 = endpoint }
        return endpoint
    }

    /// `na_get_access_token`.
    func accessToken(scopes: [String], forceRefresh: Bool, claims: String?) throws(NativeAuthError) -> (CachedAccessToken, Bool) {
        let snapshot = cache.read { $0 }
        guard let account = snapshot.account else { throw NativeAuthError(.noAccount, "No user is signed in.") }
        let now = clock.now()
        var fallback: CachedAccessToken? = nil
        if !forceRefresh, claims == nil, let hit = snapshot.accessToken(for: scopes, at: now) {
            guard hit.wantsRefresh(at: now) else {
                logger.log(.verbose, "access token served from cache")
                return (hit, true)
            }
            fallback = hit  // refresh_in passed: refresh early, but the token is still good if that fails
        }
        guard let rt = snapshot.refreshToken else {
            if let fallback { return (fallback, true) }
            throw NativeAuthError(.interactionRequired, "No refresh token is cached; the user must sign in again.")
        }
        let key = [account.homeAccountID, Base64.urlEncode(SHA256.hash(rt)), scopeKey(scopes).sorted().joined(separator: " "), claims ?? ""]
            .joined(separator: "|")
        do {
            let token = try gate.run(key: key, check: { () -> CachedAccessToken? in
                guard !forceRefresh, fallback == nil, claims == nil else { return nil }
                return cache.read { $0.accessToken(for: scopes, at: clock.now()) }
            }, refresh: { () throws(NativeAuthError) -> CachedAccessToken in
                try refresh(scopes: scopes, claims: claims)
            })
            return (token.0, token.1)
        } catch {
            if let fallback {
                logger.log(.warning, "early refresh failed (\(error.code.rawValue)); serving the cached token")
                return (fallback, true)
            }
            throw error
        }
    }

    /// One refresh-token grant; the rotated refresh token replaces the old one under the cache lock.
    private func refresh(scopes: [String], claims: String?) throws(NativeAuthError) -> CachedAccessToken {
        let (accountID, cachedRT) = cache.read { ($0.account?.homeAccountID, $0.refreshToken) }
        guard let rt = cachedRT, let accountID else {
            throw NativeAuthError(.interactionRequired, "No refresh token is cached; the user must sign in again.")
        }
        let endpoint = try refreshEndpoint()
        var fields = [("grant_type", "refresh_token"), ("refresh_token", rt), ("scope", requestScopes(scopes).joined(separator: " ")),
                      ("client_info", "1")]
        if let claims { fields.append(("claims", claims)) }
        if let r = api.configuration.redirectURI { fields.append(("redirect_uri", r)) }
        logger.log(.info, "refreshing an access token for \(scopeKey(scopes).count) scope(s)")
        switch try api.post(url: endpoint, name: "/oauth2/v2.0/token (refresh)", fields) {
        case .ok(let body):
            let p = try parse(body, requestedScopes: scopes)
            cache.update { d in
                // Signed out, or another user signed in, while this refresh was on the wire: keep nothing of it.
                guard d.account?.homeAccountID == accountID else { return }
                if let newRT = p.refreshToken, d.refreshToken == rt { d.refreshToken = newRT }
                if let a = p.account, let current = d.account, a.homeAccountID == current.homeAccountID, a.idToken != nil {
                    d.account = a
                }
                d.store(p.accessToken)
            }
            return p.accessToken
        case .redirect(let reason):
            throw NativeAuthError.browserRequired(reason)
        case .error(let d, let body):
            let e = NativeAuthError.from(server: d, body: body, context: .refresh)
            if e.code == .interactionRequired || e.code == .refreshTokenExpired {
                cache.update { data in if data.refreshToken == rt { data.refreshToken = nil } }  // dead: do not present it again
            }
            throw e
        }
    }
}

/// Single-flight refreshes. Only one refresh runs per client at a time (so a refresh token is never presented twice
/// concurrently); callers asking for the same key wait and share its result, others wait and then re-check the cache.
final class RefreshGate: @unchecked Sendable {  // all state is guarded by `mutex`
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var active: (key: String, id: Int)? = nil
    private var nextID = 0
    private var waiters: [Int: Int] = [:]
    private var results: [Int: Result<CachedAccessToken, NativeAuthError>] = [:]

    init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Returns `(token, fromCache)`.
    func run(key: String, check: () -> CachedAccessToken?,
             refresh: () throws(NativeAuthError) -> CachedAccessToken) throws(NativeAuthError) -> (CachedAccessToken, Bool) {
        pthread_mutex_lock(mutex)
        while true {
            if let hit = check() {
                pthread_mutex_unlock(mutex)
                return (hit, true)
            }
            if let a = active {
                let same = a.key == key
                if same { waiters[a.id, default: 0] += 1 }
                while active?.id == a.id { pthread_cond_wait(cond, mutex) }
                if same {
                    let r = results[a.id]
                    waiters[a.id, default: 1] -= 1
                    if waiters[a.id] ?? 0 <= 0 {
                        waiters.removeValue(forKey: a.id)
                        results.removeValue(forKey: a.id)
                    }
                    pthread_mutex_unlock(mutex)
                    guard let r else { throw NativeAuthError(.internal, "a shared refresh left no result") }
                    return (try r.get(), false)
                }
                continue
            }
            nextID += 1
            let id = nextID
            active = (key, id)
            pthread_mutex_unlock(mutex)
            let r: Result<CachedAccessToken, NativeAuthError>
            do { r = .success(try refresh()) } catch { r = .failure(error) }
            pthread_mutex_lock(mutex)
            active = nil
            if (waiters[id] ?? 0) > 0 { results[id] = r }
            pthread_cond_broadcast(cond)
            pthread_mutex_unlock(mutex)
            return (try r.get(), false)
        }
    }
}
