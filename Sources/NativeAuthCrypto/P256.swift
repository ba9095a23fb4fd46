internal import COpenSSL

// P-256 (secp256r1, "prime256v1") keys and ES256 signatures (ECDSA with SHA-256, RFC 7518 §3.4) over libcrypto, and
// the JWK thumbprint of RFC 7638. Signatures are the JWS form: the 64 bytes r ‖ s, each left-padded to 32 bytes —
// libcrypto speaks DER (ECDSA-Sig-Value), which is converted both ways here.

private let paramGroup: StaticString = "group"
private let paramPub: StaticString = "pub"
private let paramPriv: StaticString = "priv"
private let curveName: StaticString = "prime256v1"

private func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// The curve: its group (generator, order), made once.
private final class P256Group: @unchecked Sendable {  // immutable after init; libcrypto reads it concurrently
    let group: OpaquePointer?
    init() { group = EC_GROUP_new_by_curve_name(copenssl_nid_p256()) }
    deinit { if let group { EC_GROUP_free(group) } }
    static let shared = P256Group()
}

/// An `EVP_PKEY_CTX` of a key, ready to sign (`EVP_PKEY_sign_init`): only ever copied (`EVP_PKEY_CTX_dup`), never
/// signed with, so threads share it.
private final class SignContext: @unchecked Sendable {  // immutable after init; libcrypto only reads it
    let pointer: OpaquePointer

    init?(_ key: PKeyOwner) {
        guard let ctx = Self.fresh(key) else { return nil }
        pointer = ctx
    }

    /// A new context of `key`, initialised for signing; nil when libcrypto cannot make one.
    static func fresh(_ key: PKeyOwner) -> OpaquePointer? {
        guard let ctx = EVP_PKEY_CTX_new(key.pointer, nil) else { return nil }
        guard EVP_PKEY_sign_init(ctx) == 1 else {
            ERR_clear_error()
            EVP_PKEY_CTX_free(ctx)
            return nil
        }
        return ctx
    }

    deinit { EVP_PKEY_CTX_free(pointer) }
}

/// An EVP_PKEY of a P-256 key from its parameters (`pub`, the uncompressed point; `priv` too for a key pair).
private func makeKey(pub: [UInt8], priv: OpaquePointer?) throws(CryptoError) -> PKeyOwner {
    guard let bld = OSSL_PARAM_BLD_new() else { throw CryptoError("p256: out of memory") }
    defer { OSSL_PARAM_BLD_free(bld) }
    // OSSL_PARAM_BLD keeps references to the names, the point and the BIGNUM until it builds the parameters: all
    // within this closure.
    typealias Params = UnsafeMutablePointer<OSSL_PARAM>
    let built: Params? = pub.withUnsafeBytes { p -> Params? in
        guard OSSL_PARAM_BLD_push_utf8_string(bld, cString(paramGroup), cString(curveName), 0) == 1,
            OSSL_PARAM_BLD_push_octet_string(bld, cString(paramPub), p.baseAddress, p.count) == 1,
            priv == nil || OSSL_PARAM_BLD_push_BN(bld, cString(paramPriv), priv) == 1
        else { return nil }
        return OSSL_PARAM_BLD_to_param(bld)
    }
    guard let params = built else {
        ERR_clear_error()
        throw CryptoError("p256: cannot build key parameters")
    }
    defer { OSSL_PARAM_free(params) }
    guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw CryptoError("p256: out of memory") }
    defer { EVP_PKEY_CTX_free(ctx) }
    var pkey: OpaquePointer? = nil
    let selection = priv == nil ? copenssl_pkey_public_key_selection() : copenssl_pkey_keypair_selection()
    guard EVP_PKEY_fromdata_init(ctx) == 1, EVP_PKEY_fromdata(ctx, &pkey, selection, params) == 1, let pkey else {
        ERR_clear_error()
        throw CryptoError("p256: invalid key")
    }
    return PKeyOwner(pkey)
}

/// A P-256 private key for ES256 signatures. Never leaves the process except through `withPrivateScalar`, which the
/// token cache uses to keep it where it keeps the refresh token it protects.
public final class P256PrivateKey: Sendable {
    let key: PKeyOwner
    /// The public point's coordinates, 32 bytes each (big-endian).
    public let x: [UInt8]
    public let y: [UInt8]
    /// A signing context of the key, initialised once: each signature signs with a copy of it (a copy skips the
    /// algorithm lookup a new context makes, about a tenth of a signature's cost; copies are independent).
    private let prepared: SignContext?

    private init(key: PKeyOwner, x: [UInt8], y: [UInt8]) {
        self.key = key
        self.x = x
        self.y = y
        prepared = SignContext(key)
    }

    /// A new random key (libcrypto's generator, seeded from the operating system).
    public static func generate() throws(CryptoError) -> P256PrivateKey {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { throw CryptoError("p256: out of memory") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var pkey: OpaquePointer? = nil
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, cString(curveName)) == 1,
            EVP_PKEY_generate(ctx, &pkey) == 1, let pkey
        else {
            ERR_clear_error()
            throw CryptoError("p256: key generation failed")
        }
        let owner = PKeyOwner(pkey)
        var point = [UInt8](repeating: 0, count: 65)
        var length = 0
        guard EVP_PKEY_get_octet_string_param(pkey, cString(paramPub), &point, 65, &length) == 1, length == 65,
            point[0] == 4
        else {
            ERR_clear_error()
            throw CryptoError("p256: cannot read the public key")
        }
        return P256PrivateKey(key: owner, x: Array(point[1..<33]), y: Array(point[33..<65]))
    }

    /// The key whose private scalar is `d` (32 bytes, big-endian), with its public point computed from it. Any other
    /// length, zero, or a value not below the curve's order is refused.
    public init(scalar d: UnsafeRawBufferPointer) throws(CryptoError) {
        guard d.count == 32, let base = d.baseAddress else { throw CryptoError("p256: a private key is 32 bytes") }
        guard let group = P256Group.shared.group, let order = EC_GROUP_get0_order(group),
            let bn = BN_bin2bn(base.assumingMemoryBound(to: UInt8.self), 32, nil)
        else { throw CryptoError("p256: out of memory") }
        defer { BN_clear_free(bn) }
        guard BN_is_zero(bn) == 0, BN_cmp(bn, order) < 0 else { throw CryptoError("p256: not a private key") }
        guard let point = EC_POINT_new(group) else { throw CryptoError("p256: out of memory") }
        defer { EC_POINT_free(point) }
        var encoded = [UInt8](repeating: 0, count: 65)
        guard EC_POINT_mul(group, point, bn, nil, nil, nil) == 1,
            EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, 65, nil) == 65
        else {
            ERR_clear_error()
            throw CryptoError("p256: cannot compute the public key")
        }
        key = try makeKey(pub: encoded, priv: bn)
        x = Array(encoded[1..<33])
        y = Array(encoded[33..<65])
        prepared = SignContext(key)
    }

    /// Runs `body` with the private scalar `d` (32 bytes), in a buffer wiped afterwards.
    public func withPrivateScalar<R>(_ body: (UnsafeRawBufferPointer) -> R) throws(CryptoError) -> R {
        var bn: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(key.pointer, cString(paramPriv), &bn) == 1, let bn else {
            ERR_clear_error()
            throw CryptoError("p256: cannot read the private key")
        }
        defer { BN_clear_free(bn) }
        var d = [UInt8](repeating: 0, count: 32)
        defer { d.withUnsafeMutableBytes { copenssl_cleanse($0.baseAddress, $0.count) } }
        guard BN_bn2binpad(bn, &d, 32) == 32 else { throw CryptoError("p256: cannot read the private key") }
        return d.withUnsafeBytes { body($0) }
    }

    /// The public key.
    public var publicKey: P256PublicKey { P256PublicKey(key: key, x: x, y: y) }

    /// The RFC 7638 thumbprint of the public key (base64url of the SHA-256 of its canonical JWK).
    public var thumbprint: String { P256PublicKey.thumbprint(x: x, y: y) }

    /// An ES256 signature of `message`: 64 bytes, r ‖ s (ECDSA over its SHA-256 digest).
    public func sign(_ message: UnsafeRawBufferPointer) throws(CryptoError) -> [UInt8] {
        let digest = SHA256.hash(message)
        guard digest.count == 32 else { throw CryptoError("p256: signing failed") }
        let ctx = prepared.flatMap { EVP_PKEY_CTX_dup($0.pointer) } ?? SignContext.fresh(key)
        guard let ctx else { throw CryptoError("p256: out of memory") }
        defer { EVP_PKEY_CTX_free(ctx) }
        var der = [UInt8](repeating: 0, count: 80)
        var length = der.count
        guard EVP_PKEY_sign(ctx, &der, &length, digest, 32) == 1 else {
            ERR_clear_error()
            throw CryptoError("p256: signing failed")
        }
        return try Self.raw(der: Array(der.prefix(length)))
    }

    /// A DER ECDSA-Sig-Value as the JWS form r ‖ s.
    static func raw(der: [UInt8]) throws(CryptoError) -> [UInt8] {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { b in
            var p: UnsafePointer<UInt8>? = b.baseAddress
            return d2i_ECDSA_SIG(nil, &p, b.count)
        }
        guard let sig = parsed else {
            ERR_clear_error()
            throw CryptoError("p256: malformed signature")
        }
        defer { ECDSA_SIG_free(sig) }
        var out = [UInt8](repeating: 0, count: 64)
        let ok = out.withUnsafeMutableBufferPointer { o -> Bool in
            guard let base = o.baseAddress, let r = ECDSA_SIG_get0_r(sig), let s = ECDSA_SIG_get0_s(sig) else {
                return false
            }
            return BN_bn2binpad(r, base, 32) == 32 && BN_bn2binpad(s, base + 32, 32) == 32
        }
        guard ok else { throw CryptoError("p256: malformed signature") }
        return out
    }
}

/// A P-256 public key, for ES256 verification (the emulator checks DPoP proofs with it).
public struct P256PublicKey: Sendable {
    let key: PKeyOwner
    public let x: [UInt8]
    public let y: [UInt8]

    init(key: PKeyOwner, x: [UInt8], y: [UInt8]) {
        self.key = key
        self.x = x
        self.y = y
    }

    /// The key with these coordinates (32 bytes each); a point not on the curve is refused.
    public init(x: [UInt8], y: [UInt8]) throws(CryptoError) {
        guard x.count == 32, y.count == 32 else { throw CryptoError("p256: coordinates are 32 bytes") }
        key = try makeKey(pub: [4] + x + y, priv: nil)
        self.x = x
        self.y = y
    }

    /// The RFC 7638 thumbprint of the key with these coordinates: base64url(SHA-256(
    /// `{"crv":"P-256","kty":"EC","x":"…","y":"…"}`)) — the required members in lexicographic order, no whitespace.
    public static func thumbprint(x: [UInt8], y: [UInt8]) -> String {
        let canonical =
            #"{"crv":"P-256","kty":"EC","x":""# + Base64.urlEncode(x) + #"","y":""# + Base64.urlEncode(y) + #""}"#
        return Base64.urlEncode(SHA256.hash(Array(canonical.utf8)))
    }

    public var thumbprint: String { Self.thumbprint(x: x, y: y) }

    /// Whether `signature` (64 bytes, r ‖ s) is a valid ES256 signature of `message` by this key.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        guard signature.count == 64, let sig = ECDSA_SIG_new() else { return false }
        defer { ECDSA_SIG_free(sig) }
        let r = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = signature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress.map { $0 + 32 }, 32, nil) }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return false
        }
        guard ECDSA_SIG_set0(sig, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return false
        }
        var derPointer: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_ECDSA_SIG(sig, &derPointer)
        guard length > 0, let der = derPointer else {
            ERR_clear_error()
            return false
        }
        defer { copenssl_free(der) }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, key.pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        let rc = message.withUnsafeBufferPointer { m in
            EVP_DigestVerify(ctx, der, Int(length), m.baseAddress, m.count)
        }
        if rc != 1 { ERR_clear_error() }
        return rc == 1
    }
}
