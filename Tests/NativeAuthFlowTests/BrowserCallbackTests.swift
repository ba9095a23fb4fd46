import Foundation
import NativeAuthCABI
import NativeAuthHTTP
import NativeAuthJSON
import Synchronization
import Testing

/// What a test's browser callback sees and does; reached through user_data.
private final class CallbackProbe: @unchecked Sendable {
    let lock = NSLock()
    var urls: [String] = []
    var block = false
    var entered = false
    var released = false
    var handle: OpaquePointer? = nil
    var reentrant: [Int32] = []
    var events: [String] = []

    func record(_ e: String) { lock.withLock { events.append(e) } }
    func get<T>(_ body: (CallbackProbe) -> T) -> T { lock.withLock { body(self) } }
}

private func probe(_ user: UnsafeMutableRawPointer?) -> CallbackProbe? {
    user.map { Unmanaged<CallbackProbe>.fromOpaque($0).takeUnretainedValue() }
}

/// Records the URL and answers "not opened".
private let recordingCallback: NABrowserFunction = { url, user in
    guard let p = probe(user), let url else { return 1 }
    p.lock.withLock { p.urls.append(String(cString: url)) }
    return 1
}

/// Runs `call` on another thread; its answer, once there.
final class Background: @unchecked Sendable {
    private let result = Mutex<(rc: Int32, doc: JSONValue)?>(nil)

    init(_ call: @escaping @Sendable () -> (rc: Int32, doc: JSONValue)) {
        let t = Thread { [self] in
            let r = call()
            self.result.withLock { $0 = r }
        }
        t.start()
    }

    /// The answer, waiting up to `seconds` for it.
    func answer(seconds: Double = 30) throws -> (rc: Int32, doc: JSONValue) {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let r = result.withLock({ $0 }) { return r }
            usleep(2000)
        }
        throw TestFailure("no answer within \(seconds) s")
    }

    var isDone: Bool { result.withLock { $0 } != nil }
}

/// The browser callback has the log callback's guarantee (security issue #18): a sign-in uses the callback current
/// when it opens the browser, replacing waits for invocations already running, and a callback cannot replace itself.
@Suite struct BrowserCallbackGuaranteeTests {
    @Test func aCallbackReplacedWhileTheSignInIsInDiscoveryIsNeverCalled() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        try emu.control("POST", "faults", ["path": "openid-configuration", "delay_ms": 1000])
        let old = CallbackProbe()
        #expect(
            na_client_set_browser_callback(c.handle, recordingCallback, Unmanaged.passUnretained(old).toOpaque()) == 0
        )
        let signIn = Background { c.call(na_sign_in_interactive, ["timeout_ms": 20_000]) }
        // The emulator took the fault: the discovery request is being held, the sign-in is in discovery.
        let deadline = Date().addingTimeInterval(10)
        while try emu.control("GET", "faults")["faults"]?.arrayValue?.isEmpty == false && Date() < deadline {
            usleep(2000)
        }
        #expect(!signIn.isDone)
        let browser = FakeBrowser()
        browser.install(on: c)
        let r = try signIn.answer()
        #expect(r.doc["status"] == "signed_in", "\(r.doc)")
        #expect(old.get { $0.urls }.isEmpty, "the replaced callback (its user_data may be freed) was called")
        #expect(browser.opened.withLock { $0.count } == 1)
    }

    @Test func replacingWaitsForAnInvocationAlreadyRunning() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let old = CallbackProbe()
        let new = CallbackProbe()
        let blocking: NABrowserFunction = { _, user in
            guard let p = probe(user) else { return 1 }
            p.lock.withLock { p.entered = true }
            while !p.lock.withLock({ p.released }) { usleep(500) }
            p.record("old callback returned")
            return 1
        }
        #expect(na_client_set_browser_callback(c.handle, blocking, Unmanaged.passUnretained(old).toOpaque()) == 0)
        let signIn = Background { c.call(na_sign_in_interactive, [:]) }
        let deadline = Date().addingTimeInterval(20)
        while !old.get({ $0.entered }) && Date() < deadline { usleep(500) }  // a thread is inside the old callback
        let handle = UInt(bitPattern: Int(bitPattern: c.handle))
        let newContext = UInt(bitPattern: Unmanaged.passUnretained(new).toOpaque())
        let replaced = Mutex(false)
        let replacer = Thread {
            _ = na_client_set_browser_callback(
                OpaquePointer(bitPattern: handle),
                recordingCallback,
                UnsafeMutableRawPointer(bitPattern: newContext)
            )
            old.record("replaced")
            replaced.withLock { $0 = true }
        }
        replacer.start()
        usleep(50_000)  // a window in which a replace that did not wait would return
        old.lock.withLock { old.released = true }
        while !replaced.withLock({ $0 }) && Date() < deadline { usleep(500) }
        #expect(old.get { $0.events } == ["old callback returned", "replaced"])
        #expect(try signIn.answer().doc.errorCode == "browser_unavailable")
        // The next sign-in uses the new callback only.
        #expect(c.call(na_sign_in_interactive, [:]).doc.errorCode == "browser_unavailable")
        #expect(new.get { $0.urls.count } == 1)
    }

    @Test func aCallbackCannotReplaceItselfButMayCallTheLibrary() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let p = CallbackProbe()
        p.handle = c.handle
        let reentrant: NABrowserFunction = { _, user in
            guard let p = probe(user) else { return 1 }
            var out: UnsafeMutablePointer<CChar>? = nil
            let info = na_client_info(p.handle, "{}", &out)
            na_string_free(out)
            let replace = na_client_set_browser_callback(p.handle, nil, nil)
            p.lock.withLock { p.reentrant = [info, replace] }
            return 1
        }
        #expect(na_client_set_browser_callback(c.handle, reentrant, Unmanaged.passUnretained(p).toOpaque()) == 0)
        let r = c.call(na_sign_in_interactive, [:])
        #expect(r.doc.errorCode == "browser_unavailable", "\(r.doc)")
        #expect(p.get { $0.reentrant } == [NA_OK, NA_ESTATE])
        #expect(na_client_set_browser_callback(c.handle, nil, nil) == NA_OK)  // from outside, it works
    }
}
