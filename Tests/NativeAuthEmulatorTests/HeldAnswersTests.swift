import Foundation
import NativeAuthJSON
import Testing

@testable import NativeAuthEmulator

/// A hold fault's answer and the release (`POST /_emulator/faults/release`): a release after the request took its
/// fault lets the answer go, also when it comes before the request reached its hold — a test sees the fault taken
/// (`GET faults` lists it no more) and releases at once, while the emulator is still handling the request.
@Suite struct HeldAnswersTests {
    func holdFault(_ injector: FaultInjector) throws -> Fault {
        injector.add(try Fault(["path": "/oauth2/v2.0/token", "stage": "after", "hold": true]))
        return try #require(injector.take(for: "/tenant/oauth2/v2.0/token"))
    }

    /// Runs `hold` for at most `seconds`; answers whether it ended by itself (a hold that misses its release would
    /// otherwise wait `HeldAnswers.maxSeconds`).
    func endsWithin(_ seconds: Double, _ hold: @escaping @Sendable () async -> Void) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await hold()
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    @Test func aReleaseBetweenTheTakeAndTheHoldLetsTheAnswerGo() async throws {
        let injector = FaultInjector()
        let fault = try holdFault(injector)
        #expect(injector.json.isEmpty)  // what the test polls for
        let ticket = try #require(fault.holdTicket)
        #expect(injector.held.release() == 0)  // nothing held yet: the request is still being handled
        #expect(await endsWithin(30) { await injector.held.hold(ticket: ticket) })
        #expect(injector.held.count == 0)
    }

    @Test func aReleaseBeforeTheTakeDoesNotLetItGo() async throws {
        let injector = FaultInjector()
        injector.add(try Fault(["path": "/token", "hold": true]))
        #expect(injector.held.release() == 0)  // an earlier release, before any request took the fault
        let ticket = try #require(injector.take(for: "/token")?.holdTicket)
        let held = Task { await injector.held.hold(ticket: ticket) }
        let deadline = Date().addingTimeInterval(30)
        while injector.held.count == 0 && Date() < deadline { await Task.yield() }
        #expect(injector.held.count == 1)
        #expect(injector.held.release() == 1)
        #expect(await endsWithin(30) { await held.value })
    }

    /// `POST /_emulator/reset` lets go an answer whose request took its fault before the reset but reaches its hold
    /// after it (a test's last request, still being handled when the next test resets the shared emulator).
    @Test func aResetBetweenTheTakeAndTheHoldLetsTheAnswerGo() async throws {
        let injector = FaultInjector()
        injector.add(try Fault(["path": "/token", "hold": true, "count": 2]))
        let ticket = try #require(injector.take(for: "/token")?.holdTicket)
        injector.reset()
        #expect(injector.json.isEmpty && injector.take(for: "/token") == nil)  // the fault's other use went with it
        #expect(await endsWithin(30) { await injector.held.hold(ticket: ticket) })
    }

    /// Two requests took a hold fault (count 2) and one release came between the takes: the first answer goes, the
    /// second waits for a release of its own.
    @Test func aReleaseBetweenTwoTakesLetsOnlyTheFirstGo() async throws {
        let injector = FaultInjector()
        injector.add(try Fault(["path": "/token", "hold": true, "count": 2]))
        let first = try #require(injector.take(for: "/token")?.holdTicket)
        injector.held.release()
        let second = try #require(injector.take(for: "/token")?.holdTicket)
        #expect(await endsWithin(30) { await injector.held.hold(ticket: first) })
        let held = Task { await injector.held.hold(ticket: second) }
        let deadline = Date().addingTimeInterval(30)
        while injector.held.count == 0 && Date() < deadline { await Task.yield() }
        #expect(injector.held.count == 1)  // still held: the release came before its take
        #expect(injector.held.release() == 1)
        #expect(await endsWithin(30) { await held.value })
    }

    @Test func onlyHoldFaultsCarryATicket() throws {
        let injector = FaultInjector()
        injector.add(try Fault(["path": "/token", "delay_ms": 5]))
        #expect(injector.take(for: "/token")?.holdTicket == nil)
        #expect(try holdFault(injector).holdTicket == 0)
    }
}
