internal import Glibc
internal import NativeAuthCrypto

/// A secret the library holds for a moment or keeps in its cache: a password, a one-time code, an access or refresh
/// token. Its `description` is `<redacted>`, the logger has no way to print it, and its bytes are overwritten with
/// zeros
/// when the last reference goes. Reading it takes an explicit, greppable `unsafeExposed` or `withUnsafeBytes`.
public final class Secret: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible, Equatable {
    // Immutable after init: safe to share between threads.
    private let storage: UnsafeMutableRawBufferPointer

    public init(_ text: String) {
        var text = text
        storage = text.withUTF8 { Secret.copy(UnsafeRawBufferPointer($0)) }
    }

    public init(bytes: UnsafeRawBufferPointer) {
        storage = Secret.copy(bytes)
    }

    private static func copy(_ bytes: UnsafeRawBufferPointer) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 1)
        if let base = bytes.baseAddress, bytes.count > 0, let dst = buffer.baseAddress {
            memcpy(dst, base, bytes.count)
        }
        return UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes.count])
    }

    deinit {
        if let base = storage.baseAddress { wipeMemory(base, storage.count) }
        storage.deallocate()
    }

    public var count: Int { storage.count }
    public var isEmpty: Bool { storage.isEmpty }

    /// The secret as text. Every use is a place where a secret leaves this type: keep them few and obvious.
    public var unsafeExposed: String { String(decoding: UnsafeRawBufferPointer(storage), as: UTF8.self) }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    public var description: String { "<redacted>" }
    public var debugDescription: String { "<redacted>" }

    /// Equal bytes (compared without an early exit: NativeAuthCrypto's `constantTimeEquals`).
    public static func == (a: Secret, b: Secret) -> Bool {
        if a === b { return true }  // one object (whether two are one says nothing about the bytes)
        return constantTimeEquals(UnsafeRawBufferPointer(a.storage), UnsafeRawBufferPointer(b.storage))
    }
}

/// Overwrites `count` bytes at `pointer` with zeros in a way the optimiser may not remove (explicit_bzero).
public func wipeMemory(_ pointer: UnsafeMutableRawPointer, _ count: Int) {
    guard count > 0 else { return }
    explicit_bzero(pointer, count)
}

/// A native-auth continuation token: it links the steps of one flow and never leaves the library.
public struct ContinuationToken: Sendable, Equatable, CustomStringConvertible {
    public let secret: Secret
    public init(_ secret: Secret) { self.secret = secret }
    public var description: String { "<redacted>" }
}

/// A refresh token (kept in the cache, presented once per rotation), and the DPoP key it is bound to, if any (RFC 9449
/// §5: a public client's DPoP refresh token is presented only with a proof of that key).
public struct RefreshToken: Sendable, Equatable, CustomStringConvertible {
    public let secret: Secret
    public let dpopKey: DPoPKey?
    public init(_ secret: Secret, dpopKey: DPoPKey? = nil) {
        self.secret = secret
        self.dpopKey = dpopKey
    }
    public var description: String { "<redacted>" }

    /// The same token (its bytes; the key goes with them).
    public static func == (a: RefreshToken, b: RefreshToken) -> Bool { a.secret == b.secret }
}
