internal import COpenSSL

/// Whether two secrets (a `state`, a nonce, a password, a one-time code, a PKCE challenge) are equal, compared
/// without an early exit: the time taken depends on the lengths, never on where the first difference is. The bytes
/// are compared by libcrypto's `CRYPTO_memcmp`, which the optimiser cannot turn back into an early-exit loop.
/// Different lengths answer false at once (a length is not a secret here).
///
/// The library's and the emulator's one implementation: `Secret ==`, the ID token's `nonce` and the browser
/// sign-in's `state` in NativeAuthCore, and the emulator's credentials and codes all come here.
public func constantTimeEquals(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
    guard a.count == b.count else { return false }
    guard let x = a.baseAddress, let y = b.baseAddress, a.count > 0 else { return true }  // both empty
    return CRYPTO_memcmp(x, y, a.count) == 0
}

/// Whether two strings have equal UTF-8 bytes, compared as `constantTimeEquals(_:_:)` compares bytes.
public func constantTimeEquals(_ a: String, _ b: String) -> Bool {
    var a = a
    var b = b
    return a.withUTF8 { x in
        b.withUTF8 { y in constantTimeEquals(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) }
    }
}

/// Whether two byte arrays are equal, compared as `constantTimeEquals(_:_:)` compares bytes.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    a.withUnsafeBytes { x in b.withUnsafeBytes { y in constantTimeEquals(x, y) } }
}
