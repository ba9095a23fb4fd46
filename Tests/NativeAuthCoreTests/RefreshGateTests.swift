import Dispatch
import Synchronization
import Testing

@testable import NativeAuthCore

// The in-process single-flight as join/leave answers (what `SilentTokenDriver` performs for `joinGate` and
// `leaveGate`). A waiter is on a thread of its own; it is known to be waiting (registered under the gate's lock)
// once `check` ran for the second time, so the leader leaves only then: no sleeps, no timing.

private let aToken = AccessToken(value: Secret("t"), scopes: ["api"], expiresOn: 5_000, refreshOn: nil, cachedAt: 1)

/// Leads a refresh of "k", lets a waiter for `waiterKey` join, leaves with `result`; answers how the waiter joined
/// (its own lead is left at once).
private func waiterJoins(
    _ waiterKey: String,
    after result: Result<RefreshGate.Outcome, NativeAuthError>
) throws -> RefreshGate.Join {
    let gate = RefreshGate()
    let far = SystemClock().now() + 600
    guard case .lead(let lease) = try gate.join(key: "k", deadline: far, check: { nil }) else {
        throw NativeAuthError(.internal, "the first caller did not lead")
    }
    let checks = Mutex(0)
    let waiting = DispatchSemaphore(value: 0)
    let done = DispatchSemaphore(value: 0)
    let answer = Mutex<Result<RefreshGate.Join, NativeAuthError>?>(nil)
    DispatchQueue.global().async {
        let r = Result { () throws(NativeAuthError) -> RefreshGate.Join in
            try gate.join(
                key: waiterKey,
                deadline: far,
                check: {
                    if checks.withLock({
                        $0 += 1
                        return $0
                    }) == 2 {
                        waiting.signal()
                    }
                    return nil
                }
            )
        }
        if case .success(.lead(let own)) = r { gate.leave(own, .failure(NativeAuthError(.internal, "unused"))) }
        answer.withLock { $0 = r }
        done.signal()
    }
    waiting.wait()
    gate.leave(lease, result)
    done.wait()
    guard let r = answer.withLock({ $0 }) else { throw NativeAuthError(.internal, "no answer") }
    return try r.get()
}

@Suite("RefreshGate: join and leave")
struct RefreshGateTests {
    @Test("a waiter for the same key shares the leader's result, success or failure")
    func shares() throws {
        guard case .shared(.success(let o)) = try waiterJoins("k", after: .success((aToken, false))) else {
            Issue.record("the waiter did not share the result")
            return
        }
        #expect(o.token.value == Secret("t") && !o.fromCache)
        let failed = try waiterJoins("k", after: .failure(NativeAuthError(.network, "canned")))
        guard case .shared(.failure(let e)) = failed else {
            Issue.record("the waiter did not share the failure")
            return
        }
        #expect(e.code == .network)
    }

    @Test("a leader's cancelled (before it sent anything) is not shared: the waiter looks again and leads")
    func cancelledIsNotShared() throws {
        let join = try waiterJoins("k", after: .failure(.callCancelled("canned")))
        guard case .lead = join else {
            Issue.record("the waiter took the leader's cancel: \(join)")
            return
        }
    }

    @Test("a waiter for another key waits for the refresh to end, then looks again (and leads)")
    func otherKey() throws {
        guard case .lead = try waiterJoins("other", after: .success((aToken, false))) else {
            Issue.record("the waiter for another key took a result")
            return
        }
    }

    @Test("the leader's own thread joining again (a log callback) is reentrant_call; a cached token answers first")
    func reentrant() throws {
        let gate = RefreshGate()
        let far = SystemClock().now() + 600
        guard case .lead(let lease) = try gate.join(key: "k", deadline: far, check: { nil }) else {
            Issue.record("the first caller did not lead")
            return
        }
        #expect(throws: NativeAuthError.self) { try gate.join(key: "k", deadline: far, check: { nil }) }
        do {
            _ = try gate.join(key: "k", deadline: far, check: { nil })
        } catch {
            #expect(error.code == .reentrantCall)
        }
        guard case .hit = try gate.join(key: "k", deadline: far, check: { aToken }) else {
            Issue.record("a cached token did not answer")
            return
        }
        gate.leave(lease, .success((aToken, false)))
    }

    @Test("a wait past its deadline ends with timeout; the gate is free again after the leader leaves")
    func timeout() throws {
        let gate = RefreshGate()
        let far = SystemClock().now() + 600
        guard case .lead(let lease) = try gate.join(key: "k", deadline: far, check: { nil }) else {
            Issue.record("the first caller did not lead")
            return
        }
        let code = Mutex<NativeAuthError.Code?>(nil)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do throws(NativeAuthError) {
                _ = try gate.join(key: "k", deadline: 0, check: { nil })
            } catch {
                code.withLock { $0 = error.code }
            }
            done.signal()
        }
        done.wait()
        #expect(code.withLock { $0 } == .timeout)
        gate.leave(lease, .success((aToken, false)))
        guard case .lead(let next) = try gate.join(key: "k", deadline: far, check: { nil }) else {
            Issue.record("the gate was not free")
            return
        }
        gate.leave(next, .success((aToken, false)))
    }
}
