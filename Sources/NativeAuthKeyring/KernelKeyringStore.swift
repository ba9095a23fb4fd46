internal import CLinux
internal import Glibc
public import NativeAuthCache
public import NativeAuthCore
internal import NativeAuthCrypto

/// The cache keys in the user's persistent kernel keyring (keyrings(7), persistent-keyring(7)): a `user` key named
/// `nativeauth:cache-key:<absolute path>` per cache file (`nativeauth:cache-key:sha256:<hex SHA-256 of the path>`
/// when that name would be longer than the kernel's 4095 bytes), readable and writable by its possessor and by the
/// user, by no group and no one else. For a machine without a desktop keyring (a server, an SSH session).
///
/// The persistent keyring is per user (and user namespace), shared by all the user's sessions, and linked into the
/// calling process's process keyring (created if need be) so the process possesses it. It is not forever: the kernel
/// destroys it, keys and all, when it has not been asked for in `/proc/sys/kernel/keys/persistent_keyring_expiry`
/// seconds (3 days by default; each lookup and store asks for it, which starts the period again), and it does not
/// survive a reboot. A cache whose key is gone is set aside and the user signs in again (`cache_key_invalid`).
///
/// Direct system calls (`CLinux`'s `nashim_keyctl_*`, `nashim_add_key`): no libkeyutils. Where the calls are not
/// allowed — a container whose seccomp profile blocks them, as Docker's default profile does (`EPERM`, `ENOSYS`,
/// `EACCES`), or a kernel built without persistent keyrings — the answer is `keyring_unavailable`.
public struct KernelKeyringStore: CacheKeyStore {
    public let name = "kernel_keyring"

    static let prefix = "nativeauth:cache-key:"
    /// The longest key description the kernel accepts (4096 with its NUL).
    static let maxDescription = 4095
    static let keyLength = 32

    public init() {}

    /// The key kept for the cache file at `cachePath` (absolute), or nil when there is none (never stored, unlinked,
    /// revoked, expired). A key whose payload is not exactly 32 bytes was not stored by this library: it counts as
    /// no key, and the next `store` replaces it.
    public func lookup(cachePath: String) throws(NativeAuthError) -> Secret? {
        let description = try Self.description(for: cachePath)
        let keyring = try Self.persistentKeyring()
        let key = nashim_keyctl_search(keyring, "user", description)
        if key < 0 {
            let e = errno
            if Self.isGone(e) { return nil }
            throw Self.failure("searching the persistent keyring", e)
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 8)
        defer {
            if let base = buffer.baseAddress { wipeMemory(base, buffer.count) }
            buffer.deallocate()
        }
        let length = nashim_keyctl_read(Int32(truncatingIfNeeded: key), buffer.baseAddress, buffer.count)
        if length < 0 {
            let e = errno
            if Self.isGone(e) { return nil }
            throw Self.failure("reading the cache key", e)
        }
        guard length == Self.keyLength else { return nil }
        return Secret(bytes: UnsafeRawBufferPointer(rebasing: buffer[0..<Self.keyLength]))
    }

    /// Keeps `key` (32 bytes) for the cache file at `cachePath` (absolute), replacing the key kept for it.
    public func store(_ key: Secret, cachePath: String) throws(NativeAuthError) {
        guard key.count == Self.keyLength else {
            throw .invalidArgument("a cache key is \(Self.keyLength) bytes")
        }
        let description = try Self.description(for: cachePath)
        let keyring = try Self.persistentKeyring()
        // add_key replaces the payload of a key of the same type and description in the keyring.
        let serial = key.withUnsafeBytes { nashim_add_key("user", description, $0.baseAddress, $0.count, keyring) }
        guard serial >= 0 else { throw Self.failure("adding the cache key", errno) }
        let permissions = NASHIM_KEY_POS_ALL | NASHIM_KEY_USR_ALL
        guard nashim_keyctl_setperm(Int32(truncatingIfNeeded: serial), permissions) == 0 else {
            throw Self.failure("setting the cache key's permissions", errno)
        }
    }

    /// Unlinks the key kept for `cachePath` from the persistent keyring (the kernel destroys it once nothing links
    /// it); true when there was one.
    @discardableResult
    func remove(cachePath: String) throws(NativeAuthError) -> Bool {
        let description = try Self.description(for: cachePath)
        let keyring = try Self.persistentKeyring()
        let key = nashim_keyctl_search(keyring, "user", description)
        guard key >= 0 else {
            let e = errno
            if Self.isGone(e) { return false }
            throw Self.failure("searching the persistent keyring", e)
        }
        guard nashim_keyctl_unlink(Int32(truncatingIfNeeded: key), keyring) == 0 else {
            throw Self.failure("unlinking the cache key", errno)
        }
        return true
    }

    /// The key's description for `cachePath`.
    static func description(for cachePath: String) throws(NativeAuthError) -> String {
        guard cachePath.hasPrefix("/"), !cachePath.utf8.contains(0) else {
            throw .invalidArgument("the cache path for a key store must be absolute", field: "cache.path")
        }
        let plain = prefix + cachePath
        if plain.utf8.count <= maxDescription { return plain }
        let digest = SHA256.hash(cachePath)
        guard digest.count == 32 else {
            throw NativeAuthError(.keyringUnavailable, "Kernel keyring: SHA-256 of the cache path failed.")
        }
        return prefix + "sha256:" + digest.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The user's persistent keyring, linked into this process's keyring.
    static func persistentKeyring() throws(NativeAuthError) -> Int32 {
        let id = nashim_keyctl_get_persistent(-1, KEY_SPEC_PROCESS_KEYRING)
        guard id >= 0 else { throw failure("getting the persistent keyring", errno) }
        return Int32(truncatingIfNeeded: id)
    }

    /// Errors that mean the key is not there (any more).
    static func isGone(_ e: Int32) -> Bool { e == ENOKEY || e == EKEYREVOKED || e == EKEYEXPIRED }

    static func failure(_ what: String, _ e: Int32) -> NativeAuthError {
        let why: String
        switch e {
        case ENOSYS, EPERM, EACCES:
            why =
                "the keyctl system calls are not allowed here (a container's seccomp profile, such as Docker's "
                + "default one, blocks them; or this kernel has no key retention service)"
        case EOPNOTSUPP:
            why = "this kernel has no persistent keyrings (CONFIG_PERSISTENT_KEYRINGS)"
        case EDQUOT:
            why = "the user's key quota is full (/proc/sys/kernel/keys/maxkeys, maxbytes)"
        default:
            why = "the system call failed"
        }
        return NativeAuthError(.keyringUnavailable, "Kernel keyring: \(what): \(why) (\(errnoText(e))).")
    }
}
