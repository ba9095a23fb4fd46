internal import Glibc
public import NativeAuthCore
internal import NativeAuthCrypto

/// Finds the key of a keyring-protected cache file, or creates it: a random 32-byte key, kept in the first key store
/// that answers. A new key is made under the cache file's write lock, after asking again, so two processes starting
/// at once agree on one key.
///
/// - Names: a key is kept under the file's canonical path (`CacheKeyLocation.canonicalPath`: the real directory and
///   the file's name), so the same file reached through a symlinked directory finds the same key. A key kept under
///   the path as given (how earlier versions named it) is found too when the canonical name has none, and copied to
///   the canonical name (the old entry stays, for earlier versions still running).
/// - Order: the store that held the key last time (noted beside the file, `<path>.key-store`) is asked first, then
///   the others in the configured order (`auto`: the Secret Service, then the kernel keyring) — so a key kept in the
///   kernel keyring is found without a word to a session bus that hangs. Each store is asked at most once per name,
///   and not again once it failed: the whole search is bounded by one timeout per store.
/// - Which key: when the file is encrypted, a key whose id is not the one in the file's header is passed over while
///   another store or name may hold the right one. If none does, the key the stores hold is used (the file is then
///   set aside by `FileTokenStore`: its key left the store), and with no key anywhere a new one is made — but not
///   while the store the note names cannot be reached (nor, without a note, any store): the file's key is probably
///   there, and the answer is `keyring_unavailable` rather than a new key that would sign the user out.
public struct CacheKeyring: Sendable {
    public let stores: [any CacheKeyStore]

    public init(stores: [any CacheKeyStore]) { self.stores = stores }

    /// A key and the store that holds it.
    public struct Found: Sendable {
        public let key: Secret
        public let store: String
    }

    /// The name the key of the cache file at `path` is kept under (the canonical path; `path` itself when its
    /// directory does not exist).
    public static func keyName(for path: String) -> String { CacheKeyLocation.canonicalPath(path) ?? path }

    /// The key for the cache file at `path`. Throws `keyring_unavailable` when no store answers, naming what was
    /// tried and the ways out.
    public func key(for path: String) throws(NativeAuthError) -> Found {
        let canonical = Self.keyName(for: path)
        let names = canonical == path ? [path] : [canonical, path]
        let sealedWith = CacheKeyLocation.sealedKeyID(path)
        let hint = CacheKeyLocation.readHint(path, names: stores.map(\.name))
        var reachable: Set<String> = []
        var unreachable: [String] = []
        var failures: [String] = []
        var other: Found? = nil
        for store in ordered(first: hint) {
            do throws(NativeAuthError) {
                for name in names {
                    guard let key = try store.lookup(cachePath: name) else { continue }
                    let found = Found(key: key, store: store.name)
                    if let sealedWith, CacheEncryption(key: key).keyID != sealedWith {
                        // Not the file's key: another store or name may hold it.
                        if name == canonical && other == nil { other = found }
                        continue
                    }
                    if name != canonical { try? store.store(key, cachePath: canonical) }
                    if hint != store.name { CacheKeyLocation.writeHint(path, store: store.name) }
                    return found
                }
                reachable.insert(store.name)
            } catch {
                unreachable.append(store.name)
                failures.append("\(Self.label(store.name)): \(Self.reason(error))")
            }
        }
        if sealedWith != nil, let hint, !reachable.contains(hint) {
            throw Self.unreachable(hint, failures)
        }
        // No note (a file an earlier version wrote, a note that could not be written): a store that could not be
        // reached may hold the file's key just as well — no new key while one could not be asked.
        if sealedWith != nil, hint == nil, let store = unreachable.first {
            throw Self.unreachable(store, failures, noted: false)
        }
        if let other {
            if hint != other.store { CacheKeyLocation.writeHint(path, store: other.store) }
            return other
        }
        guard let first = stores.first(where: { reachable.contains($0.name) }) else {
            throw Self.unavailable(failures)
        }
        return try create(in: first, for: path)
    }

    /// The stores, `first` (the one the note names) ahead of the others.
    private func ordered(first: String?) -> [any CacheKeyStore] {
        guard let first, let at = stores.firstIndex(where: { $0.name == first }) else { return stores }
        var out = stores
        out.insert(out.remove(at: at), at: 0)
        return out
    }

    /// Makes a key under the cache file's write lock (asking `store` again first: another process may have made it).
    private func create(in store: any CacheKeyStore, for path: String) throws(NativeAuthError) -> Found {
        let dir = FileTokenStore.Files.directory(of: path)
        try FileTokenStore.Files.makeDirectories(dir)
        _ = try FileTokenStore.Files.checkDirectory(dir)
        let name = Self.keyName(for: path)  // (the directory exists now)
        let lock = try CacheLock(path + ".lockfile")
        defer { lock.release() }
        if let key = try store.lookup(cachePath: name) {
            CacheKeyLocation.writeHint(path, store: store.name)
            return Found(key: key, store: store.name)
        }
        var bytes: [UInt8]
        do { bytes = try SecureRandom.bytes(32) } catch {
            throw NativeAuthError(.internal, "The system random generator failed.")
        }
        defer { bytes.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } } }
        let key = bytes.withUnsafeBytes { Secret(bytes: $0) }
        try store.store(key, cachePath: name)
        CacheKeyLocation.writeHint(path, store: store.name)
        return Found(key: key, store: store.name)
    }

    static func label(_ name: String) -> String {
        switch name {
        case "secret_service": return "the Secret Service (D-Bus)"
        case "kernel_keyring": return "the kernel keyring"
        default: return name
        }
    }

    /// A store's error without its own prefix: "the Secret Service (D-Bus): no session bus …", not "…: Secret
    /// Service: no session bus ….".
    static func reason(_ error: NativeAuthError) -> Substring {
        var message = Substring(error.message)
        for own in ["Secret Service: ", "Kernel keyring: "] where message.hasPrefix(own) {
            message = message.dropFirst(own.count)
        }
        while message.last == "." { message = message.dropLast() }
        return message
    }

    static func unavailable(_ failures: [String]) -> NativeAuthError {
        NativeAuthError(
            .keyringUnavailable,
            "No key store could keep the token cache's key (tried "
                + failures.joined(separator: "; ")
                + "). Give the cache an \"encryption_key\" to manage the key yourself, or ask for a plaintext cache "
                + "explicitly (no \"key_store\")."
        )
    }

    /// The encrypted file's key was kept in `store` (the note says so; or, without a note, may be), which cannot be
    /// reached now.
    static func unreachable(_ store: String, _ failures: [String], noted: Bool = true) -> NativeAuthError {
        NativeAuthError(
            .keyringUnavailable,
            "The token cache file's key "
                + (noted ? "is kept in" : "was not found in the key stores that answered, and may be kept in")
                + " \(label(store)), which cannot be reached now (tried "
                + failures.joined(separator: "; ")
                + "); no new key was made, which would set the file aside and sign the user out. Reach that store "
                + "again, or remove the file to start afresh."
        )
    }
}
