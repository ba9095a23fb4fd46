import NativeAuthCrypto
import Testing

private func bytes(hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var i = hex.startIndex
    while i < hex.endIndex {
        let j = hex.index(i, offsetBy: 2)
        out.append(UInt8(hex[i..<j], radix: 16) ?? 0)
        i = j
    }
    return out
}

/// P-256 keys, ES256 signatures (r ‖ s) and RFC 7638 thumbprints (DPoP, RFC 9449).
@Suite struct P256Tests {
    // RFC 6979 A.2.5: the P-256 key, and its SHA-256 signature of "sample".
    static let d = bytes(hex: "C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721")
    static let ux = bytes(hex: "60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6")
    static let uy = bytes(hex: "7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299")
    static let r = bytes(hex: "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716")
    static let s = bytes(hex: "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8")

    @Test func thePublicPointOfAKnownScalar() throws {
        let key = try Self.d.withUnsafeBytes { try P256PrivateKey(scalar: $0) }
        #expect(key.x == Self.ux && key.y == Self.uy)
        let exported = try key.withPrivateScalar { Array($0) }
        #expect(exported == Self.d)
    }

    @Test func aKnownSignatureVerifiesAndAnAlteredOneDoesNot() throws {
        let key = try P256PublicKey(x: Self.ux, y: Self.uy)
        let message = Array("sample".utf8)
        #expect(key.verify(signature: Self.r + Self.s, message: message))
        var altered = Self.r + Self.s
        altered[63] ^= 1
        #expect(!key.verify(signature: altered, message: message))
        #expect(!key.verify(signature: Self.r + Self.s, message: Array("samplf".utf8)))
        #expect(!key.verify(signature: Self.r, message: message))
    }

    @Test func signaturesOfANewKeyVerify() throws {
        let key = try P256PrivateKey.generate()
        let message = Array("eyJ0eXAiOiJkcG9wK2p3dCJ9.e30".utf8)
        let signature = try message.withUnsafeBytes { try key.sign($0) }
        #expect(signature.count == 64)
        #expect(key.publicKey.verify(signature: signature, message: message))
        let other = try P256PrivateKey.generate()
        #expect(!other.publicKey.verify(signature: signature, message: message))
        // A key rebuilt from its scalar is the same key.
        let again = try key.withPrivateScalar { try? P256PrivateKey(scalar: $0) }
        #expect(again?.thumbprint == key.thumbprint)
    }

    @Test func scalarsThatAreNotKeysAreRefused() {
        let order = bytes(hex: "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")
        for bad in [[UInt8](repeating: 0, count: 32), order, [UInt8](repeating: 0xff, count: 32), [1], Self.d + [0]] {
            #expect(throws: CryptoError.self) { try bad.withUnsafeBytes { try P256PrivateKey(scalar: $0) } }
        }
    }

    @Test func pointsOffTheCurveAreRefused() {
        var y = Self.uy
        y[31] ^= 1
        #expect(throws: CryptoError.self) { try P256PublicKey(x: Self.ux, y: y) }
        #expect(throws: CryptoError.self) { try P256PublicKey(x: [], y: Self.uy) }
    }

    /// RFC 9449 §6.1: the thumbprint of the example key of §4.2.
    @Test func theRFC9449ExampleThumbprint() throws {
        guard let x = Base64.decode("l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs"),
            let y = Base64.decode("9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA")
        else { throw CryptoError("base64") }
        #expect(P256PublicKey.thumbprint(x: x, y: y) == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
        #expect(try P256PublicKey(x: x, y: y).thumbprint == "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I")
    }
}
