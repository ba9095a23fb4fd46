import Glibc
import NativeAuthCore
import Synchronization
import Testing

@testable import NativeAuthCache

/// A key store in memory, which can be made unreachable.
final class FakeKeyStore: CacheKeyStore {
    let name: String
    let keys = Mutex<[String: [UInt8]]>([:])
    let reachable = Mutex(true)
    let lookups = Mutex(0)
    /// The names asked for, in order.
    let asked = Mutex<[String]>([])

    init(_ name: String) { self.name = name }

    func lookup(cachePath: String) throws(NativeAuthError) -> Secret? {
        lookups.withLock { $0 += 1 }
        asked.withLock { $0.append(cachePath) }
        guard reachable.withLock({ $0 }) else { throw NativeAuthError(.keyringUnavailable, "\(name) is down") }
        return keys.withLock { $0[cachePath] }.map { k in k.withUnsafeBytes { Secret(bytes: $0) } }
    }

    func store(_ key: Secret, cachePath: String) throws(NativeAuthError) {
        guard reachable.withLock({ $0 }) else { throw NativeAuthError(.keyringUnavailable, "\(name) is down") }
        let bytes = key.withUnsafeBytes { Array($0) }
        keys.withLock { $0[cachePath] = bytes }
    }
}

@Suite struct CacheKeyringTests {
    @Test func aKeyIsCreatedOnceAndFoundAfterwards() throws {
        let dir = TempDir()
        let secrets = FakeKeyStore("secret_service")
        let keyring = CacheKeyring(stores: [secrets, FakeKeyStore("kernel_keyring")])
        let first = try keyring.key(for: dir.file)
        #expect(first.store == "secret_service" && first.key.count == 32)
        let again = try keyring.key(for: dir.file)
        #expect(again.key == first.key)
        #expect(secrets.keys.withLock { $0.count } == 1)
        // Two files, two keys.
        let other = try keyring.key(for: dir.path + "/other.json")
        #expect(!(other.key == first.key))
    }

    @Test func autoFallsBackAndFindsAKeyWhereverItIs() throws {
        let dir = TempDir()
        let secrets = FakeKeyStore("secret_service")
        let kernel = FakeKeyStore("kernel_keyring")
        secrets.reachable.withLock { $0 = false }
        let made = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        #expect(made.store == "kernel_keyring")
        // The desktop comes back: the key in the kernel keyring still opens the file (no second key is made).
        secrets.reachable.withLock { $0 = true }
        let found = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        #expect(found.store == "kernel_keyring" && found.key == made.key)
        #expect(secrets.keys.withLock { $0.isEmpty })
    }

    @Test func noStoreIsAnErrorThatSaysWhatWasTriedAndTheWaysOut() throws {
        let dir = TempDir()
        let secrets = FakeKeyStore("secret_service")
        let kernel = FakeKeyStore("kernel_keyring")
        secrets.reachable.withLock { $0 = false }
        kernel.reachable.withLock { $0 = false }
        #expect(throws: NativeAuthError.self) { try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file) }
        do {
            _ = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        } catch {
            #expect(error.code == .keyringUnavailable)
            #expect(error.message.contains("Secret Service") && error.message.contains("kernel keyring"))
            #expect(error.message.contains("encryption_key") && error.message.contains("plaintext"))
        }
        #expect(access(dir.file, F_OK) != 0, "no plaintext file was made")
    }

    /// The key left the store while the encrypted file stayed: the file is set aside (never overwritten), the cache
    /// starts empty, and the next token or account call hears cache_key_invalid once.
    @Test func aLostKeySetsTheFileAsideAndSaysSoOnce() throws {
        let dir = TempDir()
        let keys = FakeKeyStore("secret_service")
        let keyring = CacheKeyring(stores: [keys])
        let old = try keyring.key(for: dir.file)
        let first = FileTokenStore(
            path: dir.file,
            environment: env,
            clientID: client,
            key: old.key,
            keyStore: old.store,
            logger: Logger()
        )
        _ = try first.load()
        _ = first.modify(current: [:]) { $0[makeEntry(1).account.homeAccountID] = makeEntry(1) }
        let sealed = readBytes(dir.file) ?? []
        #expect(sealed.starts(with: Array("NACE".utf8)))
        keys.keys.withLock { $0.removeAll() }  // the item was deleted

        let new = try keyring.key(for: dir.file)
        #expect(!(new.key == old.key))
        let second = FileTokenStore(
            path: dir.file,
            environment: env,
            clientID: client,
            key: new.key,
            keyStore: new.store,
            logger: Logger()
        )
        #expect(try second.load().isEmpty)
        #expect(second.takeNotice()?.code == .cacheKeyInvalid)
        #expect(second.takeNotice() == nil, "once")
        #expect(second.problem == .cacheKeyInvalid)
        let aside = entries(dir.path, prefix: "cache.json.corrupt-")
        #expect(aside.count == 1)
        #expect(readBytes(dir.path + "/" + (aside.first ?? "")) == sealed, "kept aside as it was")
        // A host's own key is not treated so: the same situation is an error at load.
        let hostKeyed = FileTokenStore(
            path: dir.file,
            environment: env,
            clientID: client,
            key: old.key,
            logger: Logger()
        )
        _ = second.modify(current: [:]) { $0[makeEntry(2).account.homeAccountID] = makeEntry(2) }
        #expect(throws: NativeAuthError.self) { try hostKeyed.load() }
    }
}
