import Foundation
import NativeAuthCrypto
import Synchronization
import Testing

@testable import NativeAuthEmulator

/// The replay table at its edges: the window changed at run time (`oidc_dpop_iat_window`), proofs dated exactly at
/// either end of the window, many keys, concurrent verifies of one proof and `reset`.
extension DPoPReplayTests {
    func verify(_ v: DPoPVerifier, _ proof: String, at now: Double, window: Double) -> Bool {
        let req = EmulatorRequest(method: "GET", path: "/oidc/api/me", headers: ["dpop": proof])
        let r = v.verify(
            req,
            expectedURI: uri,
            place: .resource,
            accessToken: nil,
            nonceMode: .off,
            iatWindow: window,
            now: now
        )
        if case .success = r { return true }
        return false
    }

    /// A proof seen under a short window is still a replay after the window is made longer (a setting changed at run
    /// time): its `iat` is acceptable again, so it must not be accepted twice.
    @Test func aWiderWindowDoesNotMakeASeenProofReplayable() throws {
        let v = DPoPVerifier(counters: Counters())
        let key = try P256PrivateKey.generate()
        let t = 3_000_000.0
        let p = try proof(key, jti: "widened", iat: t)
        #expect(verify(v, p, at: t, window: 60))
        #expect(!verify(v, p, at: t + 100, window: 60))  // outside the window
        #expect(!verify(v, p, at: t + 100, window: 300))  // inside the wider one: a replay
        // Also once the table has been pruned in between, under the short window.
        for i in 0..<(2 * DPoPReplayTable.minPrune) {
            #expect(verify(v, try proof(key, jti: "f\(i)", iat: t + 200), at: t + 200, window: 60))
        }
        #expect(!verify(v, p, at: t + 250, window: 300))
    }

    @Test func proofsAtTheEdgesOfTheWindow() throws {
        let v = DPoPVerifier(counters: Counters())
        let key = try P256PrivateKey.generate()
        let t = 4_000_000.0
        let past = try proof(key, jti: "past", iat: t - window)
        let ahead = try proof(key, jti: "ahead", iat: t + window)
        #expect(verify(v, past, at: t))
        #expect(!verify(v, past, at: t))
        #expect(verify(v, ahead, at: t))
        #expect(!verify(v, ahead, at: t + 2 * window))
        #expect(!verify(v, try proof(key, jti: "late", iat: t - window - 1), at: t))
        #expect(!verify(v, try proof(key, jti: "early", iat: t + window + 1), at: t))
        // The same jti under another key is another proof.
        #expect(verify(v, try proof(try P256PrivateKey.generate(), jti: "past", iat: t), at: t))
        // After reset nothing is remembered.
        v.reset()
        #expect(verify(v, past, at: t))
    }

    /// One proof verified from many threads at once is accepted exactly once.
    @Test func concurrentVerifiesOfOneProofAcceptItOnce() async throws {
        let v = DPoPVerifier(counters: Counters())
        let key = try P256PrivateKey.generate()
        let t = 5_000_000.0
        for round in 0..<20 {
            let p = try proof(key, jti: "c\(round)", iat: t)
            let accepted = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { verify(v, p, at: t) } }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(accepted == 1)
        }
    }
}
