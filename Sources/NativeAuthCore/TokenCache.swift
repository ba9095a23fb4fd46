public import NativeAuthJSON
import Synchronization

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

/// A cached access token (immutable; shared by reference, so serving one from the cache copies one pointer).
public final class AccessToken: Sendable {
    public let value: Secret
    /// The scopes as the server granted them.
    public let scopes: [String]
    public let key: ScopeKey
    public let expiresOn: Double
    public let refreshOn: Double?
    public let cachedAt: Double
    /// The server's `ext_expires_in` as a time: while the server is unavailable (5xx, no connection) a token past its
    /// expiry is still served until then, as MSAL iOS does with extended lifetimes.
    public let extExpiresOn: Double?
    /// The token's result document as the C ABI serves it from the cache, rendered when the token was stored.
    public let rendered: RenderedToken?

    public init(
        value: Secret,
        scopes: [String],
        expiresOn: Double,
        refreshOn: Double?,
        cachedAt: Double,
        extExpiresOn: Double? = nil
    ) {
        self.value = value
        self.scopes = scopes
        self.key = ScopeKey(scopes)
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn
        self.cachedAt = cachedAt
        self.extExpiresOn = extExpiresOn
        self.rendered = nil
    }

    private init(_ t: AccessToken, rendered: RenderedToken?) {
        value = t.value
        scopes = t.scopes
        key = t.key
        expiresOn = t.expiresOn
        refreshOn = t.refreshOn
        cachedAt = t.cachedAt
        extExpiresOn = t.extExpiresOn
        self.rendered = rendered
    }

    /// This token with its cached-answer document rendered by `renderer`.
    func rendering(with renderer: (@Sendable (AccessToken) -> RenderedToken?)?) -> AccessToken {
        guard let renderer else { return self }
        return AccessToken(self, rendered: renderer(self))
    }

    public var validity: TokenValidity {
        TokenValidity(expiresOn: expiresOn, cachedAt: cachedAt, refreshOn: refreshOn)
    }

    public func isUsable(at now: Double) -> Bool { validity.isUsable(at: now) }
    public func wantsRefresh(at now: Double) -> Bool { validity.wantsRefresh(at: now) }
}

/// When a cached token may be served.
public struct TokenValidity: Sendable {
    public var expiresOn: Double
    public var cachedAt: Double
    public var refreshOn: Double?

    /// MSAL's expiry buffer: a token is served only while more than 5 minutes of its lifetime remain, whatever
    /// that lifetime (MSAL's common core `MSIDAccessToken` has `s_expirationBuffer = 300`; MSAL Python's
    /// `acquire_token_silent` treats `expires_on - now < 5*60` as expired). A token issued for 5 minutes or less is
    /// therefore never served from the cache. A token "cached" in the future (a clock set back) is not served either.
    public static let expiryBuffer = 300.0

    public func isUsable(at now: Double) -> Bool {
        now < expiresOn - Self.expiryBuffer && cachedAt <= now + 1
    }

    /// Past the server's `refresh_in`: refresh early.
    public func wantsRefresh(at now: Double) -> Bool {
        guard let refreshOn else { return false }
        return now >= refreshOn
    }

    /// Served from the cache as it is: usable, and not due for an early refresh.
    public func isServable(at now: Double) -> Bool { isUsable(at: now) && !wantsRefresh(at: now) }
}

/// One account's entries.
public struct AccountEntry: Sendable {
    public var account: Account
    public var refreshToken: RefreshToken?
    /// The scopes the sign-in asked for: what `na_get_access_token` without scopes means (MSAL iOS's
    /// `getAccessToken()` without scopes returns the sign-in's token).
    public var signInScopes: [String] = []
    /// Which sign-in this entry comes from: a refresh that began under an earlier sign-in of the same account
    /// stores nothing into a later one.
    public var session: UInt64 = 0
    /// By `ScopeKey.key`.
    public var accessTokens: [String: AccessToken] = [:]

    /// The token for `key`: the exact scope set (one hash lookup), else any usable token whose scopes include the
    /// request (MSAL's superset match), the one that lives longest.
    func accessToken(for key: ScopeKey, at now: Double) -> AccessToken? {
        if let exact = accessTokens[key.key], exact.isUsable(at: now) { return exact }
        // An empty set (OIDC scopes only) is a subset of everything: it matches only its own exact entry, never a
        // token cached later for some API.
        guard !key.set.isEmpty else { return nil }
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
    /// Counts sign-outs: a sign-in or refresh that began before one stores nothing after it.
    public var signOutEpoch: UInt64 = 0
    /// Numbers sign-in sessions (see `AccountEntry.session`).
    public var lastSession: UInt64 = 0
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
public final class TokenCache: @unchecked Sendable {  // `data` and `index` are guarded by `lock`
    private let store: any TokenStore
    private let lock = ReadWriteLock()
    private var data: CacheData
    /// The current account's access tokens by scope key: the hot path's one hash lookup.
    private var index: [String: AccessToken] = [:]
    /// Renders a token's cached-answer document once, when it is stored.
    let renderer: (@Sendable (AccessToken) -> RenderedToken?)?
    /// Counts updates: an answer found at generation g is still the cache's answer while the generation is g (and
    /// the token is still within its lifetime).
    private let generationCounter = Atomic<UInt64>(0)

    public var generation: UInt64 { generationCounter.load(ordering: .acquiring) }

    public init(
        store: any TokenStore = MemoryTokenStore(),
        renderer: (@Sendable (AccessToken) -> RenderedToken?)? = nil
    ) {
        self.store = store
        self.renderer = renderer
        data = store.load()
        index = data.current?.accessTokens ?? [:]
    }

    enum Lookup {
        case noAccount
        /// A usable token, and the cache generation it was found at.
        case hit(AccessToken, generation: UInt64)
        case miss
    }

    /// A usable cached token for `key`: the exact scope set by one hash lookup, else MSAL's superset match.
    func lookup(_ key: ScopeKey, at now: Double) -> Lookup {
        lock.withReadLock {
            let g = generationCounter.load(ordering: .relaxed)  // stable: updates take the write lock
            if let exact = index[key.key], exact.isUsable(at: now) { return .hit(exact, generation: g) }
            guard let entry = data.current else { return .noAccount }
            guard let token = entry.accessToken(for: key, at: now) else { return .miss }
            return .hit(token, generation: g)
        }
    }

    /// A token for `key` past its expiry but within its extended lifetime (`ext_expires_in`), for when the server is
    /// unavailable.
    func extendedLookup(_ key: ScopeKey, at now: Double) -> AccessToken? {
        lock.withReadLock {
            guard let t = index[key.key], let ext = t.extExpiresOn, now < ext else { return nil }
            return t
        }
    }

    /// The current sign-out epoch (see `CacheData.signOutEpoch`).
    var signOutEpoch: UInt64 { lock.withReadLock { data.signOutEpoch } }

    public func read<R>(_ body: (CacheData) -> R) -> R {
        lock.withReadLock { body(data) }
    }

    public func update<R>(_ body: (inout CacheData) -> R) -> R {
        lock.withWriteLock {
            let r = body(&data)
            index = data.current?.accessTokens ?? [:]
            generationCounter.add(1, ordering: .releasing)
            store.save(data)
            return r
        }
    }

    /// `token` with its cached-answer document rendered.
    func rendering(_ token: AccessToken) -> AccessToken { token.rendering(with: renderer) }
}
