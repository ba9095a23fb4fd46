import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Synchronization
import Testing

/// In-process races of issue 18, through the C ABI against the emulator: a cancel racing the answer of the step it
/// cancels, and calls from a log callback that need what their own thread holds.
@Suite struct InProcessRaceTests {
    /// Waits (polling, bounded) until `condition` holds.
    private func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while try !condition() {
            guard Date() < deadline else { throw TestFailure("timed out waiting for \(what)") }
            usleep(2000)
        }
    }

    /// A flow cancelled while its last step is on the wire: the server answers (tokens issued), but late; the answer
    /// is discarded, nothing is cached and nobody is signed in by it.
    @Test func aLateAnswerAfterCancelIsDiscarded() throws {
        let emu = try EmulatorProcess()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-race-\(UUID().uuidString)")
        let path = dir.appendingPathComponent("cache.json").path
        let c = try ABIClient(emu, ["cache": ["type": "file", "path": .string(path)]])
        let start = c.call(na_sign_in, ["username": .string(annEmail)])
        #expect(start.doc["status"] == "password_required")
        let flow = try #require(start.doc["flow"]?.stringValue)
        // The token request is handled (tokens issued), then its answer waits 1.5 s before it is sent.
        try emu.control("POST", "faults", ["path": "/token", "stage": "after", "delay_ms": 1500])
        try emu.clearLog()
        let result = Mutex<(Int32, JSONValue)?>(nil)
        let submitter = Thread {
            let r = c.call(na_flow_submit, ["flow": .string(flow), "password": .string(annPassword)])
            result.withLock { $0 = (r.rc, r.doc) }
        }
        submitter.start()
        try waitUntil("the token request to reach the emulator") { !(try emu.requests("/token")).isEmpty }
        let cancel = c.call(na_flow_submit, ["flow": .string(flow), "action": "cancel"])
        #expect(cancel.rc == NA_OK && cancel.doc["status"] == "cancelled", "\(cancel.doc.serialized())")
        try waitUntil("the submit call to return") { result.withLock { $0 } != nil }
        let r = try #require(result.withLock { $0 })
        #expect(r.0 == NA_ESTATE && r.1.errorCode == "cancelled", "\(r.1.serialized())")
        let account = c.call(na_get_account, .object([:]))
        #expect(account.rc == NA_ENOTFOUND && account.doc.errorCode == "no_account", "\(account.doc.serialized())")
        // Nothing reached the cache file either.
        if let bytes = FileManager.default.contents(atPath: path), !bytes.isEmpty {
            let doc = try JSONValue.parse(Array(bytes))
            #expect(doc["RefreshToken"]?.objectValue?.isEmpty ?? true, "the file holds a refresh token")
        }
    }

    /// A cancel that comes after the flow signed the user in says so instead of "cancelled".
    @Test func aCancelAfterTheSignInSaysTheFlowFinished() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_sign_in, ["username": .string(annEmail)])
        let flow = try #require(start.doc["flow"]?.stringValue)
        let done = c.call(na_flow_submit, ["flow": .string(flow), "password": .string(annPassword)])
        #expect(done.doc["status"] == "signed_in")
        let cancel = c.call(na_flow_submit, ["flow": .string(flow), "action": "cancel"])
        #expect(cancel.rc == NA_ESTATE && cancel.doc.errorCode == "flow_invalid", "\(cancel.doc.serialized())")
        #expect(c.call(na_get_account, .object([:])).rc == NA_OK)
        // An unknown flow is still simply cancelled (idempotent).
        #expect(c.call(na_flow_submit, ["flow": "f_unknown", "action": "cancel"]).doc["status"] == "cancelled")
    }

    /// What a log callback on the refreshing thread asks for, and what it got.
    final class Reentry: @unchecked Sendable {
        let lock = NSLock()
        var handle: OpaquePointer? = nil
        var other: OpaquePointer? = nil
        var request = ""
        var answers: [(Int32, String)] = []
        var seconds: [Double] = []
        var done = false
    }

    /// A log callback that, on the refresh's own log line, asks for the token being refreshed — on the same client
    /// (the in-process refresh gate its thread holds) and on a second client sharing the cache file (the file's
    /// refresh lock its thread holds). Each is answered at once with `reentrant_call`, not after waiting for itself;
    /// the outer call succeeds.
    @Test func aCallFromTheLogCallbackDoesNotWaitForItsOwnThread() throws {
        let emu = try EmulatorProcess()
        // Tokens of 5 minutes or less are never served from the cache: the inner call needs the refresh too.
        try emu.control("POST", "settings", ["access_token_lifetime": 300])
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-reentry-\(UUID().uuidString)")
        let cache: JSONValue = ["type": "file", "path": .string(dir.appendingPathComponent("cache.json").path)]
        let c = try ABIClient(emu, ["cache": cache, "request_timeout_ms": 20000])
        let other = try ABIClient(emu, ["cache": cache, "request_timeout_ms": 20000])
        let scope = emu.apiScopes.todo
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        let probe = Reentry()
        probe.handle = c.handle
        probe.other = other.handle
        probe.request = JSONValue.object(["scopes": [.string(scope)]]).serialized()
        let callback: NALogFunction = { _, message, _, user in
            guard let user, let message else { return }
            let p = Unmanaged<Reentry>.fromOpaque(user).takeUnretainedValue()
            guard String(cString: message).hasPrefix("refreshing an access token") else { return }
            let first = p.lock.withLock { () -> Bool in
                defer { p.done = true }
                return !p.done
            }
            guard first else { return }
            for h in [p.handle, p.other] {
                var out: UnsafeMutablePointer<CChar>? = nil
                let began = Date()
                let rc = na_get_access_token(h, p.request, &out)
                let code = out.flatMap { try? JSONValue.parse(String(cString: $0)) }?.errorCode ?? "none"
                na_string_free(out)
                p.lock.withLock {
                    p.answers.append((rc, code))
                    p.seconds.append(Date().timeIntervalSince(began))
                }
            }
        }
        #expect(na_client_set_log_callback(c.handle, 4, callback, Unmanaged.passUnretained(probe).toOpaque()) == 0)
        let outer = c.call(na_get_access_token, ["scopes": [.string(scope)]])
        #expect(outer.rc == NA_OK, "\(outer.doc.serialized())")
        let answers = probe.lock.withLock { probe.answers }
        #expect(answers.map(\.0) == [NA_ESTATE, NA_ESTATE])
        #expect(answers.map(\.1) == ["reentrant_call", "reentrant_call"])
        _ = na_client_set_log_callback(c.handle, 0, nil, nil)
    }

    /// Freeing a client ends the waits of calls still running on it: a call waiting for another process's refresh
    /// (here: this test holding the cache file's refresh lock) answers `cancelled`.
    @Test func freeingTheClientEndsAWaitForTheRefreshLock() throws {
        let emu = try EmulatorProcess()
        try emu.control("POST", "settings", ["access_token_lifetime": 300])
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-free-\(UUID().uuidString)")
        let path = dir.appendingPathComponent("cache.json").path
        let cache: JSONValue = ["type": "file", "path": .string(path)]
        var config: [String: JSONValue] = [
            "v": 1, "authority": .string(emu.authority), "client_id": .string(emu.clientID), "cache": cache,
            "request_timeout_ms": 30000,
        ]
        if let ca = emu.caFile { config["ca_bundle"] = .string(ca) }
        var h: OpaquePointer? = nil
        #expect(na_client_new(JSONValue.object(config).serialized(), &h, nil) == 0)
        var out: UnsafeMutablePointer<CChar>? = nil
        let signIn = JSONValue.object(["username": .string(annEmail), "password": .string(annPassword)])
        #expect(na_sign_in(h, signIn.serialized(), &out) == 0)
        na_string_free(out)
        // Another process's refresh in progress: the refresh lock is held.
        let fd = open(path + ".refresh-lock", O_RDWR | O_CREAT, 0o600)
        #expect(flock(fd, LOCK_EX) == 0)
        defer { close(fd) }
        let logs = LogCollector()
        _ = na_client_set_log_callback(
            h,
            3,
            { _, message, _, user in
                guard let user, let message else { return }
                Unmanaged<LogCollector>.fromOpaque(user).takeUnretainedValue().add(String(cString: message))
            },
            Unmanaged.passUnretained(logs).toOpaque()
        )
        let result = Mutex<(Int32, String)?>(nil)
        let handle = UInt(bitPattern: Int(bitPattern: h))
        let request = JSONValue.object(["scopes": [.string(emu.apiScopes.todo)]]).serialized()
        let caller = Thread {
            var o: UnsafeMutablePointer<CChar>? = nil
            let rc = na_get_access_token(OpaquePointer(bitPattern: handle), request, &o)
            let code = o.flatMap { try? JSONValue.parse(String(cString: $0)) }?.errorCode ?? "none"
            na_string_free(o)
            result.withLock { $0 = (rc, code) }
        }
        caller.start()
        try waitUntil("the call to wait for the lock") {
            logs.all.contains { $0.contains("waiting for another process's token refresh") }
        }
        let freed = Date()
        na_client_free(h)
        try waitUntil("the waiting call to return") { result.withLock { $0 } != nil }
        #expect(Date().timeIntervalSince(freed) < 5, "the wait ended promptly, not at its 60 s deadline")
        #expect(result.withLock { $0 }?.0 == NA_ESTATE && result.withLock { $0 }?.1 == "cancelled")
    }
}
