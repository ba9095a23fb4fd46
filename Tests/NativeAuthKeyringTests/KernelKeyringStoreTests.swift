import Foundation
import Glibc
import NativeAuthCore
import NativeAuthCrypto
import Testing

@testable import NativeAuthKeyring

/// Runs `script` with `sh` in a new session keyring to which the persistent keyring is linked (`$P`), as another
/// program of the user would reach the key; `$DESC` is `description`.
func keyctlShell(_ script: String, description: String, stdin: String? = nil) throws -> CommandResult {
    var env = ProcessInfo.processInfo.environment
    env["DESC"] = description
    return try runCommand(
        ["keyctl", "session", "-", "sh", "-c", "P=$(keyctl get_persistent @s) || exit 9; " + script],
        environment: env,
        stdin: stdin
    )
}

@Suite("KernelKeyringStore in the persistent kernel keyring")
struct KernelKeyringStoreTests {
    let store = KernelKeyringStore()

    @Test("store, then lookup, gives the key back; the key is the user's and the possessor's only")
    func roundTrip() throws {
        #expect(store.name == "kernel_keyring")
        let (key, _) = try randomKey()
        let path = uniqueCachePath()
        defer { _ = try? store.remove(cachePath: path) }
        try store.store(key, cachePath: path)
        #expect(try store.lookup(cachePath: path) == key)
        // Another process of the user finds it by its name, with possessor and user "all", nothing for others.
        let description = try KernelKeyringStore.description(for: path)
        #expect(description == "nativeauth:cache-key:" + path)
        let r = try keyctlShell(#"keyctl rdescribe "$(keyctl search "$P" user "$DESC")""#, description: description)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix("user;\(getuid());"), "\(r.stdout)")
        #expect(r.stdout.contains(";3f3f0000;nativeauth:cache-key:\(path)"), "\(r.stdout)")
    }

    @Test("a second store for a path replaces the key")
    func replace() throws {
        let (k1, _) = try randomKey()
        let (k2, _) = try randomKey()
        let path = uniqueCachePath()
        defer { _ = try? store.remove(cachePath: path) }
        try store.store(k1, cachePath: path)
        try store.store(k2, cachePath: path)
        #expect(try store.lookup(cachePath: path) == k2)
    }

    @Test("the lookup of a path with no key is nil")
    func unknownPath() throws {
        #expect(try store.lookup(cachePath: uniqueCachePath()) == nil)
    }

    @Test("a key revoked with keyctl is no key; a store puts a new one in its place")
    func revoked() throws {
        let (key, _) = try randomKey()
        let path = uniqueCachePath()
        defer { _ = try? store.remove(cachePath: path) }
        try store.store(key, cachePath: path)
        let r = try keyctlShell(
            #"keyctl revoke "$(keyctl search "$P" user "$DESC")""#,
            description: try KernelKeyringStore.description(for: path)
        )
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try store.lookup(cachePath: path) == nil)
        let (k2, _) = try randomKey()
        try store.store(k2, cachePath: path)
        #expect(try store.lookup(cachePath: path) == k2)
    }

    @Test("a key unlinked with keyctl is no key")
    func unlinked() throws {
        let (key, _) = try randomKey()
        let path = uniqueCachePath()
        defer { _ = try? store.remove(cachePath: path) }
        try store.store(key, cachePath: path)
        let r = try keyctlShell(
            #"keyctl unlink "$(keyctl search "$P" user "$DESC")" "$P""#,
            description: try KernelKeyringStore.description(for: path)
        )
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try store.lookup(cachePath: path) == nil)
        #expect(try store.remove(cachePath: path) == false)
    }

    @Test("a payload that is not 32 bytes is no key; a store replaces it")
    func wrongLength() throws {
        let path = uniqueCachePath()
        defer { _ = try? store.remove(cachePath: path) }
        let r = try keyctlShell(
            #"keyctl padd user "$DESC" "$P" >/dev/null"#,
            description: try KernelKeyringStore.description(for: path),
            stdin: "short"
        )
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try store.lookup(cachePath: path) == nil)
        let (key, _) = try randomKey()
        try store.store(key, cachePath: path)
        #expect(try store.lookup(cachePath: path) == key)
    }

    @Test("a path whose name would pass 4095 bytes is named by its SHA-256")
    func longPath() throws {
        let path = "/tmp/na-kr-\(UUID().uuidString)/" + String(repeating: "d/", count: 2100) + "cache.json"
        let description = try KernelKeyringStore.description(for: path)
        let digest = SHA256.hash(path).map { String(format: "%02x", $0) }.joined()
        #expect(description == "nativeauth:cache-key:sha256:" + digest)
        let edge = "/" + String(repeating: "e", count: 4095 - 21 - 1)
        #expect(try KernelKeyringStore.description(for: edge) == "nativeauth:cache-key:" + edge)
        #expect(try KernelKeyringStore.description(for: edge + "e").hasPrefix("nativeauth:cache-key:sha256:"))

        let (key, _) = try randomKey()
        defer { _ = try? store.remove(cachePath: path) }
        try store.store(key, cachePath: path)
        #expect(try store.lookup(cachePath: path) == key)
        let r = try keyctlShell(#"keyctl search "$P" user "$DESC""#, description: description)
        #expect(r.status == 0, "\(r.stderr)")
    }

    @Test("a cache path must be absolute; a key must be 32 bytes")
    func arguments() throws {
        #expect(throws: NativeAuthError.self) { _ = try store.lookup(cachePath: "relative/cache.json") }
        #expect(throws: NativeAuthError.self) { try store.store(Secret("short"), cachePath: uniqueCachePath()) }
    }

    @Test("system calls a seccomp profile refuses are keyring_unavailable, saying so (and without the key)")
    func refused() {
        for e in [EPERM, ENOSYS, EACCES] {
            let error = KernelKeyringStore.failure("getting the persistent keyring", e)
            #expect(error.code == .keyringUnavailable)
            #expect(error.message.contains("seccomp"), "\(error.message)")
            #expect(error.message.hasPrefix("Kernel keyring: getting the persistent keyring"))
        }
        #expect(KernelKeyringStore.failure("x", EDQUOT).message.contains("quota"))
    }
}
