public import NativeAuthCore

/// Where a file cache's encryption key lives when the host does not supply one (`"key_store"`): a random 32-byte key,
/// created on first use and kept in the user's Secret Service (the desktop's keychain) or persistent kernel keyring,
/// one per cache file (named by its absolute path). The implementations (NativeAuthKeyring) are wired in by the
/// composition root; the cache only asks.
public protocol CacheKeyStore: Sendable {
    /// Which store this is, as `na_client_info` reports it ("secret_service", "kernel_keyring").
    var name: String { get }
    /// The key kept for the cache file at `cachePath`, or nil when there is none. Throws `keyring_unavailable` when
    /// the store cannot be reached, or answers too late, or is locked with no one to unlock it.
    func lookup(cachePath: String) throws(NativeAuthError) -> Secret?
    /// Keeps `key` for the cache file at `cachePath`, replacing any key kept for it. Throws `keyring_unavailable`.
    func store(_ key: Secret, cachePath: String) throws(NativeAuthError)
}
