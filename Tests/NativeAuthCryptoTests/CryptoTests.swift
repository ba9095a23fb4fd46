import Foundation
import NativeAuthCrypto
import NativeAuthEmulator  // token signing (RSA private keys) lives with the emulator
import NativeAuthJSON
import Testing

private func hex(_ b: [UInt8]) -> String {
    b.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

@Suite struct Digests {
    @Test func sha256KnownVectors() {
        #expect(hex(SHA256.hash("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(SHA256.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func randomBytesDiffer() throws {
        let a = try SecureRandom.bytes(32)
        let b = try SecureRandom.bytes(32)
        #expect(a.count == 32 && a != b)
        #expect(throws: CryptoError.self) { try SecureRandom.bytes(-1) }
    }

    @Test func uuidShape() throws {
        let u = try SecureRandom.uuid()
        let parts = u.split(separator: "-")
        #expect(parts.map(\.count) == [8, 4, 4, 4, 12])
        #expect(parts[2].first == "4")
        #expect(["8", "9", "a", "b"].contains(parts[3].first.map(String.init) ?? ""))
    }
}

@Suite struct Base64Tests {
    @Test func rfc4648Vectors() {
        let cases = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in cases {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
            #expect(Base64.decode(String(encoded.filter { $0 != "=" })) == Array(plain.utf8))
        }
    }

    @Test func urlAlphabet() {
        #expect(Base64.urlEncode([0xfb, 0xff, 0xfe]) == "-__-")
        #expect(Base64.decode("-__-") == [0xfb, 0xff, 0xfe])
    }

    /// Every length up to 200, both alphabets, against Foundation; the appending form keeps what was before it and
    /// matches the string form.
    @Test func everyLengthAgainstFoundationAndAppended() {
        var rng = SystemRandomNumberGenerator()
        for n in 0...200 {
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let expected = Data(bytes).base64EncodedString()
            #expect(Base64.encode(bytes) == expected)
            let url = String(
                expected.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .filter { $0 != "=" }
            )
            #expect(Base64.urlEncode(bytes) == url)
            #expect(Base64.urlEncode(bytes[...]) == url)  // a slice: not an Array
            var out = Array("prefix.".utf8)
            Base64.urlEncode(bytes, into: &out)
            #expect(out == Array(("prefix." + url).utf8))
            #expect(Base64.decode(url) == bytes)
        }
    }

    @Test(arguments: ["a", "ab=c", "ab!c", "abc==="]) func invalidInput(text: String) {
        #expect(Base64.decode(text) == nil)
    }
}

@Suite struct PKCETests {
    @Test func rfc7636AppendixB() {
        #expect(
            PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
                == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        )
    }

    @Test func verifierShape() throws {
        let v = try PKCE.makeVerifier()
        #expect(v.count == 43)
        #expect(v.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
        #expect(try PKCE.makeVerifier() != v)
    }
}

@Suite struct JWTTests {
    static let key: RSAPrivateKey? = try? RSAPrivateKey.generate()

    @Test func signedTokenVerifies() throws {
        let key = try #require(Self.key)
        let claims: JSONValue = ["sub": "abc", "aud": "client", "exp": 1_900_000_000, "name": "Ann ✓"]
        let token = try JWT.signRS256(claims: claims, key: key, kid: "k1")
        let jwt = try JWT(decoding: token)
        #expect(jwt.header["kid"]?.stringValue == "k1")
        #expect(jwt.header["alg"]?.stringValue == "RS256")
        #expect(jwt.claims == claims)
        #expect(jwt.verify(with: try key.publicKey()))
    }

    @Test func verifiesThroughJWKComponents() throws {
        let key = try #require(Self.key)
        let (n, e) = try key.publicComponents()
        #expect(e == [1, 0, 1])
        let pub = try RSAPublicKey(jwk: Base64.urlEncode(n), Base64.urlEncode(e))
        let token = try JWT.signRS256(claims: ["x": 1], key: key, kid: nil)
        #expect(try JWT(decoding: token).verify(with: pub))
    }

    @Test func tamperedTokenIsRejected() throws {
        let key = try #require(Self.key)
        let token = try JWT.signRS256(claims: ["scp": "read"], key: key, kid: "k1")
        let parts = token.split(separator: ".").map(String.init)
        let forged = Base64.urlEncode(Array(#"{"scp":"write"}"#.utf8))
        let tampered = parts[0] + "." + forged + "." + parts[2]
        #expect(try !JWT(decoding: tampered).verify(with: key.publicKey()))
        // A flipped signature bit fails too.
        var sig = try #require(Base64.decode(parts[2]))
        sig[0] ^= 1
        #expect(
            try !JWT(decoding: parts[0] + "." + parts[1] + "." + Base64.urlEncode(sig)).verify(with: key.publicKey())
        )
        // So does another key, and alg "none".
        let other = try RSAPrivateKey.generate()
        #expect(try !JWT(decoding: token).verify(with: other.publicKey()))
        let none = Base64.urlEncode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "." + parts[2]
        #expect(try !JWT(decoding: none).verify(with: key.publicKey()))
    }

    @Test(arguments: ["", "a.b", "a.b.c.d", "!!!.e30.e30", "e30.bm90IGpzb24.AA", "W10.e30.AA"])
    func malformedTokens(token: String) {
        #expect(throws: CryptoError.self) { try JWT(decoding: token) }
    }

    @Test func invalidPublicKeys() {
        #expect(throws: CryptoError.self) { try RSAPublicKey(modulus: [1, 2, 3], exponent: [1, 0, 1]) }
        #expect(throws: CryptoError.self) { try RSAPublicKey(jwk: "***", "AQAB") }
    }
}

@Suite struct ConstantTimeTests {
    @Test func equalBytesAndStrings() {
        #expect(constantTimeEquals("", ""))
        #expect(constantTimeEquals("state-1234", "state-1234"))
        #expect(constantTimeEquals("pâté ✓", "pâté ✓"))
        #expect(constantTimeEquals([UInt8](), []))
        #expect(constantTimeEquals([0, 1, 255], [0, 1, 255]))
    }

    @Test func differentBytesAnywhereOrLengths() {
        let base = Array("0123456789abcdef".utf8)
        for i in base.indices {  // a difference at every position, first and last included
            var other = base
            other[i] ^= 0x01
            #expect(!constantTimeEquals(base, other))
        }
        #expect(!constantTimeEquals("abc", "abcd"))
        #expect(!constantTimeEquals("", "a"))
        #expect(!constantTimeEquals("a", ""))
        #expect(!constantTimeEquals("é", "e\u{301}"))  // bytes, not canonical equivalence
    }

    @Test func buffersWithoutAnAddress() {
        let empty = UnsafeRawBufferPointer(start: nil, count: 0)
        #expect(constantTimeEquals(empty, empty))
        [UInt8(1)].withUnsafeBytes { one in
            #expect(!constantTimeEquals(empty, one))
            #expect(!constantTimeEquals(one, empty))
        }
    }
}
