import Testing

@testable import NativeAuthEmulator

/// The replay table alone, at sizes the signed proofs of the other tests cannot reach cheaply: its pruning costs work
/// linear in the proofs recorded (counted, not timed), keeps every proof still in the window and drops the rest.
@Suite struct DPoPReplayTableTests {
    @Test func a100kTableIsPrunedInLinearWorkAndForgetsNothingInTheWindow() {
        var table = DPoPReplayTable()
        let t = 1_000_000.0
        let n = 100_000
        var replays = 0
        for i in 0..<n where table.replayed("k\(i % 50)|j\(i)", iat: t, window: 60, now: t + Double(i % 60)) {
            replays += 1
        }
        #expect(replays == 0)
        #expect(table.pruneWork <= 4 * n)
        var refused = 0
        for i in stride(from: 0, to: n, by: 101)
        where table.replayed("k\(i % 50)|j\(i)", iat: t, window: 60, now: t + 60) {
            refused += 1
        }
        #expect(refused == (n + 100) / 101)
        // Out of the window: the next pruning drops them all, and a reused jti is a new proof.
        for i in 0..<n where table.replayed("late|\(i)", iat: t + 1000, window: 60, now: t + 1000) { replays += 1 }
        #expect(replays == 0)
        #expect(table.seen.count <= n)
        #expect(table.seen["k0|j0"] == nil)
        let reused = table.replayed("k1|j1", iat: t + 1000, window: 60, now: t + 1000)
        #expect(!reused)
        #expect(table.pruneWork <= 8 * n)
    }

    /// Pruning on every check (the cost before 41585f2) would be quadratic: a table of steady size, checked many
    /// times.
    @Test func aSteadyTableCostsAmortisedConstantWorkPerCheck() {
        var table = DPoPReplayTable()
        for i in 0..<50_000 {
            // Each proof leaves the window 10 s after it was seen: the table holds about 10 × 100 live at any time.
            _ = table.replayed("k|\(i)", iat: Double(i / 100), window: 10, now: Double(i / 100))
        }
        #expect(table.pruneWork <= 3 * 50_000)
        #expect(table.seen.count <= 2 * DPoPReplayTable.minPrune + 1100)
    }
}
