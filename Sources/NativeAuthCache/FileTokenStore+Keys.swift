internal import Glibc
internal import NativeAuthCore

/// The encrypted file cache and files that are not sealed with its key: a file whose key left the key store (set
/// aside), and a plaintext file where the encrypted one should be (refused, or encrypted once when asked to).
extension FileTokenStore {
    /// Whether `bytes` is empty or only white space: an empty cache, as MSAL for Python reads it.
    static func isBlank(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x0a || $0 == 0x0d || $0 == 0x09 }
    }

    /// Whether `bytes` is a file an encrypted cache does not read as it is: not blank, and not in the encrypted
    /// format. (Whether it is JSON is not looked at: it is not read.)
    static func isPlaintext(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !isBlank(bytes) && !CacheEncryption.isSealed(bytes)
    }

    /// A plaintext file where this cache's encrypted one should be: refused, not read.
    func plaintextRefused() -> NativeAuthError {
        NativeAuthError(
            .cacheKeyInvalid,
            "The token cache file is plaintext, but this cache is encrypted (its key "
                + (keyStore.map { "is kept in the \(Self.storeLabel($0))" } ?? "is the configured encryption_key")
                + "): the file is not read, and not encrypted unasked. To encrypt it once, keeping its sign-ins, set "
                + "\"migrate_plaintext_cache\": true in the cache configuration (on the command line: nativeauth "
                + "cache encrypt); or remove it to start afresh."
        )
    }

    /// A plaintext file found by `refresh` while a key is configured. Without `migratePlaintext` it is refused
    /// (`cache_key_invalid`; said once in the log): its accounts are never listed or used, and it is left as it is.
    /// With it, it is read once under the write lock and replaced by its encrypted version, and the log says so.
    func readPlaintext(_ s: inout State, _ signature: FileSignature, locked: Bool) throws(NativeAuthError) {
        guard migratePlaintext else {
            let error = plaintextRefused()
            report(&s, .warning, "plaintext:\(signature.inode):\(signature.size)", error.message)
            throw error
        }
        var lock: CacheLock? = nil
        if !locked {
            do throws(NativeAuthError) { lock = try CacheLock(lockPath) } catch {
                throw NativeAuthError(
                    .cacheWriteFailed,
                    "The plaintext token cache file could not be locked to "
                        + "encrypt it (\(error.message))"
                )
            }
        }
        defer { lock?.release() }
        var readableByOthers = false
        guard
            case .contents(let bytes, let current) = try FileTokenStore.Files.read(
                path,
                readableByOthers: &readableByOthers
            )
        else {
            s.signature = nil
            s.document = MSALCacheFormat.Document()
            s.view = [:]
            return
        }
        guard Self.isPlaintext(bytes.buffer) else {
            // Replaced meanwhile by another process (encrypted, or emptied): read as any file is.
            guard let document = try parse(bytes) else { return try refreshCorrupt(&s, current) }
            s.signature = current
            s.document = document
            s.view = format.accounts(in: document)
            return
        }
        guard let document = MSALCacheFormat.Document(parsing: bytes, owner: owner) else {
            return try refreshCorrupt(&s, current)
        }
        FileTokenStore.Files.removeStaleTemporaries(path)
        let written = try write(document)
        s.signature = written
        s.announced = nil
        s.document = document
        s.view = format.accounts(in: document)
        s.problem = nil
        report(
            &s,
            .info,
            "migrated",
            "The plaintext token cache file was encrypted (migrate_plaintext_cache): programs without its key, such "
                + "as MSAL for Python, can no longer read it."
        )
    }

    static func storeLabel(_ name: String) -> String {
        name == "kernel_keyring" ? "kernel keyring" : "Secret Service"
    }

    /// A file the key store's key does not open: its own key left the store. It is set aside like a corrupt file
    /// (never overwritten), the cache starts empty, and the next token or account call answers `cache_key_invalid`
    /// once, so the app knows why the user must sign in again.
    func setAsideLost(_ s: inout State, _ signature: FileSignature, locked: Bool) throws(NativeAuthError) {
        var lock: CacheLock? = nil
        if !locked {
            do throws(NativeAuthError) { lock = try CacheLock(lockPath) } catch {
                throw NativeAuthError(.cacheUnreadable, "The token cache file could not be locked to set it aside.")
            }
        }
        defer { lock?.release() }
        // Another process may have replaced it meanwhile (with a file this key opens): read that one.
        if FileSignature.of(path) != signature {
            var readableByOthers = false
            if case .contents(let bytes, let sig) = try FileTokenStore.Files.read(
                path,
                readableByOthers: &readableByOthers
            ) {
                if Self.isPlaintext(bytes.buffer) { return try readPlaintext(&s, sig, locked: true) }
                if let document = try? parse(bytes) {
                    s.signature = sig
                    s.document = document
                    s.view = format.accounts(in: document)
                    return
                }
            }
        }
        guard let aside = FileTokenStore.Files.setAside(path) else {
            throw NativeAuthError(.cacheUnreadable, "The token cache file's key is gone and it could not be set aside.")
        }
        let name = aside.split(separator: "/").last.map(String.init) ?? aside
        let message =
            "The token cache file's key is no longer in the \(keyStoreLabel) (the item was deleted, the keyring "
            + "reset, or the machine restarted); the file was kept aside as \(name) and the cache starts empty: the "
            + "user must sign in again."
        report(&s, .warning, "lost:\(name)", message)
        s.notice = NativeAuthError(.cacheKeyInvalid, message)
        s.problem = .cacheKeyInvalid
        s.signature = nil
        s.document = MSALCacheFormat.Document()
        s.view = [:]
    }

    var keyStoreLabel: String { Self.storeLabel(keyStore ?? "") }
}
