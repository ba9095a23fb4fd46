import Synchronization

/// Answers held by a fault with `"hold": true` (`POST /_emulator/faults`) until `POST /_emulator/faults/release`, the
/// emulator's reset, or `maxSeconds`: a test can do something while a request is on the wire — for as long as it
/// needs, with no guess at a delay — and then let the answer go. A leaf lock.
final class HeldAnswers: Sendable {
    private struct State {
        /// Counts releases: a hold ends when this moves past the value it saw when it began.
        var releases = 0
        var held = 0
    }

    private let state = Mutex(State())
    /// The longest hold (the HTTP adapter's handler timeout leaves room for it, as for the longest delay).
    static let maxSeconds = 240

    /// Waits until the next release (or `maxSeconds`, or the request's task is cancelled).
    func hold() async {
        let seen = state.withLock { s -> Int in
            s.held += 1
            return s.releases
        }
        defer { state.withLock { $0.held -= 1 } }
        let deadline = ContinuousClock.now + .seconds(Self.maxSeconds)
        while state.withLock({ $0.releases == seen }), ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(nanoseconds: 2_000_000)
        }
    }

    /// Lets every held answer go; answers how many were held.
    @discardableResult
    func release() -> Int {
        state.withLock { s -> Int in
            s.releases += 1
            return s.held
        }
    }

    /// How many answers are held now.
    var count: Int { state.withLock { $0.held } }
}
