internal import NativeAuthCrypto
public import NativeAuthJSON
import Synchronization

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
    /// Takes the store's exclusive refresh lock, which every process sharing the store takes around a refresh-token
    /// grant: one refresh per store at a time across processes, so a rotated refresh token is never presented twice.
    /// The lock is held until the answer's `release()`. Waiting ends at `deadline` (seconds since the epoch:
    /// `timeout`) or when `isCancelled` says so (`cancelled`); a thread that already holds the lock is answered
    /// `reentrant_call`. The lock is never held across user interaction. A store of one process's memory answers a
    /// hold that holds nothing.
    func acquireRefreshLock(deadline: Double, isCancelled: () -> Bool) throws(NativeAuthError) -> any RefreshLockHold
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

    public func acquireRefreshLock(
        deadline: Double,
        isCancelled: () -> Bool
    ) throws(NativeAuthError) -> any RefreshLockHold {
        NoRefreshLock()
    }
}

/// A store's refresh lock, held until `release()` (the first call releases it; later ones do nothing). The driver
/// releases every hold it took, whatever the refresh ended with; a hold dropped unreleased releases on deinit.
public protocol RefreshLockHold: AnyObject, Sendable {
    func release()
}

/// The hold of a store with no lock to take (one process's memory).
public final class NoRefreshLock: RefreshLockHold {
    public init() {}
    public func release() {}
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
