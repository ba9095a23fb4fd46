/// The DPoP proofs a `DPoPVerifier` accepted (RFC 9449 §11.1), by `jkt|jti`, each with its `iat`. A proof is a replay
/// while the one seen before is within the widest window any check has used: the window is a setting
/// (`oidc_dpop_iat_window`) that may be widened at run time, which makes an older proof acceptable again — keeping
/// entries by the window of the time they were seen would let such a proof in twice. A proof dated ahead is kept until
/// its `iat` has left the window, not only while its first sighting is recent.
///
/// Pruned when the table has doubled since the last pruning (amortised: filtering on every check made each request
/// cost the whole table); `pruneWork` counts the entries pruning has looked at, so tests can measure it.
struct DPoPReplayTable: Sendable {
    static let minPrune = 1024
    private(set) var seen: [String: Double] = [:]
    private var pruneAt = Self.minPrune
    private var widest = 0.0
    private(set) var pruneWork = 0

    /// Whether the proof named `key`, dated `iat` (already checked against `window`), was seen before; records it when
    /// it was not.
    mutating func replayed(_ key: String, iat: Double, window: Double, now: Double) -> Bool {
        widest = max(widest, window)
        let widest = self.widest
        if seen.count >= pruneAt {
            pruneWork += seen.count
            seen = seen.filter { $0.value + widest >= now }
            pruneAt = max(Self.minPrune, 2 * seen.count)
        }
        if let before = seen[key], before + widest >= now { return true }
        seen[key] = iat
        return false
    }
}
