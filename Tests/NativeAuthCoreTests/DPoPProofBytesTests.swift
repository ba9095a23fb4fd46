import Foundation
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import Testing

@testable import NativeAuthCore

/// The DPoP proof built as bytes (`DPoP.proof`) against the text the previous implementation (fbd54a7) built, for
/// random methods, URLs (IPv6 hosts, ports, quotes and backslashes, long paths), nonces (valid up to the 1024-byte
/// bound, invalid ones dropped) and access tokens: the same claims byte for byte apart from `jti` and `iat`, three
/// base64url parts without padding, and a signature that verifies with the key. Base64 here is Foundation's.
@Suite struct DPoPProofBytesTests {
    static let url64 = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    func b64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    func unb64url(_ s: Substring) -> [UInt8]? {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        t += String(repeating: "=", count: (4 - t.count % 4) % 4)
        return Data(base64Encoded: t).map { Array($0) }
    }

    /// fbd54a7's claims, as text.
    func reference(jti: String, method: String, htu: String, iat: Int64, nonce: String?, token: String?) -> String {
        var escaped = ""
        for c in htu.unicodeScalars {
            if c == "\"" || c == "\\" { escaped.unicodeScalars.append("\\") }
            escaped.unicodeScalars.append(c)
        }
        var claims =
            #"{"jti":""# + jti + #"","htm":""# + method + #"","htu":""# + escaped + #"","iat":"# + String(iat)
        if let nonce, DPoP.isNonce(nonce) { claims += #","nonce":""# + nonce + "\"" }
        if let token { claims += #","ath":""# + b64url(SHA256.hash(Array(token.utf8))) + "\"" }
        return claims + "}"
    }

    func random(_ alphabet: String, _ count: Int, _ g: inout some RandomNumberGenerator) -> String {
        let a = Array(alphabet)
        return String((0..<count).map { _ in a.randomElement(using: &g)! })
    }

    func randomURL(_ g: inout some RandomNumberGenerator) -> String {
        let scheme = Bool.random(using: &g) ? "https" : "http"
        let host = ["127.0.0.1", "[::1]", "[2001:DB8::A]", "API.Example.COM", "localhost", "x.y"].randomElement(
            using: &g
        )!
        let port = ["", ":80", ":443", ":8443", ":1", ":65535"].randomElement(using: &g)!
        let pathChars = "abcXYZ019-._~!$&'()*+,;=:@%\"\\/"
        let path = "/" + random(pathChars, Int.random(in: 0...(Bool.random(using: &g) ? 40 : 3000), using: &g), &g)
        return scheme + "://" + host + port + path + (Bool.random(using: &g) ? "?q=\"1\"&r=\\" : "")
    }

    func randomNonce(_ g: inout some RandomNumberGenerator) -> String? {
        let nq = "!#$%&'()*+,-./0123456789:;<=>?@ABCXYZ[]^_`abcxyz{|}~"
        switch Int.random(in: 0..<8, using: &g) {
        case 0: return nil
        case 1: return random(nq, 1024, &g)
        case 2: return random(nq, 1025, &g)
        case 3: return random(nq, 5, &g) + ["\"", "\\", " ", "é", "\u{7f}", "\n"].randomElement(using: &g)!
        case 4: return ""
        default: return random(nq, Int.random(in: 1...64, using: &g), &g)
        }
    }

    @Test func proofsMatchThePreviousTextByteForByte() throws {
        var g = SystemRandomNumberGenerator()
        let key = try DPoPKey.generate()
        let publicKey = try P256PublicKey(x: key.key.x, y: key.key.y)
        var quoted = 0
        for _ in 0..<400 {
            let method = random("!#$%&'*+-.^_`|~AZaz09GETPOST", Int.random(in: 1...32, using: &g), &g)
            let url = randomURL(&g)
            let nonce = randomNonce(&g)
            let token: String? = Bool.random(using: &g) ? random("abcé✓.-_~+/=", Int.random(in: 0...200), &g) : nil
            let now = Double.random(in: 0...4_000_000_000, using: &g)
            guard let parsed = try? HTTPURL(url) else { continue }
            let proof = try DPoP.proof(
                key,
                method: method,
                url: url,
                nonce: nonce,
                accessToken: token.map { Secret($0) },
                now: now
            )
            let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
            try #require(parts.count == 3)
            #expect(parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(Self.url64.contains) })
            #expect(String(parts[0]) == key.encodedHeader)
            let claims = try #require(unb64url(parts[1]))
            let signature = try #require(unb64url(parts[2]))
            #expect(signature.count == 64)
            #expect(
                publicKey.verify(
                    signature: signature,
                    message: Array(proof.utf8.prefix(parts[0].count + 1 + parts[1].count))
                )
            )
            let json = try JSONValue.parse(claims)
            let jti = try #require(json["jti"]?.stringValue)
            #expect(unb64url(Substring(jti))?.count == 16)
            let htu = DPoP.targetURI(parsed)
            if htu.contains("\"") || htu.contains("\\") { quoted += 1 }
            #expect(json["htu"]?.stringValue == htu)
            let expected = reference(
                jti: jti,
                method: method,
                htu: htu,
                iat: Int64(now.rounded(.down)),
                nonce: nonce,
                token: token
            )
            #expect(claims == Array(expected.utf8), "\(method) \(url.prefix(80))")
        }
        #expect(quoted > 0, "some URLs put a quote or a backslash into htu")
    }
}
