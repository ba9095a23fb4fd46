import Foundation
import Glibc
import NativeAuthCore
import NativeAuthCrypto
import Testing

@testable import NativeAuthKeyring

/// A random 32-byte key and its bytes (to look for them where they must not be).
func randomKey() throws -> (Secret, [UInt8]) {
    let bytes = try SecureRandom.bytes(32)
    return (bytes.withUnsafeBytes { Secret(bytes: $0) }, bytes)
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// A unique absolute cache path (the file need not exist).
func uniqueCachePath(_ tag: String = "cache") -> String {
    "/tmp/na-kr-\(UUID().uuidString)/\(tag).json"
}

/// Runs `body`, which must throw `keyring_unavailable`, and answers the error and how long it took (seconds).
func expectUnavailable(
    _ body: () throws -> Void,
    sourceLocation: SourceLocation = #_sourceLocation
) -> (NativeAuthError?, Double) {
    let start = Monotonic.seconds()
    do {
        try body()
        Issue.record("expected keyring_unavailable, got success", sourceLocation: sourceLocation)
    } catch let error as NativeAuthError {
        #expect(error.code == .keyringUnavailable, "\(error)", sourceLocation: sourceLocation)
        return (error, Monotonic.seconds() - start)
    } catch {
        Issue.record("expected keyring_unavailable, got \(error)", sourceLocation: sourceLocation)
    }
    return (nil, Monotonic.seconds() - start)
}

/// The key must not appear in an error's text, raw or in hex or base64.
func expectNoKey(_ error: NativeAuthError?, _ key: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
    guard let error else { return }
    let text = "\(error) \(error.message)"
    for form in [hex(key), hex(key).uppercased(), Base64.urlEncode(key), Data(key).base64EncodedString()] {
        #expect(!text.contains(form), "the key in an error message", sourceLocation: sourceLocation)
    }
    #expect(!text.contains(String(decoding: key, as: UTF8.self)), sourceLocation: sourceLocation)
}

@Suite("SecretServiceKeyStore against gnome-keyring on a private bus")
struct SecretServiceKeyStoreTests {
    @Test("store, then lookup, gives the key back")
    func roundTrip() throws {
        let ss = try PrivateSecretService()
        let store = SecretServiceKeyStore(busAddress: ss.address)
        #expect(store.name == "secret_service")
        let (key, _) = try randomKey()
        let path = uniqueCachePath()
        try store.store(key, cachePath: path)
        #expect(try store.lookup(cachePath: path) == key)
        // A second store object (a second process would be the same): nothing is remembered in-process.
        #expect(try SecretServiceKeyStore(busAddress: ss.address).lookup(cachePath: path) == key)
    }

    @Test("two paths are two items, which secret-tool finds with their label and attributes")
    func twoPaths() throws {
        let ss = try PrivateSecretService()
        let store = SecretServiceKeyStore(busAddress: ss.address)
        let (k1, b1) = try randomKey()
        let (k2, _) = try randomKey()
        let p1 = uniqueCachePath("one")
        let p2 = uniqueCachePath("two")
        try store.store(k1, cachePath: p1)
        try store.store(k2, cachePath: p2)
        #expect(try store.lookup(cachePath: p1) == k1)
        #expect(try store.lookup(cachePath: p2) == k2)

        let found = try ss.secretTool(["search", "--all", "application", "nativeauth"])
        #expect(found.status == 0, "\(found.stderr)")
        let all = found.stdout + found.stderr  // secret-tool prints the item path on stderr, the rest on stdout
        #expect(all.components(separatedBy: "label = NativeAuth token cache key").count - 1 == 2, "\(all)")
        #expect(all.contains("attribute.cache_path = \(p1)"))
        #expect(all.contains("attribute.cache_path = \(p2)"))
        #expect(all.contains("schema = org.nativeauth.CacheKey"))
        // secret-tool reads the secret back: the key's bytes, as stored.
        let one = try ss.secretTool(["lookup", "application", "nativeauth", "cache_path", p1])
        #expect(one.output == b1)
    }

    @Test("the lookup of a path with no item is nil")
    func unknownPath() throws {
        let ss = try PrivateSecretService()
        let store = SecretServiceKeyStore(busAddress: ss.address)
        let (key, _) = try randomKey()
        try store.store(key, cachePath: uniqueCachePath())
        #expect(try store.lookup(cachePath: uniqueCachePath()) == nil)
    }

    @Test("a second store for a path replaces the item")
    func replace() throws {
        let ss = try PrivateSecretService()
        let store = SecretServiceKeyStore(busAddress: ss.address)
        let (k1, _) = try randomKey()
        let (k2, _) = try randomKey()
        let path = uniqueCachePath()
        try store.store(k1, cachePath: path)
        try store.store(k2, cachePath: path)
        #expect(try store.lookup(cachePath: path) == k2)
        let found = try ss.secretTool(["search", "--all", "cache_path", path])
        #expect((found.stdout + found.stderr).components(separatedBy: "label = ").count - 1 == 1)
    }

    @Test("an item deleted with secret-tool clear is no key")
    func cleared() throws {
        let ss = try PrivateSecretService()
        let store = SecretServiceKeyStore(busAddress: ss.address)
        let (key, _) = try randomKey()
        let path = uniqueCachePath()
        try store.store(key, cachePath: path)
        let r = try ss.secretTool(["clear", "application", "nativeauth", "cache_path", path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try store.lookup(cachePath: path) == nil)
    }

    @Test("a secret that is not 32 bytes is no key; a store replaces it")
    func wrongLength() throws {
        let ss = try PrivateSecretService()
        let store = SecretServiceKeyStore(busAddress: ss.address)
        let path = uniqueCachePath()
        let r = try ss.secretTool(
            [
                "store", "--label=other", "application", "nativeauth", "xdg:schema", "org.nativeauth.CacheKey",
                "cache_path", path,
            ],
            stdin: "short"
        )
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try store.lookup(cachePath: path) == nil)
        let (key, _) = try randomKey()
        try store.store(key, cachePath: path)
        #expect(try store.lookup(cachePath: path) == key)
    }

    @Test("a locked keyring that needs a prompt: lookup and store fail at once, without a prompt")
    func locked() throws {
        let ss = try PrivateSecretService()
        let store = SecretServiceKeyStore(busAddress: ss.address, timeout: 5)
        let (key, bytes) = try randomKey()
        let path = uniqueCachePath()
        try store.store(key, cachePath: path)
        try ss.lockDefaultCollection()

        let (lookupError, lookupTime) = expectUnavailable { _ = try store.lookup(cachePath: path) }
        #expect(lookupError?.message.contains("locked") == true, "\(String(describing: lookupError))")
        #expect(lookupTime < 2, "a locked keyring answers at once, not at the timeout")
        expectNoKey(lookupError, bytes)

        let (storeError, storeTime) = expectUnavailable { try store.store(key, cachePath: uniqueCachePath()) }
        #expect(storeError?.message.contains("locked") == true, "\(String(describing: storeError))")
        #expect(storeTime < 2)
        expectNoKey(storeError, bytes)

        // Nothing locked is found: a path with no item is still nil.
        #expect(try store.lookup(cachePath: uniqueCachePath()) == nil)
    }

    @Test("a cache path must be absolute")
    func relativePath() throws {
        let store = SecretServiceKeyStore(busAddress: "unix:path=/nonexistent")
        #expect(throws: NativeAuthError.self) { _ = try store.lookup(cachePath: "cache.json") }
    }
}

@Suite("SecretServiceKeyStore without a Secret Service: keyring_unavailable, within the timeout")
struct SecretServiceUnavailableTests {
    static let timeout = 0.5

    /// Both operations fail with keyring_unavailable within timeout + 1 s, and their messages hold no key.
    func expectBoundedFailure(_ store: SecretServiceKeyStore, mentioning words: [String]) throws {
        let (key, bytes) = try randomKey()
        let path = uniqueCachePath()
        for op in ["lookup", "store"] {
            let (error, elapsed) = expectUnavailable {
                if op == "lookup" {
                    _ = try store.lookup(cachePath: path)
                } else {
                    try store.store(key, cachePath: path)
                }
            }
            #expect(elapsed < store.timeout + 1, "\(op) took \(elapsed) s")
            expectNoKey(error, bytes)
            let message = error?.message ?? ""
            for w in words { #expect(message.contains(w), "\(op): \(message)") }
        }
    }

    @Test("no session bus address")
    func noAddress() throws {
        try expectBoundedFailure(SecretServiceKeyStore(busAddress: nil), mentioning: ["DBUS_SESSION_BUS_ADDRESS"])
    }

    @Test("an address with no usable transport")
    func unusableAddress() throws {
        try expectBoundedFailure(
            SecretServiceKeyStore(busAddress: "tcp:host=localhost,port=1;unix:tmpdir=/tmp"),
            mentioning: ["no usable D-Bus address", "tcp:host"]
        )
    }

    @Test("a socket path nobody listens on")
    func nobodyListens() throws {
        let dir = TempDir()
        try expectBoundedFailure(
            SecretServiceKeyStore(busAddress: "unix:path=\(dir.path)/bus", timeout: Self.timeout),
            mentioning: ["connect to unix:path="]
        )
        // A socket file whose listener is gone (ECONNREFUSED), and an abstract name nobody holds.
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        let path = Array("\(dir.path)/stale".utf8)
        withUnsafeMutableBytes(of: &a.sun_path) { for (i, b) in path.enumerated() { $0[i] = b } }
        _ = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(fd)
        try expectBoundedFailure(
            SecretServiceKeyStore(busAddress: "unix:path=\(dir.path)/stale", timeout: Self.timeout),
            mentioning: ["refused"]
        )
        try expectBoundedFailure(
            SecretServiceKeyStore(busAddress: "unix:abstract=na-kr-\(UUID().uuidString)", timeout: Self.timeout),
            mentioning: ["connect to unix:abstract="]
        )
    }

    @Test("a socket that accepts and never answers: the timeout ends the wait")
    func silentListener() throws {
        let silent = try SilentListener()
        try expectBoundedFailure(
            SecretServiceKeyStore(busAddress: silent.address, timeout: Self.timeout),
            mentioning: ["no answer within 0.5 s", "did not answer AUTH EXTERNAL"]
        )
        // Both connections were closed by the store (nothing is left open after a failure).
        let (accepted, closed) = silent.waitUntilClientsClose()
        #expect(accepted == 2 && closed == 2)
    }

    @Test("a bus without a Secret Service and nothing to start")
    func noService() throws {
        let ss = try PrivateSecretService(keyring: false)
        try expectBoundedFailure(
            SecretServiceKeyStore(busAddress: ss.address, timeout: Self.timeout),
            mentioning: ["no Secret Service", "ServiceUnknown"]
        )
    }

    @Test("a Secret Service the bus fails to start")
    func activationFails() throws {
        let ss = try PrivateSecretService(keyring: false, activatable: ["org.freedesktop.secrets": "/bin/false"])
        try expectBoundedFailure(
            SecretServiceKeyStore(busAddress: ss.address, timeout: 5),
            mentioning: ["no Secret Service", "Spawn"]
        )
    }

    @Test("a Secret Service the bus starts that never comes: our deadline, not the bus's 120 s")
    func activationHangs() throws {
        // The started program never takes the name (it sleeps a little longer than the test waits).
        let ss = try PrivateSecretService(keyring: false, activatable: ["org.freedesktop.secrets": "/bin/sleep 3"])
        try expectBoundedFailure(
            SecretServiceKeyStore(busAddress: ss.address, timeout: Self.timeout),
            mentioning: ["no answer within 0.5 s", "did not answer OpenSession"]
        )
    }
}
