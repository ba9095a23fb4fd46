import NativeAuthCrypto
import Testing

@testable import NativeAuthEmulator

/// The emulator's DPoP replay check (RFC 9449 §11.1): a proof's `jti` is refused a second time for as long as the
/// proof itself is acceptable — until its `iat` leaves the window, also for a proof dated ahead — and the table of
/// seen proofs is pruned without forgetting one that could still be replayed.
@Suite struct DPoPReplayTests {
    let uri = "http://127.0.0.1:1/oidc/api/me"
    let window = 60.0

    func proof(_ key: P256PrivateKey, jti: String, iat: Double) throws -> String {
        let jwk =
            #"{"kty":"EC","crv":"P-256","x":""# + Base64.urlEncode(key.x) + #"","y":""# + Base64.urlEncode(key.y)
            + #""}"#
        let header = Base64.urlEncode(Array((#"{"typ":"dpop+jwt","alg":"ES256","jwk":"# + jwk + "}").utf8))
        let claims = #"{"jti":""# + jti + #"","htm":"GET","htu":""# + uri + #"","iat":"# + String(Int64(iat)) + "}"
        let input = header + "." + Base64.urlEncode(Array(claims.utf8))
        let signature = try Array(input.utf8).withUnsafeBytes { try key.sign($0) }
        return input + "." + Base64.urlEncode(signature)
    }

    func verify(_ v: DPoPVerifier, _ proof: String, at now: Double) -> Bool {
        verify(v, proof, at: now, window: window)
    }

    @Test func aProofDatedAheadCannotBeReplayedWhileItsIatIsInTheWindow() throws {
        let v = DPoPVerifier(counters: Counters())
        let key = try P256PrivateKey.generate()
        let t = 1_000_000.0
        let ahead = try proof(key, jti: "ahead", iat: t + 50)
        #expect(verify(v, ahead, at: t))
        #expect(!verify(v, ahead, at: t + 1))
        // Past the window counted from when it was first seen, but its iat is still acceptable: still a replay.
        #expect(!verify(v, ahead, at: t + 70))
        #expect(!verify(v, ahead, at: t + 109))
        // Once its iat has left the window it is refused for that reason.
        #expect(!verify(v, ahead, at: t + 111))
    }

    @Test func pruningKeepsEveryProofThatCouldStillBeReplayed() throws {
        let v = DPoPVerifier(counters: Counters())
        let key = try P256PrivateKey.generate()
        let t = 2_000_000.0
        let early = try proof(key, jti: "early", iat: t)
        #expect(verify(v, early, at: t))
        // Enough proofs later (still inside the early one's window) to prune the table more than once.
        for i in 0..<(3 * DPoPReplayTable.minPrune) {
            let p = try proof(key, jti: "p\(i)", iat: t + 30)
            #expect(verify(v, p, at: t + 30))
        }
        #expect(!verify(v, early, at: t + 59))
        // A proof whose window has passed is pruned away; a fresh jti is accepted.
        let late = try proof(key, jti: "late", iat: t + 200)
        #expect(verify(v, late, at: t + 200))
        #expect(!verify(v, late, at: t + 201))
    }
}
