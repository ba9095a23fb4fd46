public import NativeAuthJSON

/// A signed-in account.
public struct Account: Sendable, Equatable {
    /// `<uid>.<utid>` from the token response's `client_info`.
    public var homeAccountID: String
    /// `preferred_username`, else `email`, else `sub` of the ID token.
    public var username: String
    public var tenantID: String
    /// The authority's host.
    public var environment: String
    public var idToken: String?
    /// The ID token's claims (decoded, not verified: they came over TLS straight from the token endpoint).
    public var claims: JSONValue
}

/// A result document rendered once, when its token was cached (see `TokenCache`'s `renderer`). Its bytes hold the
/// token, so they are wiped when the last reference goes.
public final class RenderedToken: @unchecked Sendable {  // immutable after init
    public let bytes: UnsafeMutableRawBufferPointer

    public init(copying source: UnsafeRawBufferPointer) {
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, source.count), alignment: 1)
        if let dst = bytes.baseAddress, let src = source.baseAddress, source.count > 0 {
            dst.copyMemory(from: src, byteCount: source.count)
        }
        count = source.count
    }

    /// The length of the document in `bytes`.
    public let count: Int

    deinit {
        if let p = bytes.baseAddress { wipeMemory(p, count) }
        bytes.deallocate()
    }
}

/// A cached access token.
public struct AccessToken: Sendable {
    public var value: Secret
    /// The scopes as the server granted them.
    public var scopes: [String]
    public var key: ScopeKey
    public var expiresOn: Double
    public var refreshOn: Double?
    public var cachedAt: Double
    /// The token's result document as the C ABI serves it from the cache, rendered when the token was stored.
    public var rendered: RenderedToken?

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

/// One account's entries.
public struct AccountEntry: Sendable {
    public var account: Account
    public var refreshToken: RefreshToken?
    /// By `ScopeKey.key`.
    public var accessTokens: [String: AccessToken] = [:]

    /// The token for `key`: the exact scope set (one hash lookup), else any usable token whose scopes include the
    /// request (MSAL's superset match), the one that lives longest.
    func accessToken(for key: ScopeKey, at now: Double) -> AccessToken? {
        if let exact = accessTokens[key.key], exact.isUsable(at: now) { return exact }
        return accessTokens.values.filter { key.set.isSubset(of: $0.key.set) && $0.isUsable(at: now) }
            .max { $0.expiresOn < $1.expiresOn }
    }

    /// MSAL's overlap rule on save: a new token replaces cached ones whose scopes intersect it.
    mutating func store(_ token: AccessToken) {
        accessTokens = accessTokens.filter {
            $0.value.key.set.isDisjoint(with: token.key.set) && !($0.value.key.set.isEmpty && token.key.set.isEmpty)
        }
        accessTokens[token.key.key] = token
    }
}

/// Everything the cache holds. Native auth keeps one signed-in account per client.
public struct CacheData: Sendable {
    public var accounts: [String: AccountEntry] = [:]
    public init() {}

    /// The signed-in account's entry (native auth keeps one).
    var current: AccountEntry? { accounts.first?.value }
}

/// Where the cache is persisted: the seam for persistent stores. `save` is called under the cache's write lock.
public protocol TokenStore: Sendable {
    func load() -> CacheData
    func save(_ data: CacheData)
}

/// The in-memory store (the default; nothing touches disk).
public struct MemoryTokenStore: TokenStore {
    public init() {}
    public func load() -> CacheData { CacheData() }
    public func save(_ data: CacheData) {}
}

/// The token cache. Reads take a shared lock (threads serving cached tokens never wait for each other); updates take
/// the exclusive lock and are saved through the store.
public final class TokenCache: @unchecked Sendable {  // `data` is guarded by `lock`
    private let store: any TokenStore
    private let lock = ReadWriteLock()
    private var data: CacheData
    /// Renders a token's cached-answer document once, when it is stored.
    let renderer: (@Sendable (AccessToken) -> RenderedToken?)?

    public init(store: any TokenStore = MemoryTokenStore(), renderer: (@Sendable (AccessToken) -> RenderedToken?)? = nil) {
        self.store = store
        self.renderer = renderer
        data = store.load()
    }

    enum Lookup {
        case noAccount
        case hit(AccessToken)
        case miss
    }

    /// The hot path: one shared lock, one hash lookup.
    func lookup(_ key: ScopeKey, at now: Double) -> Lookup {
        lock.withReadLock {
            guard let entry = data.current else { return .noAccount }
            guard let token = entry.accessToken(for: key, at: now) else { return .miss }
            return .hit(token)
        }
    }

    public func read<R>(_ body: (CacheData) -> R) -> R {
        lock.withReadLock { body(data) }
    }

    public func update<R>(_ body: (inout CacheData) -> R) -> R {
        lock.withWriteLock {
            let r = body(&data)
            store.save(data)
            return r
        }
    }

    /// `token` with its cached-answer document rendered.
    func rendering(_ token: AccessToken) -> AccessToken {
        var t = token
        t.rendered = renderer?(token)
        return t
    }
}
