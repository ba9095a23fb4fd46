import Glibc
import NativeAuthCore
import Synchronization
import Testing

@testable import NativeAuthCache

/// A cache file sealed with `key` at `path`.
func sealedFile(_ path: String, key: Secret) throws {
    writeBytes(path, try CacheEncryption(key: key).seal(Array("{}".utf8)))
    chmod(path, 0o600)
}

func keyBytes(_ key: Secret) -> [UInt8] { key.withUnsafeBytes { Array($0) } }

/// Where the key of a keyring-protected cache is looked for (issue 28, defects 6 and 11): the store that held it
/// last time first, under the file's canonical name, and the key that sealed the file preferred.
@Suite struct CacheKeyLocationTests {
    @Test func theStoreThatHeldTheKeyLastTimeIsAskedFirst() throws {
        let dir = TempDir()
        let secrets = FakeKeyStore("secret_service")
        let kernel = FakeKeyStore("kernel_keyring")
        secrets.reachable.withLock { $0 = false }  // (no desktop when the key was made)
        let made = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        #expect(made.store == "kernel_keyring")
        try sealedFile(dir.file, key: made.key)
        #expect(readBytes(dir.file + ".key-store") == Array("kernel_keyring\n".utf8))

        // The session bus is back (or hangs): it is not asked, the kernel keyring holds the key.
        secrets.reachable.withLock { $0 = true }
        let asked = secrets.lookups.withLock { $0 }
        let found = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        #expect(found.store == "kernel_keyring" && found.key == made.key)
        #expect(secrets.lookups.withLock { $0 } == asked, "the Secret Service was asked")
    }

    @Test func aRememberedStoreWithoutTheKeyFallsBackToTheOthersInOrder() throws {
        let dir = TempDir()
        let secrets = FakeKeyStore("secret_service")
        let kernel = FakeKeyStore("kernel_keyring")
        let made = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        #expect(made.store == "secret_service")
        try sealedFile(dir.file, key: made.key)
        writeBytes(dir.file + ".key-store", Array("kernel_keyring\n".utf8))  // out of date
        let before = (kernel.asked.withLock { $0.count }, secrets.asked.withLock { $0.count })
        let found = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        #expect(found.store == "secret_service" && found.key == made.key)
        #expect(kernel.asked.withLock { $0.count } == before.0 + 1 && kernel.keys.withLock { $0.isEmpty })
        #expect(secrets.asked.withLock { $0.count } == before.1 + 1, "each store asked once")
        #expect(readBytes(dir.file + ".key-store") == Array("secret_service\n".utf8), "noted again")

        // Gone from both (a reboot, a deleted item): a new key, in the configured order; the file is set aside
        // later by the store, as before.
        secrets.keys.withLock { $0.removeAll() }
        let fresh = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        #expect(fresh.store == "secret_service" && !(fresh.key == made.key))
    }

    @Test func theRememberedStoreOutOfReachIsUnavailableNotANewKey() throws {
        let dir = TempDir()
        let secrets = FakeKeyStore("secret_service")
        let kernel = FakeKeyStore("kernel_keyring")
        let made = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
        try sealedFile(dir.file, key: made.key)
        secrets.reachable.withLock { $0 = false }  // an SSH session without the desktop's bus
        let before = secrets.lookups.withLock { $0 }
        do {
            _ = try CacheKeyring(stores: [secrets, kernel]).key(for: dir.file)
            Issue.record("expected keyring_unavailable")
        } catch {
            #expect(error.code == .keyringUnavailable)
            #expect(error.message.contains("Secret Service") && error.message.contains("no new key"))
        }
        #expect(kernel.keys.withLock { $0.isEmpty }, "no second key that would sign the user out")
        #expect(secrets.lookups.withLock { $0 } == before + 1, "asked once, not again after it failed")
    }

    @Test func theKeyThatSealedTheFileIsPreferred() throws {
        let dir = TempDir()
        let first = FakeKeyStore("kernel_keyring")
        let second = FakeKeyStore("secret_service")
        let wrong = try CacheKeyring(stores: [first]).key(for: dir.file)
        let right = try CacheKeyring(stores: [second]).key(for: dir.file)
        try sealedFile(dir.file, key: right.key)
        unlink(dir.file + ".key-store")
        let found = try CacheKeyring(stores: [first, second]).key(for: dir.file)
        #expect(found.store == "secret_service" && found.key == right.key)
        #expect(!(found.key == wrong.key))
    }

    @Test func keysAreNamedAfterTheRealDirectory() throws {
        let dir = TempDir()
        let real = dir.path + "/real"
        let link = dir.path + "/link"
        mkdir(real, 0o700)
        symlink(real, link)
        let realPath = CacheKeyring.keyName(for: dir.path + "/real/cache.json")
        #expect(CacheKeyring.keyName(for: link + "/cache.json") == realPath)
        #expect(CacheKeyring.keyName(for: dir.path + "/./link/../real/cache.json") == realPath)
        #expect(CacheKeyring.keyName(for: "/nonexistent-na-dir/cache.json") == "/nonexistent-na-dir/cache.json")

        let kernel = FakeKeyStore("kernel_keyring")
        let made = try CacheKeyring(stores: [kernel]).key(for: link + "/cache.json")
        #expect(kernel.keys.withLock { Array($0.keys) } == [realPath])
        let found = try CacheKeyring(stores: [kernel]).key(for: real + "/cache.json")
        #expect(found.key == made.key)
    }

    @Test func aKeyUnderThePathAsGivenIsFoundAndCopiedToTheCanonicalName() throws {
        let dir = TempDir()
        let real = dir.path + "/real"
        let link = dir.path + "/link"
        mkdir(real, 0o700)
        symlink(real, link)
        let kernel = FakeKeyStore("kernel_keyring")
        let old = try CacheKeyring(stores: [FakeKeyStore("x")]).key(for: dir.file).key
        kernel.keys.withLock { $0[link + "/cache.json"] = keyBytes(old) }  // an earlier version's name
        try sealedFile(real + "/cache.json", key: old)
        let found = try CacheKeyring(stores: [kernel]).key(for: link + "/cache.json")
        #expect(found.key == old)
        let canonical = CacheKeyring.keyName(for: real + "/cache.json")
        #expect(kernel.keys.withLock { $0[canonical] } == keyBytes(old), "copied")
        #expect(kernel.keys.withLock { $0[link + "/cache.json"] } == keyBytes(old), "left for earlier versions")
        #expect(kernel.asked.withLock { $0 } == [canonical, link + "/cache.json"])
    }
}
