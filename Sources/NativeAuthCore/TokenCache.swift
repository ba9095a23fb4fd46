public import NativeAuthJSON
import Synchronization

/// The scopes every token request carries (spec §4.1), and which never count when matching cached tokens.
let oidcScopes = ["openid", "profile", "offline_access"]
let oidcScopeSet: Set<String> = ["openid", "profile", "offline_access", "email"]

/// `requested ∪ openid profile offline_access`, requested order kept, de-duplicated case-insensitively.
func requestScopes(_ requested: [String]) -> [String] {
    var seen = Set<String>()
    return (requested + oidcScopes).filter { seen.insert($0.lowercased()).inserted }
}

/// The set a cached access token is matched on: lowercased, OIDC scopes removed (as MSAL does).
func scopeKey(_ scopes: [String]) -> Set<String> {
    Set(scopes.map { $0.lowercased() }).subtracting(oidcScopeSet)
}

/// The signed-in account (spec §4.4).
public struct CachedAccount: Sendable, Equatable {
    public var homeAccountID: String
    public var username: String
    public var tenantID: String
    public var environment: String
    public var idToken: String?
    public var idTokenClaims: JSONValue

    public var json: JSONValue {
        ["username": .string(username), "home_account_id": .string(homeAccountID), "tenant_id": .string(tenantID),
         "environment": .string(environment)]
    }
}

public struct CachedAccessToken: Sendable, Equatable {
    public var secret: String
    /// The scopes as the server granted them.
    public var scopes: [String]
    public var key: Set<String>
    public var expiresOn: Double
    public var refreshOn: Double?
    public var cachedAt: Double

    /// Usable when more than the buffer remains: 5 minutes (MSAL's default), or half the lifetime for tokens that
    /// live less than 10 minutes, so short-lived tokens can still be served from cache.
    public func isUsable(at now: Double) -> Bool {
        let buffer = min(300, max(0, (expiresOn - cachedAt) / 2))
        return now < expiresOn - buffer
    }

    public func wantsRefresh(at now: Double) -> Bool {
        guard let refreshOn else { return false }
        return now >= refreshOn
    }
}

/// Everything the cache holds. Native auth keeps one signed-in account per client (spec §4.3).
public struct CacheData: Sendable, Equatable {
    public var account: CachedAccount?
    public var refreshToken: String?
    public var accessTokens: [CachedAccessToken] = []

    public init(account: CachedAccount? = nil, refreshToken: String? = nil, accessTokens: [CachedAccessToken] = []) {
        self.account = account
        self.refreshToken = refreshToken
        self.accessTokens = accessTokens
    }

    /// A token whose scopes ⊇ the request and that is still usable.
    func accessToken(for scopes: [String], at now: Double) -> CachedAccessToken? {
        let wanted = scopeKey(scopes)
        return accessTokens.filter { wanted.isSubset(of: $0.key) && $0.isUsable(at: now) }.max { $0.expiresOn < $1.expiresOn }
    }

    /// MSAL's overlap rule on save: a new token replaces cached ones whose scopes intersect it.
    mutating func store(_ token: CachedAccessToken) {
        accessTokens.removeAll { !$0.key.isDisjoint(with: token.key) || ($0.key.isEmpty && token.key.isEmpty) }
        accessTokens.append(token)
    }
}

/// Where the cache lives: the seam for persistent stores. Calls are made under the cache's lock.
public protocol TokenStore: Sendable {
    func load() -> CacheData
    func save(_ data: CacheData)
}

/// The in-memory store (the default; nothing touches disk).
public final class MemoryTokenStore: TokenStore {
    private let data = Mutex(CacheData())
    public init() {}
    public func load() -> CacheData { data.withLock { $0 } }
    public func save(_ d: CacheData) { data.withLock { $0 = d } }
}

/// The token cache: reads and writes go through `TokenStore` under one lock.
public final class TokenCache: Sendable {
    private let store: any TokenStore
    private let lock = Mutex(())

    public init(store: any TokenStore = MemoryTokenStore()) { self.store = store }

    public func read<R>(_ body: (CacheData) -> R) -> R {
        lock.withLock { _ in body(store.load()) }
    }

    public func update<R>(_ body: (inout CacheData) -> R) -> R {
        lock.withLock { _ in
            var d = store.load()
            let r = body(&d)
            store.save(d)
            return r
        }
    }
}
