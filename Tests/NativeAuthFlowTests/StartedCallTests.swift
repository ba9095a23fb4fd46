import Foundation
import NativeAuthCABI
import NativeAuthJSON
import NativeAuthTestSupport
import Synchronization
import Testing

/// One started call's completion, as the host's done function receives it.
final class Completion: Sendable {
    struct Answer: Sendable {
        let rc: Int32
        let doc: JSONValue
        let text: String
        let thread: UInt
        /// When done ran (a promptness check measures this, not when the polling test task woke up).
        let at = Date()
    }
    private let state = Mutex<[Answer]>([])

    var answers: [Answer] { state.withLock { $0 } }
    var answer: Answer? { answers.first }

    static let done: NADoneFunction = { rc, text, user in
        guard let user else { return }
        let me = Unmanaged<Completion>.fromOpaque(user).takeUnretainedValue()
        let t = text.map { String(cString: $0) } ?? ""
        let answer = Answer(rc: rc, doc: (try? JSONValue.parse(t)) ?? .null, text: t, thread: UInt(pthread_self()))
        me.state.withLock { $0.append(answer) }
    }

    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Waits (polling, bounded — generously: under ASan with every suite running on two cores a sign-in has taken
    /// over 20 s; yielding the test's thread to others) until done ran; the answer.
    func wait(seconds: Double = 90) async throws -> Answer {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let a = answer { return a }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        // A test task may resume from its sleep long after the deadline (Swift's cooperative pool is small and other
        // suites block it): look once more before calling done late.
        if let a = answer { return a }
        throw TestFailure("done did not run within \(seconds) s")
    }
}

extension ABIClient {
    /// Starts `call` with `request`; the completion (kept alive by the caller) and the op handle.
    func start(_ call: String, _ request: JSONValue, _ completion: Completion) -> (Int32, OpaquePointer?) {
        var op: OpaquePointer? = nil
        let rc = na_start(handle, call, request.serialized(), Completion.done, completion.userData, &op)
        return (rc, op)
    }
}

/// Polls `condition` until it holds or `seconds` pass. Async, so that a waiting test does not hold one of the few
/// threads of Swift's cooperative pool, which the in-process emulator of other suites needs. The bound is multiplied
/// by NATIVEAUTH_TEST_TIME_SCALE (the sanitizer runs set 4): there every suite blocks the pool's two threads with C
/// calls, and a polling task may not be resumed for minutes — the bound says when to give up, not how fast.
func eventually(_ seconds: Double = 90, _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = Date().addingTimeInterval(seconds * testTimeScale)
    while Date() < deadline {
        if try condition() { return true }
        try await Task.sleep(nanoseconds: 2_000_000)
    }
    return try condition()
}

/// A server that answers every request after 8 s: a started call's request stays on the wire until cancelled.
func slowServer() throws -> TestHTTPServer {
    try TestHTTPServer { _ in
        .reply(
            status: 200,
            headers: [("Content-Type", "application/json")],
            body: Array(#"{"continuation_token":"CT"}"#.utf8),
            delayMs: 8000
        )
    }
}

/// The asynchronous C API (na_start, na_op_cancel, na_op_free, na_client_event_fd, na_client_dispatch) against the
/// emulator and a server that answers late.
@Suite(.serialized) struct StartedCallTests {
    @Test func tutorialStartedOnWorkersGivesTheBlockingCallsDocuments() async throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (todo, notes) = emu.apiScopes
        let signIn = Completion()
        let (rc, op) = c.start(
            "sign_in",
            ["username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(todo)]],
            signIn
        )
        #expect(rc == NA_OK && op != nil)
        let a = try await signIn.wait()
        #expect(a.rc == NA_OK && a.doc["status"] == "signed_in", "\(a.doc)")
        #expect(a.thread != UInt(pthread_self()))  // on a worker
        #expect(na_op_cancel(op) == NA_ESTATE)  // finished: too late
        na_op_free(op)
        #expect(na_op_cancel(op) == NA_EINVAL)  // a freed op is detected
        na_op_free(op)  // twice: ignored

        // The same request started and called: the same document.
        let token = Completion()
        #expect(c.start("get_access_token", ["scopes": [.string(todo)]], token).0 == NA_OK)
        let started = try await token.wait()
        var out: UnsafeMutablePointer<CChar>? = nil
        let blockingRC = na_get_access_token(c.handle, JSONValue.object(["scopes": [.string(todo)]]).serialized(), &out)
        #expect(started.rc == blockingRC && started.text == out.map { String(cString: $0) })
        na_string_free(out)

        let urls = emu.apiURLs
        let api1 = Completion()
        let api2 = Completion()
        #expect(
            na_start(
                c.handle,
                "call_api",
                #"{"url":"\#(urls.todo)","scopes":["\#(todo)"]}"#,
                Completion.done,
                api1.userData,
                nil
            ) == NA_OK
        )
        #expect(
            na_start(
                c.handle,
                "call_api",
                #"{"url":"\#(urls.notes)","scopes":["\#(notes)"]}"#,
                Completion.done,
                api2.userData,
                nil
            ) == NA_OK
        )
        let (r1, r2) = (try await api1.wait(), try await api2.wait())
        #expect(r1.doc["status"] == 200 && r2.doc["body"]?["api"] == "Notes")

        let bad = Completion()
        #expect(c.start("get_access_token", .string("not an object"), bad).0 == NA_OK)
        #expect(try await bad.wait().doc.errorCode == "invalid_argument")  // a request error is the call's result

        let out2 = Completion()
        #expect(c.start("sign_out", [:], out2).0 == NA_OK)
        #expect(try await out2.wait().doc["was_signed_in"] == true)
    }

    @Test func startRefusesBadArgumentsAndDoneNeverRuns() async throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let never = Completion()
        var op: OpaquePointer? = OpaquePointer(bitPattern: 1)
        #expect(na_start(nil, "sign_in", "{}", Completion.done, never.userData, &op) == NA_EINVAL && op == nil)
        #expect(na_start(c.handle, "nope", "{}", Completion.done, never.userData, &op) == NA_EINVAL)
        #expect(na_start(c.handle, "parse_www_authenticate", "{}", Completion.done, never.userData, &op) == NA_EINVAL)
        #expect(na_start(c.handle, nil, "{}", Completion.done, never.userData, &op) == NA_EINVAL)
        #expect(na_start(c.handle, "sign_in", "{}", nil, never.userData, &op) == NA_EINVAL)
        let long = String(repeating: "x", count: 100_000)
        #expect(na_start(c.handle, long, "{}", Completion.done, never.userData, &op) == NA_EINVAL)
        #expect(
            na_start(OpaquePointer(bitPattern: 0x1234_5678), "sign_in", "{}", Completion.done, nil, &op) == NA_EINVAL
        )
        #expect(na_op_cancel(nil) == NA_EINVAL && na_op_cancel(OpaquePointer(bitPattern: 77)) == NA_EINVAL)
        na_op_free(nil)
        na_op_free(OpaquePointer(bitPattern: 77))
        var fd: Int32 = -1
        #expect(na_client_event_fd(nil, &fd) == NA_EINVAL && na_client_event_fd(c.handle, nil) == NA_EINVAL)
        #expect(na_client_dispatch(nil) == NA_EINVAL && na_client_dispatch(c.handle) == 0)
        #expect(never.answers.isEmpty)
    }

    @Test func eventFdRunsEveryDoneInsideDispatchOnTheCallersThread() async throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (todo, _) = emu.apiScopes
        #expect(
            c.call(
                na_sign_in,
                [
                    "username": .string(annEmail), "password": .string(annPassword),
                    "scopes": [.string(todo)],
                ]
            ).rc == NA_OK
        )
        var fd: Int32 = -1
        #expect(na_client_event_fd(c.handle, &fd) == NA_OK && fd >= 0)
        var again: Int32 = -1
        #expect(na_client_event_fd(c.handle, &again) == NA_OK && again == fd)
        let completions = (0..<40).map { _ in Completion() }
        for (i, done) in completions.enumerated() {
            let call = i % 2 == 0 ? "get_access_token" : "get_account"
            #expect(na_start(c.handle, call, #"{"scopes":["\#(todo)"]}"#, Completion.done, done.userData, nil) == NA_OK)
        }
        var ran = 0
        let me = UInt(pthread_self())
        let deadline = Date().addingTimeInterval(20)
        while ran < 40 && Date() < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 1000) >= 0 else { break }
            if p.revents & Int16(POLLIN) != 0 {
                let n = na_client_dispatch(c.handle)
                #expect(n >= 0)
                ran += Int(n)
            }
        }
        #expect(ran == 40)
        for done in completions {
            #expect(done.answers.count == 1 && done.answer?.thread == me && done.answer?.rc == NA_OK)
        }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        #expect(poll(&p, 1, 0) == 0)  // drained: not readable
        #expect(na_client_dispatch(c.handle) == 0)
    }

    /// A sign-in whose request the server answers late: cancelled while the request is on the wire, it ends at
    /// once with "cancelled" and nothing is stored; the client keeps working.
    @Test func cancelAbortsTheRequestOnTheWire() async throws {
        let arrived = Atomic<Int>(0)
        let server = try TestHTTPServer { request in
            if request.target.hasSuffix("/initiate") {
                arrived.add(1, ordering: .relaxed)
                return .reply(
                    status: 200,
                    headers: [("Content-Type", "application/json")],
                    body: Array(#"{"continuation_token":"CT"}"#.utf8),
                    delayMs: 8000
                )
            }
            return .json(#"{"error":"invalid_request"}"#, status: 400)
        }
        defer { server.stop() }
        let c = try ABIClient(authority: server.baseURL + "/contoso.onmicrosoft.com")
        let done = Completion()
        let (rc, op) = c.start("sign_in", ["username": "ann@contoso.com", "password": "pw"], done)
        #expect(rc == NA_OK)
        #expect(try await eventually { arrived.load(ordering: .relaxed) == 1 })
        let t0 = Date()
        #expect(na_op_cancel(op) == NA_OK)
        let a = try await done.wait()
        #expect(a.at.timeIntervalSince(t0) < 1.0)
        #expect(a.rc == NA_ESTATE && a.doc.errorCode == "cancelled", "\(a.doc)")
        #expect(!a.text.contains("pw"))
        #expect(na_op_cancel(op) == NA_OK || na_op_cancel(op) == NA_ESTATE)
        na_op_free(op)
        #expect(c.call(na_get_accounts, [:]).doc["accounts"] == [])
    }

    /// A flow step cancelled while its request is on the wire: "cancelled", naming the flow, which stays usable —
    /// the step is taken again and signs the user in.
    @Test func aCancelledFlowStepKeepsItsFlow() async throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let first = c.call(na_sign_in, ["username": .string(annEmail)])
        #expect(first.doc["status"] == "password_required")
        let flow = first.doc["flow"] ?? .null
        try emu.control("POST", "faults", ["path": "/oauth2/v2.0/token", "delay_ms": 8000, "count": 1])
        try emu.clearLog()
        let done = Completion()
        let (_, op) = c.start("flow_submit", ["flow": flow, "password": .string(annPassword)], done)
        // The fault is taken when the request arrives: from then on it is on the wire, held by the emulator.
        #expect(try await eventually { try emu.control("GET", "faults")["faults"]?.arrayValue?.isEmpty == true })
        #expect(na_op_cancel(op) == NA_OK)
        let a = try await done.wait(seconds: 2)
        na_op_free(op)
        #expect(a.doc.errorCode == "cancelled" && a.doc["error"]?["flow"] == flow, "\(a.doc)")
        let again = c.call(na_flow_submit, ["flow": flow, "password": .string(annPassword)])
        #expect(again.doc["status"] == "signed_in", "\(again.doc)")
    }

    /// With one worker busy, a queued call that is cancelled is answered at once, not after the busy one.
    @Test func cancellingAQueuedCallAnswersAtOnce() async throws {
        let server = try slowServer()
        defer { server.stop() }
        let c = try ABIClient(authority: server.baseURL + "/contoso.onmicrosoft.com", ["async_workers": 1])
        let busy = Completion()
        let queued = Completion()
        let (_, busyOp) = c.start("sign_in", ["username": "ann@contoso.com", "password": "pw"], busy)
        let (_, queuedOp) = c.start("get_accounts", [:], queued)
        #expect(na_op_cancel(queuedOp) == NA_OK)
        #expect(try await queued.wait(seconds: 2).doc.errorCode == "cancelled")
        #expect(busy.answers.isEmpty)
        #expect(na_op_cancel(busyOp) == NA_OK)
        #expect(try await busy.wait(seconds: 2).doc.errorCode == "cancelled")
        na_op_free(busyOp)
        na_op_free(queuedOp)
    }

    /// Freeing the client with calls running and queued: every done has run, once, with "cancelled", when
    /// na_client_free returns — in worker mode and in event-fd mode.
    @Test(arguments: [false, true]) func freeingTheClientCompletesEveryCallOnce(eventFD: Bool) async throws {
        let server = try slowServer()
        defer { server.stop() }
        var h: OpaquePointer? = nil
        let config = #"{"authority":"\#(server.baseURL)/t","client_id":"c","async_workers":2}"#
        #expect(na_client_new(config, &h, nil) == NA_OK)
        if eventFD {
            var fd: Int32 = -1
            #expect(na_client_event_fd(h, &fd) == NA_OK)
        }
        let completions = (0..<6).map { _ in Completion() }
        var ops: [OpaquePointer?] = []
        for done in completions {
            var op: OpaquePointer? = nil
            #expect(
                na_start(
                    h,
                    "sign_in",
                    #"{"username":"a@b.c","password":"pw"}"#,
                    Completion.done,
                    done.userData,
                    &op
                ) == NA_OK
            )
            ops.append(op)
        }
        #expect(try await eventually { server.requests.count >= 2 })  // two running, four queued
        let t0 = Date()
        na_client_free(h)
        #expect(Date().timeIntervalSince(t0) < 2.0)
        for done in completions {
            #expect(done.answers.count == 1 && done.answer?.doc.errorCode == "cancelled")
        }
        var op: OpaquePointer? = nil
        #expect(na_start(h, "get_accounts", "{}", Completion.done, completions[0].userData, &op) == NA_EINVAL)
        for op in ops { na_op_free(op) }
        #expect(completions.allSatisfy { $0.answers.count == 1 })
    }

    /// A browser sign-in waiting for its redirect (the browser callback opened nothing) ends within a second of
    /// its cancel, storing nothing.
    @Test func cancelEndsABrowserWait() async throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        #expect(na_client_set_browser_callback(c.handle, { _, _ in 0 }, nil) == NA_OK)
        let done = Completion()
        let (rc, op) = c.start("sign_in_interactive", ["scopes": ["openid"]], done)
        #expect(rc == NA_OK)
        #expect(try await eventually { try emu.requests("/.well-known/openid-configuration").count >= 1 })
        let t0 = Date()
        #expect(na_op_cancel(op) == NA_OK)
        let a = try await done.wait()
        #expect(a.at.timeIntervalSince(t0) < 1.0)
        #expect(a.doc.errorCode == "cancelled", "\(a.doc)")
        na_op_free(op)
        #expect(c.call(na_get_accounts, [:]).doc["accounts"] == [])
    }

    /// The client freed from inside a log callback of a started call, in event-fd mode: nobody can dispatch any
    /// more, so that call's done still runs (on its worker), once.
    @Test func freedFromInsideARunningCallStillCompletesIt() async throws {
        let emu = try EmulatorProcess()
        var h: OpaquePointer? = nil
        #expect(na_client_new(#"{"authority":"\#(emu.authority)","client_id":"\#(emu.clientID)"}"#, &h, nil) == NA_OK)
        var fd: Int32 = -1
        #expect(na_client_event_fd(h, &fd) == NA_OK)
        final class Freer: @unchecked Sendable {
            let handle: OpaquePointer?
            let freed = Atomic<Bool>(false)
            init(_ h: OpaquePointer?) { handle = h }
        }
        let freer = Freer(h)
        let log:
            @convention(c) (Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void =
                { _, _, _, user in
                    guard let user else { return }
                    let f = Unmanaged<Freer>.fromOpaque(user).takeUnretainedValue()
                    if !f.freed.exchange(true, ordering: .acquiringAndReleasing) { na_client_free(f.handle) }
                }
        #expect(na_client_set_log_callback(h, 4, log, Unmanaged.passUnretained(freer).toOpaque()) == NA_OK)
        let done = Completion()
        #expect(na_start(h, "client_info", "{}", Completion.done, done.userData, nil) == NA_OK)
        let a = try await done.wait(seconds: 10)
        let wasFreed = freer.freed.load(ordering: .acquiring)
        #expect(wasFreed)
        #expect(done.answers.count == 1 && (a.rc == NA_OK || a.doc.errorCode == "cancelled"), "\(a.doc)")
        #expect(na_client_dispatch(h) == NA_EINVAL)
    }

    /// done may free its own op, start another call and free the client (on a worker, and inside dispatch).
    @Test(arguments: [false, true]) func doneMayCallBackIntoTheLibrary(eventFD: Bool) async throws {
        let emu = try EmulatorProcess()
        var h: OpaquePointer? = nil
        let config = #"{"authority":"\#(emu.authority)","client_id":"\#(emu.clientID)"}"#
        #expect(na_client_new(config, &h, nil) == NA_OK)
        var fd: Int32 = -1
        if eventFD { #expect(na_client_event_fd(h, &fd) == NA_OK) }
        final class Chain: @unchecked Sendable {
            var handle: OpaquePointer?
            let second = Completion()
            let finished = Atomic<Bool>(false)
            init(_ h: OpaquePointer?) { handle = h }
        }
        let chain = Chain(h)
        let first: NADoneFunction = { _, _, user in
            guard let user else { return }
            let chain = Unmanaged<Chain>.fromOpaque(user).takeUnretainedValue()
            // Another call from inside done, then the client freed from inside done: the second call is
            // cancelled or finished, and its done has run when na_client_free returns.
            _ = na_start(chain.handle, "get_accounts", "{}", Completion.done, chain.second.userData, nil)
            na_client_free(chain.handle)
            chain.finished.store(true, ordering: .releasing)
        }
        #expect(na_start(h, "get_accounts", "{}", first, Unmanaged.passUnretained(chain).toOpaque(), nil) == NA_OK)
        if eventFD {
            #expect(
                try await eventually {
                    _ = na_client_dispatch(h)
                    return chain.finished.load(ordering: .acquiring)
                }
            )
        } else {
            #expect(try await eventually { chain.finished.load(ordering: .acquiring) })
        }
        #expect(chain.second.answers.count == 1)
        #expect(na_client_dispatch(h) == NA_EINVAL)
    }
}

/// NATIVEAUTH_TEST_TIME_SCALE (≥ 1, default 1): how much longer than usual a bound on a wait may be.
let testTimeScale: Double = {
    let value = ProcessInfo.processInfo.environment["NATIVEAUTH_TEST_TIME_SCALE"].flatMap(Double.init) ?? 1
    return max(1, value)
}()
