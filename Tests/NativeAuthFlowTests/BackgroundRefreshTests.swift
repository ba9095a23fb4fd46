import Foundation
import NativeAuthCABI
import NativeAuthJSON
import NativeAuthTestSupport
import Synchronization
import Testing

/// A started refresh cancelled after it was sent is finished in the background (issue 28, defect 10), through the C
/// ABI against the emulator process, which rotates refresh tokens and holds the token answer until released. The
/// Python tests (test_refresh_durability.py) cover the same from a host; these run under the sanitizers too.
@Suite(.serialized) struct BackgroundRefreshTests {
    static let token = "/oauth2/v2.0/token"

    func held(_ emu: EmulatorProcess) throws -> Int64 { try emu.control("GET", "faults")["held"]?.intValue ?? -1 }

    func holdNextTokenAnswer(_ emu: EmulatorProcess) throws {
        _ = try emu.control("POST", "faults", ["path": .string(Self.token), "stage": "after", "hold": true])
    }

    func signIn(_ c: ABIClient, _ scope: String) {
        let r = c.call(
            na_sign_in,
            ["username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(scope)]]
        )
        #expect(r.rc == NA_OK, "\(r.doc)")
    }

    @Test func aCancelledRefreshIsFinishedAndSharedWithTheCallWaitingForIt() async throws {
        let emu = try EmulatorProcess()
        // A held answer is released by the test: on a loaded machine, no request may time out meanwhile.
        let c = try ABIClient(emu, ["request_timeout_ms": 300_000])
        let (todo, _) = emu.apiScopes
        signIn(c, todo)
        try holdNextTokenAnswer(emu)
        let first = Completion()
        let (rc, op) = c.start("get_access_token", ["scopes": [.string(todo)], "force_refresh": true], first)
        #expect(rc == NA_OK)
        #expect(try await eventually(240) { try held(emu) == 1 })
        let waiting = Completion()
        let (rc2, op2) = c.start("get_access_token", ["scopes": [.string(todo)], "force_refresh": true], waiting)
        #expect(rc2 == NA_OK)
        #expect(na_op_cancel(op) == NA_OK)
        let a = try await first.wait()
        #expect(a.rc == NA_ESTATE && a.doc.errorCode == "cancelled", "\(a.doc)")
        #expect(try held(emu) == 1)  // ended while the server still held the answer
        _ = try emu.control("POST", "faults/release")
        let b = try await waiting.wait()
        #expect(b.rc == NA_OK && b.doc["access_token"] != nil, "\(b.doc)")
        let later = c.call(na_get_access_token, ["scopes": [.string(todo)], "force_refresh": true])
        #expect(later.rc == NA_OK, "\(later.doc)")
        #expect(try emu.control("GET", "counters")["refresh_token_reuse_detected"] == nil)
        na_op_free(op)
        na_op_free(op2)
    }

    /// The background refresh's log callback calls back into the library (answered `reentrant_call`, no deadlock),
    /// and the client is freed while the refresh is finishing: na_client_free returns once it stored, and no log line
    /// comes after.
    @Test func freeingWaitsForTheBackgroundRefreshAndItsCallbacks() async throws {
        let emu = try EmulatorProcess()
        let probe = Probe()
        var h: OpaquePointer? = nil
        let config: JSONValue = [
            "authority": .string(emu.authority), "client_id": .string(emu.clientID), "request_timeout_ms": 300_000,
        ]
        #expect(na_client_new(config.serialized(), &h, nil) == NA_OK)
        probe.handle.store(UInt(bitPattern: h), ordering: .releasing)
        let (todo, _) = emu.apiScopes
        var out: UnsafeMutablePointer<CChar>? = nil
        let request: JSONValue = [
            "username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(todo)],
        ]
        #expect(na_sign_in(h, request.serialized(), &out) == NA_OK)
        na_string_free(out)
        #expect(na_client_set_log_callback(h, 4, Probe.log, probe.userData) == NA_OK)
        try holdNextTokenAnswer(emu)
        let first = Completion()
        var op: OpaquePointer? = nil
        let tokenRequest: JSONValue = ["scopes": [.string(todo)], "force_refresh": true]
        #expect(na_start(h, "get_access_token", tokenRequest.serialized(), Completion.done, first.userData, &op) == 0)
        #expect(try await eventually(240) { try held(emu) == 1 })
        #expect(na_op_cancel(op) == NA_OK)
        #expect(try await first.wait().doc.errorCode == "cancelled")
        na_op_free(op)
        // Release from another thread once the free is under way (it waits for the refresh).
        let freeing = Atomic<Bool>(false)
        let releaser = Thread {
            while !freeing.load(ordering: .acquiring) { usleep(1000) }
            _ = try? emu.control("POST", "faults/release")
        }
        releaser.start()
        freeing.store(true, ordering: .releasing)
        na_client_free(h)
        probe.freed.store(true, ordering: .releasing)
        #expect(probe.nested.withLock { $0 } == ["reentrant_call"])
        #expect(probe.afterFree.load(ordering: .acquiring) == 0)
        #expect(try held(emu) == 0)
    }
}

/// A log callback that, on the first "refreshing" line, calls na_get_access_token from inside it, and counts lines
/// that come after the client was freed.
final class Probe: Sendable {
    let handle = Atomic<UInt>(0)
    let nested = Mutex<[String]>([])
    let freed = Atomic<Bool>(false)
    let afterFree = Atomic<Int>(0)

    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static let log: NALogFunction = { _, message, _, user in
        guard let user, let message else { return }
        let me = Unmanaged<Probe>.fromOpaque(user).takeUnretainedValue()
        if me.freed.load(ordering: .acquiring) { me.afterFree.add(1, ordering: .relaxed) }
        guard String(cString: message).hasPrefix("refreshing an access token"),
            me.nested.withLock({ $0.isEmpty }), let h = OpaquePointer(bitPattern: me.handle.load(ordering: .acquiring))
        else { return }
        var out: UnsafeMutablePointer<CChar>? = nil
        _ = na_get_access_token(h, #"{"force_refresh":true}"#, &out)
        let code = out.flatMap { try? JSONValue.parse(String(cString: $0)) }?.errorCode ?? "none"
        na_string_free(out)
        me.nested.withLock { $0.append(code) }
    }
}
