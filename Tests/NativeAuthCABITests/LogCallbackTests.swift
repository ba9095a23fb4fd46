import Foundation
import Synchronization
import Testing

@testable import NativeAuthCABI

/// What a test's log callback sees and does; reached through user_data.
private final class Probe: @unchecked Sendable {
    let lock = NSLock()
    var events: [String] = []
    var calls = 0
    var blockNext = false
    var entered = false
    var released = false
    var handle: OpaquePointer? = nil
    var reentrantStatus: [Int32] = []

    func record(_ e: String) { lock.withLock { events.append(e) } }
}

private func probe(_ user: UnsafeMutableRawPointer?) -> Probe? {
    user.map { Unmanaged<Probe>.fromOpaque($0).takeUnretainedValue() }
}

/// Findings 5 and 11: a replaced log callback is never called after na_client_set_log_callback returns (the call
/// waits for invocations already running), and a callback that calls into the library neither deadlocks nor can
/// replace itself.
@Suite struct LogCallbackTests {
    private func client() throws -> OpaquePointer? {
        var h: OpaquePointer? = nil
        guard na_client_new(#"{"tenant_subdomain":"contoso","client_id":"c1"}"#, &h, nil) == 0 else {
            throw TestFailure("client")
        }
        return h
    }

    private func info(_ h: OpaquePointer?) -> Int32 {
        var out: UnsafeMutablePointer<CChar>? = nil
        defer { na_string_free(out) }
        return na_client_info(h, "{}", &out)
    }

    @Test func replacingWaitsForRunningInvocations() throws {
        let h = try client()
        defer { na_client_free(h) }
        let old = Probe()
        let new = Probe()
        let blocking: NALogFunction = { _, _, _, user in
            guard let p = probe(user) else { return }
            p.lock.withLock { p.calls += 1 }
            if p.lock.withLock({ p.blockNext }) {
                p.lock.withLock {
                    p.blockNext = false
                    p.entered = true
                }
                while !p.lock.withLock({ p.released }) { usleep(500) }
                p.record("old callback returned")
            }
        }
        let counting: NALogFunction = { _, _, _, user in
            guard let p = probe(user) else { return }
            p.lock.withLock { p.calls += 1 }
        }
        #expect(na_client_set_log_callback(h, 4, blocking, Unmanaged.passUnretained(old).toOpaque()) == 0)
        old.lock.withLock { old.blockNext = true }
        let handle = UInt(bitPattern: Int(bitPattern: h))
        let caller = Thread { _ = self.info(OpaquePointer(bitPattern: handle)) }
        caller.start()
        while !old.lock.withLock({ old.entered }) { usleep(500) }  // a thread is inside the old callback
        let replaced = Mutex(false)
        let replacer = Thread {
            _ = na_client_set_log_callback(
                OpaquePointer(bitPattern: handle),
                4,
                counting,
                Unmanaged.passUnretained(new).toOpaque()
            )
            old.record("replaced")
            replaced.withLock { $0 = true }
        }
        replacer.start()
        usleep(50_000)  // a window in which a replace that did not wait would return
        old.lock.withLock { old.released = true }
        while !replaced.withLock({ $0 }) { usleep(500) }
        #expect(old.lock.withLock { old.events } == ["old callback returned", "replaced"])
        let before = old.lock.withLock { old.calls }
        for _ in 0..<10 { _ = info(h) }
        #expect(old.lock.withLock { old.calls } == before)  // never called again: its user_data may be freed
        #expect(new.lock.withLock { new.calls } >= 10)
    }

    @Test func aCallbackMayCallIntoTheLibraryButNotReplaceItself() throws {
        let h = try client()
        defer { na_client_free(h) }
        let p = Probe()
        p.handle = h
        let reentrant: NALogFunction = { _, _, _, user in
            guard let p = probe(user) else { return }
            let depth = p.lock.withLock { () -> Int in
                p.calls += 1
                return p.calls
            }
            guard depth == 1 else { return }  // the first line only: call back into the same client
            var out: UnsafeMutablePointer<CChar>? = nil
            let rc = na_client_info(p.handle, "{}", &out)
            na_string_free(out)
            let replace = na_client_set_log_callback(p.handle, 0, nil, nil)
            p.lock.withLock { p.reentrantStatus = [rc, replace] }
        }
        #expect(na_client_set_log_callback(h, 4, reentrant, Unmanaged.passUnretained(p).toOpaque()) == 0)
        #expect(info(h) == 0)
        #expect(p.lock.withLock { p.reentrantStatus } == [0, NAStatus.state.rawValue])
        #expect(p.lock.withLock { p.calls } >= 2)  // the nested call's own line reached the callback too
        #expect(na_client_set_log_callback(h, 0, nil, nil) == 0)  // from outside, it works
    }
}
