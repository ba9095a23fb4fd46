// Part of target "wwwauth": the same bytes as the DPoP parts of a server's answer (RFC 9449 §8, §9). The first line
// is a DPoP-Nonce, the rest (the whole input when it has one line) a resource's 401's WWW-Authenticate and a token
// endpoint's 400's body:
//  - a DPoP-Nonce is kept exactly when it is a nonce (1*NQCHAR, at most 1024 bytes), and kept as sent;
//  - telling a nonce challenge never traps, and a 401 is one exactly when its DPoP challenge's error says so;
//  - a proof made with a kept nonce carries it as sent, names the URL without its query, hashes the access token,
//    and verifies with the key in its own header.
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON

@testable import NativeAuthCore

/// One key for every input (making one costs more than the checks).
private let fuzzKey: DPoPKey? = try? DPoPKey.generate()

func fuzzDPoPAnswer(_ bytes: [UInt8]) {
    let newline = bytes.firstIndex(of: 0x0A)
    let firstLine = String(decoding: bytes[..<(newline ?? bytes.count)], as: UTF8.self)
    let rest = newline.map { Array(bytes[($0 + 1)...]) } ?? bytes
    let text = String(decoding: rest, as: UTF8.self)
    let resource = HTTPResponse(status: 401, headers: [("WWW-Authenticate", text), ("DPoP-Nonce", firstLine)])
    let tokenEndpoint = HTTPResponse(status: 400, headers: [("DPoP-Nonce", firstLine)], body: rest)
    let nonces = DPoPNonces()
    for r in [resource, tokenEndpoint] {
        let kept = nonces.note(r, origin: "https://as.example")
        if let kept {
            guard DPoP.isNonce(kept), kept == firstLine else { finding("a DPoP-Nonce kept other than sent", kept) }
        } else if DPoP.isNonce(firstLine) {
            finding("a valid DPoP-Nonce was not kept", firstLine)
        }
    }
    let parsed = try? WWWAuthenticate.parse(text, isJSONObject: { _ in false })
    let asked = parsed?.challenges.first { $0.isScheme("DPoP") }?.params["error"] == "use_dpop_nonce"
    if DPoP.isNonceChallenge(resource) != asked {
        finding("a 401 told as a nonce challenge other than its DPoP challenge says", text)
    }
    _ = DPoP.isNonceChallenge(tokenEndpoint)
    guard let nonce = nonces.nonce(for: "https://as.example"), let key = fuzzKey else { return }
    checkProof(key, nonce: nonce)
}

private func checkProof(_ key: DPoPKey, nonce: String) {
    let proof: String
    do {
        proof = try DPoP.proof(
            key,
            method: "GET",
            url: "https://rs.example:443/items?q=1#f",
            nonce: nonce,
            accessToken: Secret("at"),
            now: 1_700_000_000
        )
    } catch { finding("no proof for a kept nonce: \(error)", nonce) }
    guard let jwt = try? JWT(decoding: proof), let x = jwt.header["jwk"]?["x"]?.stringValue.flatMap(Base64.decode),
        let y = jwt.header["jwk"]?["y"]?.stringValue.flatMap(Base64.decode),
        let publicKey = try? P256PublicKey(x: x, y: y)
    else { finding("a proof that is not a JWT with its jwk", proof) }
    let c = jwt.claims
    guard c["nonce"]?.stringValue == nonce, c["htu"] == "https://rs.example/items", c["htm"] == "GET",
        c["ath"]?.stringValue == Base64.urlEncode(SHA256.hash("at")), c["iat"]?.intValue == 1_700_000_000,
        publicKey.thumbprint == key.thumbprint, publicKey.verify(signature: jwt.signature, message: jwt.signingInput)
    else { finding("a proof whose claims or signature are wrong", proof) }
}
