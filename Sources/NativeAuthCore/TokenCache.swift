internal import NativeAuthCrypto
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
    public var claims: JSONValue {
        get { lazyClaims?.value ?? storedClaims }
        set {
            storedClaims = newValue
            lazyClaims = nil
        }
    }
    private var storedClaims: JSONValue
    /// Claims decoded from `idToken` when first read (accounts loaded from a persistent cache).
    private var lazyClaims: LazyClaims?
    /// The realm MSAL's unified token cache files this account's tokens under: the tenant segment of the token
    /// endpoint (OIDC discovery's, as MSAL Python's `Authority.tenant`), else of the authority.
    public var realm: String = ""

    public init(
        homeAccountID: String,
        username: String,
        tenantID: String,
        environment: String,
        idToken: String?,
        claims: JSONValue,
        realm: String = ""
    ) {
        self.homeAccountID = homeAccountID
        self.username = username
        self.tenantID = tenantID
        self.environment = environment
        self.idToken = idToken
        self.storedClaims = claims
        self.realm = realm
    }

    /// An account whose claims are decoded from `idToken` when first read (a store loading many accounts pays for
    /// the decoding of those it serves only).
    public init(
        homeAccountID: String,
        username: String,
        tenantID: String,
        environment: String,
        idToken: String?,
        claimsFromIDToken: Bool,
        realm: String = ""
    ) {
        self.init(
            homeAccountID: homeAccountID,
            username: username,
            tenantID: tenantID,
            environment: environment,
            idToken: idToken,
            claims: .object([:]),
            realm: realm
        )
        if claimsFromIDToken, let idToken { lazyClaims = LazyClaims(idToken) }
    }

    public static func == (a: Account, b: Account) -> Bool {
        guard a.homeAccountID == b.homeAccountID, a.username == b.username, a.tenantID == b.tenantID,
            a.environment == b.environment, a.idToken == b.idToken, a.realm == b.realm
        else { return false }
        if let x = a.lazyClaims, let y = b.lazyClaims, x === y { return true }
        return a.claims == b.claims
    }
}

/// An ID token's claims, decoded once when first read.
final class LazyClaims: Sendable {
    private let token: String
    private let decoded = Mutex<JSONValue?>(nil)

    init(_ token: String) { self.token = token }

    var value: JSONValue {
        decoded.withLock { d in
            if let d { return d }
            let claims = (try? JWT(decoding: token))?.claims ?? .object([:])
            d = claims
            return claims
        }
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
    /// The DPoP key the token is bound to (`token_type` DPoP: sent as `Authorization: DPoP` with a proof of it), or
    /// nil for a bearer token.
    public let dpopKey: DPoPKey?

    /// `"DPoP"` or `"Bearer"`.
    public var tokenType: String { dpopKey == nil ? "Bearer" : "DPoP" }

    public convenience init(
        value: Secret,
        scopes: [String],
        expiresOn: Double,
        refreshOn: Double?,
        cachedAt: Double,
        extExpiresOn: Double? = nil,
        dpopKey: DPoPKey? = nil
    ) {
        self.init(
            value: value,
            scopes: scopes,
            key: ScopeKey(scopes),
            expiresOn: expiresOn,
            refreshOn: refreshOn,
            cachedAt: cachedAt,
            extExpiresOn: extExpiresOn,
            dpopKey: dpopKey
        )
    }

    /// A token whose `key` is already known (it must be `ScopeKey(scopes)`): a store loading many tokens of the same
    /// scope sets computes each key once.
    public init(
        value: Secret,
        scopes: [String],
        key: ScopeKey,
        expiresOn: Double,
        refreshOn: Double?,
        cachedAt: Double,
        extExpiresOn: Double? = nil,
        dpopKey: DPoPKey? = nil
    ) {
        self.value = value
        self.scopes = scopes
        self.key = key
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn
        self.cachedAt = cachedAt
        self.extExpiresOn = extExpiresOn
        self.dpopKey = dpopKey
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

    public init(account: Account, refreshToken: RefreshToken?) {
        self.account = account
        self.refreshToken = refreshToken
    }

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

    /// MSAL's overlap rule on save: a new token replaces cached ones whose scopes intersect it. One key per account
    /// (DPoP): tokens bound to another key than the new one's — a new sign-in's new key, or none — go too.
    public mutating func store(_ token: AccessToken) {
        accessTokens = accessTokens.filter {
            $0.value.key.set.isDisjoint(with: token.key.set) && !($0.value.key.set.isEmpty && token.key.set.isEmpty)
                && Self.sameBinding($0.value.dpopKey, token.dpopKey)
        }
        accessTokens[token.key.key] = token
    }

    /// The account's DPoP key: its refresh token's, else its access tokens' (nil: a bearer account).
    public var dpopKey: DPoPKey? {
        refreshToken?.dpopKey ?? accessTokens.values.lazy.compactMap(\.dpopKey).first
    }

    /// Whether two tokens are bound alike: both bearer, or both to one key.
    public static func sameBinding(_ a: DPoPKey?, _ b: DPoPKey?) -> Bool {
        guard let a else { return b == nil }
        return a.same(as: b)
    }
}

/// Everything the cache holds: any number of accounts (a sign-in adds or replaces that user's account), and the
/// bookkeeping that keeps a sign-out from being undone by a call in flight.
public struct CacheData: Sendable {
    /// By `Account.homeAccountID`.
    public var accounts: [String: AccountEntry] = [:]
    /// Counts sign-outs; `signedOutAt` and `allSignedOutAt` say when each account, and everyone, last signed out.
    /// A sign-in or refresh that began before a sign-out of its account stores nothing after it.
    public var signOutEpoch: UInt64 = 0
    public var signedOutAt: [String: UInt64] = [:]
    public var allSignedOutAt: UInt64 = 0
    /// Numbers sign-in sessions (see `AccountEntry.session`).
    public var lastSession: UInt64 = 0
    public init() {}

    /// Whether `account` signed out (alone, or with everyone) after `epoch`.
    func signedOut(_ account: String, since epoch: UInt64) -> Bool {
        allSignedOutAt > epoch || (signedOutAt[account] ?? 0) > epoch
    }
}

/// Which account a call is about: the one it names (a `home_account_id`, or a username in any case), or — when it
/// names none — the only one.
public enum AccountSelection: Sendable, Equatable {
    case only
    case named(String)
}

/// What a store's read-modify-write left: the accounts as they now are, and — when they could not be written — why.
public struct StoreOutcome: Sendable {
    public var accounts: [String: AccountEntry]
    public var writeError: NativeAuthError?
    public init(accounts: [String: AccountEntry], writeError: NativeAuthError? = nil) {
        self.accounts = accounts
        self.writeError = writeError
    }
}

/// Where the cache is persisted: the seam for persistent stores (the in-memory store keeps nothing itself).
public protocol TokenStore: Sendable {
    /// The stored accounts, when the client starts and whenever `changeCounter` moved. Throws when the store must
    /// not be used (a wrong encryption key, an insecure file); a corrupt store is set aside and reads as empty.
    func load() throws(NativeAuthError) -> [String: AccountEntry]
    /// Applies `change` exactly once as one read-modify-write. `current` is the client's own view; a persistent
    /// store instead locks, re-reads what other processes wrote, applies the change to that and writes it
    /// atomically — so two processes never lose each other's entries. When it cannot read or write, it applies the
    /// change to `current` and answers why in `writeError`: the client then keeps the change in memory.
    func modify(current: [String: AccountEntry], _ change: (inout [String: AccountEntry]) -> Void) -> StoreOutcome
    /// Moves whenever the stored accounts may have changed outside this client (another process wrote them). Read
    /// on every cached-token call: an atomic load, never a system call.
    var changeCounter: UInt64 { get }
    /// Looks (with a system call if need be) whether the stored accounts changed outside this client, and moves
    /// `changeCounter` if so. Called on the paths that are about to do real work (a cache miss, an account lookup,
    /// before a refresh), never on a cache hit.
    func checkForChanges()
    /// Runs `body` under the store's exclusive refresh lock, which every process sharing the store takes around a
    /// refresh-token grant: one refresh per store at a time across processes, so a rotated refresh token is never
    /// presented twice. Waiting ends at `deadline` (seconds since the epoch: `timeout`) or when `isCancelled` says
    /// so (`cancelled`); a thread that already holds the lock is answered `reentrant_call`. The lock is never held
    /// across user interaction. A store of one process's memory runs `body` at once.
    func withExclusiveRefresh<R>(
        deadline: Double,
        isCancelled: () -> Bool,
        _ body: () throws(NativeAuthError) -> R
    ) throws(NativeAuthError) -> R
    /// Something the store must tell the app once, through the next token or account call (a file set aside because
    /// its key left the key store: `cache_key_invalid`); nil when there is nothing. Taking it clears it.
    func takeNotice() -> NativeAuthError?
    /// Makes sure this thread's next write can succeed, before a request that cannot be repeated is sent (a
    /// refresh-token grant: its rotated refresh token must be stored): a persistent store reserves the room for it.
    /// Throws `cache_write_failed` when there is no room (the request must then not be sent). The reservation is
    /// used by this thread's next `modify`, or given back by `releaseReservedWrite`.
    func reserveWrite() throws(NativeAuthError)
    /// Gives back what `reserveWrite` reserved and no write used.
    func releaseReservedWrite()
}

extension TokenStore {
    public func checkForChanges() {}

    public func reserveWrite() throws(NativeAuthError) {}

    public func releaseReservedWrite() {}

    public func takeNotice() -> NativeAuthError? { nil }

    public func withExclusiveRefresh<R>(
        deadline: Double,
        isCancelled: () -> Bool,
        _ body: () throws(NativeAuthError) -> R
    ) throws(NativeAuthError) -> R {
        try body()
    }
}

/// The in-memory store (the default; nothing touches disk).
public struct MemoryTokenStore: TokenStore {
    public init() {}
    public func load() throws(NativeAuthError) -> [String: AccountEntry] { [:] }
    public func modify(
        current: [String: AccountEntry],
        _ change: (inout [String: AccountEntry]) -> Void
    )
        -> StoreOutcome
    {
        var accounts = current
        change(&accounts)
        return StoreOutcome(accounts: accounts)
    }
    public var changeCounter: UInt64 { 0 }
}

/// The token cache. Reads take a shared lock (threads serving cached tokens never wait for each other); updates take
/// the exclusive lock and go through the store.
public final class TokenCache: @unchecked Sendable {  // `data`, `index` and `seenChanges` are guarded by `lock`
    let store: any TokenStore
    private let lock = ReadWriteLock()
    private var data: CacheData
    /// Each account's access tokens by scope key: the hot path's hash lookups.
    private var index: [String: [String: AccessToken]] = [:]
    /// The store's `changeCounter` the in-memory view reflects (written under the write lock; read without it).
    private let seenChanges = Atomic<UInt64>(0)
    /// Counts updates: an answer found at generation g is still the cache's answer while the generation is g (and
    /// the token is still within its lifetime).
    private let generationCounter = Atomic<UInt64>(0)

    /// Changes whenever the cache changes, here or (through the store) in another process.
    public var generation: UInt64 { generationCounter.load(ordering: .acquiring) &+ store.changeCounter }

    /// Loads the stored accounts; a store that cannot be read (a wrong key, an insecure file) is an error.
    public init(store: any TokenStore = MemoryTokenStore()) throws(NativeAuthError) {
        self.store = store
        data = CacheData()
        seenChanges.store(store.changeCounter, ordering: .relaxed)
        data.accounts = try store.load()
        reindex()
    }

    /// Sessions are this process's own bookkeeping, which a store does not keep: `stored` with the sessions of
    /// `mine` for the accounts that are still the same sign-in (the same refresh token).
    private static func keepingSessions(
        _ stored: [String: AccountEntry],
        from mine: [String: AccountEntry]
    ) -> [String: AccountEntry] {
        var merged = stored
        for (id, own) in mine where own.session != 0 {
            guard let entry = stored[id], entry.session == 0, own.refreshToken == entry.refreshToken else { continue }
            merged[id]?.session = own.session
        }
        return merged
    }

    private func reindex() {
        index = data.accounts.mapValues(\.accessTokens)
    }

    /// Reloads the in-memory view if the store changed outside this client (called before reads; `thorough` on
    /// paths about to do real work, where the store may spend a system call to look).
    /// Answers whether it reloaded.
    @discardableResult
    private func refreshFromStore(thorough: Bool = false) -> Bool {
        if thorough { store.checkForChanges() }
        let counter = store.changeCounter
        guard counter != seenChanges.load(ordering: .acquiring) else { return false }
        Logger.holdingLines { reload(counter) }
        return true
    }

    private func reload(_ counter: UInt64) {
        lock.withWriteLock {
            guard counter != seenChanges.load(ordering: .relaxed) else { return }
            // A store that cannot be read now keeps the in-memory view (it reported why when it failed).
            seenChanges.store(counter, ordering: .releasing)
            guard let accounts = try? store.load() else { return }
            data.accounts = Self.keepingSessions(accounts, from: data.accounts)
            reindex()
            generationCounter.add(1, ordering: .releasing)
        }
    }

    enum Lookup {
        case noAccount
        case accountRequired([Account])
        /// A usable token of `account`, and the cache generation it was found at.
        case hit(AccessToken, account: String, generation: UInt64)
        case miss(account: String)

        var isHit: Bool {
            if case .hit = self { return true }
            return false
        }
    }

    /// Which account a selection names: its id, or why there is none.
    enum Resolution {
        case account(String)
        case none(Lookup)
    }

    /// The account a selection names, under the lock.
    private func resolve(_ selection: AccountSelection) -> Resolution {
        switch selection {
        case .only:
            guard let first = data.accounts.first else { return .none(.noAccount) }
            guard data.accounts.count == 1 else {
                return .none(.accountRequired(data.accounts.values.map(\.account).sorted { $0.username < $1.username }))
            }
            return .account(first.key)
        case .named(let name):
            return Self.find(name, in: data.accounts).map { .account($0) } ?? .none(.noAccount)
        }
    }

    /// The account `name` names: a `home_account_id`, else a username in any case.
    static func find(_ name: String, in accounts: [String: AccountEntry]) -> String? {
        if accounts[name] != nil { return name }
        let lower = name.lowercased()
        return accounts.first(where: { $0.value.account.username.lowercased() == lower })?.key
    }

    /// A usable cached token for `key` of the selected account: the exact scope set by one hash lookup, else MSAL's
    /// superset match.
    func lookup(_ key: ScopeKey, account selection: AccountSelection, at now: Double) -> Lookup {
        refreshFromStore()
        var found = find(key, account: selection, at: now)
        // Not served from what this client holds: before real work, look whether another process changed the store
        // (a sign-in, a refresh) since the last look.
        if !found.isHit, refreshFromStore(thorough: true) { found = find(key, account: selection, at: now) }
        return found
    }

    private func find(_ key: ScopeKey, account selection: AccountSelection, at now: Double) -> Lookup {
        lock.withReadLock {
            let g = generationCounter.load(ordering: .relaxed) &+ seenChanges.load(ordering: .relaxed)
            let id: String
            switch resolve(selection) {
            case .account(let found): id = found
            case .none(let why): return why
            }
            if let exact = index[id]?[key.key], exact.isUsable(at: now) {
                return .hit(exact, account: id, generation: g)
            }
            guard let token = data.accounts[id]?.accessToken(for: key, at: now) else { return .miss(account: id) }
            return .hit(token, account: id, generation: g)
        }
    }

    /// The selected account's id, or why there is none.
    func account(_ selection: AccountSelection) -> Resolution {
        refreshFromStore(thorough: true)
        return lock.withReadLock { resolve(selection) }
    }

    /// A token for `key` past its expiry but within its extended lifetime (`ext_expires_in`), for when the server is
    /// unavailable.
    func extendedLookup(_ key: ScopeKey, account: String, at now: Double) -> AccessToken? {
        lock.withReadLock {
            guard let t = index[account]?[key.key], let ext = t.extExpiresOn, now < ext else { return nil }
            return t
        }
    }

    /// The store's notice, once (see `TokenStore.takeNotice`).
    func takeNotice() -> NativeAuthError? { store.takeNotice() }

    /// The current sign-out epoch (see `CacheData.signOutEpoch`).
    var signOutEpoch: UInt64 { lock.withReadLock { data.signOutEpoch } }

    public func read<R>(_ body: (CacheData) -> R) -> R {
        refreshFromStore(thorough: true)
        return lock.withReadLock { body(data) }
    }

    /// Changes the cache: `body` runs once, on the store's current view (for a persistent store, re-read under its
    /// lock). Its change is kept in memory even when the store could not write it: that failure is then thrown, after
    /// the change took effect here (the caller's result is lost with it, so `body` should return what it needs only
    /// when the caller also handles the failure).
    @discardableResult
    public func update<R>(_ body: (inout CacheData) -> R) throws(NativeAuthError) -> R {
        // The store may log (a file it had to set aside): those lines wait until the lock is released.
        try Logger.holdingLines { () throws(NativeAuthError) -> R in try locked(body) }
    }

    private func locked<R>(_ body: (inout CacheData) -> R) throws(NativeAuthError) -> R {
        try lock.withWriteLock { () throws(NativeAuthError) -> R in
            var d = data
            var result: R? = nil
            let mine = data.accounts
            let outcome = store.modify(current: data.accounts) { accounts in
                d.accounts = Self.keepingSessions(accounts, from: mine)
                result = body(&d)
                accounts = d.accounts
            }
            d.accounts = outcome.accounts
            data = d
            seenChanges.store(store.changeCounter, ordering: .releasing)
            reindex()
            generationCounter.add(1, ordering: .releasing)
            if let failure = outcome.writeError { throw failure }
            guard let result else { throw NativeAuthError(.internal, "a cache update produced no result") }
            return result
        }
    }

    /// Runs `body` under the store's exclusive refresh lock (see `TokenStore.withExclusiveRefresh`), after reading
    /// what other processes stored while this one waited for it.
    func exclusiveRefresh<R>(
        deadline: Double,
        isCancelled: () -> Bool,
        _ body: () throws(NativeAuthError) -> R
    ) throws(NativeAuthError) -> R {
        try store.withExclusiveRefresh(deadline: deadline, isCancelled: isCancelled) {
            () throws(NativeAuthError) -> R in
            refreshFromStore(thorough: true)
            return try body()
        }
    }
}
