internal import Glibc
public import NativeAuthCore
internal import NativeAuthCrypto

/// Finds the key of a keyring-protected cache file, or creates it: a random 32-byte key, kept in the first key store
/// that answers. `auto` asks the Secret Service, then the kernel keyring; a key found in either is used (so a key
/// kept in the kernel keyring while no desktop was there still opens the file once a desktop is). A new key is made
/// under the cache file's write lock, after asking again, so two processes starting at once agree on one key.
public struct CacheKeyring: Sendable {
    public let stores: [any CacheKeyStore]

    public init(stores: [any CacheKeyStore]) { self.stores = stores }

    /// A key and the store that holds it.
    public struct Found: Sendable {
        public let key: Secret
        public let store: String
    }

    /// The key for the cache file at `path`. Throws `keyring_unavailable` when no store answers, naming what was
    /// tried and the ways out.
    public func key(for path: String) throws(NativeAuthError) -> Found {
        var reachable: [any CacheKeyStore] = []
        var failures: [String] = []
        for store in stores {
            do throws(NativeAuthError) {
                if let key = try store.lookup(cachePath: path) { return Found(key: key, store: store.name) }
                reachable.append(store)
            } catch {
                // "the Secret Service (D-Bus): no session bus …", not "…: Secret Service: no session bus ….".
                var message = Substring(error.message)
                for own in ["Secret Service: ", "Kernel keyring: "] where message.hasPrefix(own) {
                    message = message.dropFirst(own.count)
                }
                while message.last == "." { message = message.dropLast() }
                failures.append("\(Self.label(store.name)): \(message)")
            }
        }
        guard let first = reachable.first else { throw Self.unavailable(failures) }
        return try create(in: first, for: path)
    }

    /// Makes a key under the cache file's write lock (asking `store` again first: another process may have made it).
    private func create(in store: any CacheKeyStore, for path: String) throws(NativeAuthError) -> Found {
        let dir = CacheFiles.directory(of: path)
        try CacheFiles.makeDirectories(dir)
        _ = try CacheFiles.checkDirectory(dir)
        let lock = try CacheLock(path + ".lockfile")
        defer { lock.release() }
        if let key = try store.lookup(cachePath: path) { return Found(key: key, store: store.name) }
        var bytes: [UInt8]
        do { bytes = try SecureRandom.bytes(32) } catch {
            throw NativeAuthError(.internal, "The system random generator failed.")
        }
        defer { bytes.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } } }
        let key = bytes.withUnsafeBytes { Secret(bytes: $0) }
        try store.store(key, cachePath: path)
        return Found(key: key, store: store.name)
    }

    static func label(_ name: String) -> String {
        switch name {
        case "secret_service": return "the Secret Service (D-Bus)"
        case "kernel_keyring": return "the kernel keyring"
        default: return name
        }
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
}
