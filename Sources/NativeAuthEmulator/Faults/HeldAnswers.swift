import Synchronization

/// Answers held by a fault with `"hold": true` (`POST /_emulator/faults`) until `POST /_emulator/faults/release`, the
/// emulator's reset, or `maxSeconds`: a test can do something while a request is on the wire — for as long as it
/// needs, with no guess at a delay — and then let the answer go. A leaf lock.
final class HeldAnswers: Sendable {
    private struct State {
        /// Counts releases: a hold ends when this moves past its ticket (the value when its fault was taken).
        var releases = 0
        var held = 0
    }

    private let state = Mutex(State())
    /// The longest hold (the HTTP adapter's handler timeout leaves room for it, as for the longest delay).
    static let maxSeconds = 240

    /// The releases so far: a hold given this ticket ends at the first release after it was read.
    var ticket: Int { state.withLock { $0.releases } }

    /// Waits until the first release after `ticket` (or `maxSeconds`, or the request's task is cancelled). The
    /// ticket is read when the request took its fault, not here: a test that saw the fault taken and released at once
    /// — before the request got here — must not leave the answer held until `maxSeconds`.
    func hold(ticket seen: Int) async {
        state.withLock { $0.held += 1 }
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
