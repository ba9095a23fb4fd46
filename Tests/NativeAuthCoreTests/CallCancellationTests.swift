import Synchronization
import Testing

@testable import NativeAuthCore

/// A started call's cancellation: ordered with a commit, wakers, and the thread's current cancellation.
struct CallCancellationTests {
    @Test func aCancelBeforeTheCommitStoresNothing() throws {
        let call = CallCancellation()
        #expect(call.cancel() && call.isCancelled)
        #expect(call.cancel())  // again: still cancelled
        var ran = false
        #expect(throws: NativeAuthError.self) {
            _ = try call.commit { () throws(NativeAuthError) -> Bool in
                ran = true
                return true
            }
        }
        #expect(!ran)
        #expect(!call.commitNow())
    }

    @Test func aCommitMakesALaterCancelTooLate() throws {
        let call = CallCancellation()
        #expect(try call.commit { () throws(NativeAuthError) -> Bool in true })
        #expect(!call.cancel() && !call.isCancelled)
        // A commit that stored nothing (answered false) leaves the call cancellable.
        let other = CallCancellation()
        #expect(try !other.commit { () throws(NativeAuthError) -> Bool in false })
        #expect(other.cancel())
        // A failing commit too, and its error is the body's.
        let third = CallCancellation()
        #expect(throws: NativeAuthError.self) {
            _ = try third.commit { () throws(NativeAuthError) -> Bool in throw NativeAuthError(.network, "x") }
        }
        #expect(third.cancel())
    }

    @Test func wakersRunOnceOnCancelAndNeverAfterRemoval() {
        let call = CallCancellation()
        let woken = Atomic<Int>(0)
        let kept = call.addWaker { woken.add(1, ordering: .relaxed) }
        let removed = call.addWaker { woken.add(100, ordering: .relaxed) }
        call.removeWaker(removed)
        #expect(call.cancel())
        #expect(woken.load(ordering: .relaxed) == 1)
        call.removeWaker(kept)
        _ = call.cancel()
        #expect(woken.load(ordering: .relaxed) == 1)
        // Registered after the cancel: runs at once.
        _ = call.addWaker { woken.add(10, ordering: .relaxed) }
        #expect(woken.load(ordering: .relaxed) == 11)
    }

    @Test func theCurrentCancellationIsPerThreadAndRestored() {
        #expect(CallCancellation.current == nil && !CallCancellation.currentIsCancelled)
        let outer = CallCancellation()
        let inner = CallCancellation()
        _ = inner.cancel()
        CallCancellation.with(outer) {
            #expect(CallCancellation.current === outer && !CallCancellation.currentIsCancelled)
            CallCancellation.with(inner) { #expect(CallCancellation.currentIsCancelled) }
            #expect(CallCancellation.current === outer)
        }
        #expect(CallCancellation.current == nil)
    }

    /// A cancel racing a commit: exactly one of them wins, every time.
    @Test func cancelAndCommitRaceWithOneWinner() async {
        for _ in 0..<200 {
            let call = CallCancellation()
            async let cancelled = Task.detached { call.cancel() }.value
            async let committed = Task.detached {
                (try? call.commit { () throws(NativeAuthError) -> Bool in true }) ?? false
            }
            .value
            let (c, s) = await (cancelled, committed)
            #expect(c != s)
        }
    }
}
