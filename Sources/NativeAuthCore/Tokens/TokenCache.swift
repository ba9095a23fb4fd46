internal import NativeAuthCrypto
public import NativeAuthJSON
import Synchronization

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

    /// Takes the store's exclusive refresh lock (see `TokenStore.acquireRefreshLock`), then reads what other
    /// processes stored while this one waited for it.
    func acquireRefreshLock(deadline: Double, isCancelled: () -> Bool) throws(NativeAuthError) -> any RefreshLockHold {
        let hold = try store.acquireRefreshLock(deadline: deadline, isCancelled: isCancelled)
        refreshFromStore(thorough: true)
        return hold
    }
}
