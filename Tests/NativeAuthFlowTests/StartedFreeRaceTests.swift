import Foundation
import NativeAuthCABI
import Synchronization
import Testing

/// A meeting point for threads inside the library's callbacks: a counter per name, and bounded waits for one to
/// reach a value (pthread condition: the waits happen on the library's threads, not on the test's task).
final class Rendezvous: @unchecked Sendable {  // `counts` is guarded by `mutex`
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var counts: [String: Int] = [:]

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(cond, nil)
    }

    // Never destroyed: a test that failed may leave a thread of the library waiting here.

    /// Adds one to `name`; answers the new value.
    @discardableResult
    func bump(_ name: String) -> Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        counts[name, default: 0] += 1
        pthread_cond_broadcast(cond)
        return counts[name] ?? 0
    }

    func count(_ name: String) -> Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return counts[name] ?? 0
    }

    /// Waits until `name` is at least `n`, at most `seconds`; whether it got there.
    @discardableResult
    func wait(_ name: String, atLeast n: Int, seconds: Double = 60) -> Bool {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        ts.tv_sec += Int(seconds)
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while counts[name, default: 0] < n {
            if pthread_cond_timedwait(cond, mutex, &ts) == ETIMEDOUT { break }
        }
        return counts[name, default: 0] >= n
    }

    var userData: UnsafeMutableRawPointer { Unmanaged.passRetained(self).toOpaque() }  // leaked on purpose (above)

    static func from(_ p: UnsafeMutableRawPointer?) -> Rendezvous? {
        p.map { Unmanaged<Rendezvous>.fromOpaque($0).takeUnretainedValue() }
    }
}

/// Two threads, each inside a callback of the same client (a done, a log callback), free it at once: neither can
/// wait for the other's call to end (it ends only once that thread's na_client_free returned). Both must return —
/// the one that began later first — and the one that returns last has seen the other's done run.
@Suite(.serialized) struct StartedFreeRaceTests {
    /// The client's handle, shared with the callbacks.
    final class Shared: @unchecked Sendable {
        var handle: OpaquePointer? = nil
    }
    nonisolated(unsafe) static var shared = Shared()
    nonisolated(unsafe) static var meet = Rendezvous()

    static let config =
        #"{"authority":"http://127.0.0.1:9/contoso.onmicrosoft.com","client_id":"c1","async_workers":4}"#

    /// Frees the client from a callback, counting the dones that had finished by the time it returned.
    static func freeFromCallback() {
        meet.bump("freeing")
        na_client_free(shared.handle)
        let finished = meet.count("finished")
        meet.bump("returned")
        if finished >= 1 { meet.bump("returned after the other's done") }
    }

    static let countingDone: NADoneFunction = { _, _, _ in meet.bump("finished") }

    /// The first two client_info calls' log callbacks each hold until both are inside, then free the client.
    static let freeingLog: NALogFunction = { _, message, _, _ in
        guard let message, String(cString: message).contains("na_client_info") else { return }
        guard meet.bump("in log") <= 2 else { return }
        meet.wait("in log", atLeast: 2)
        freeFromCallback()
    }

    @Test func twoLogCallbacksFreeingTheClientAtOnceBothReturn() async throws {
        Self.shared = Shared()
        Self.meet = Rendezvous()
        var h: OpaquePointer? = nil
        #expect(na_client_new(Self.config, &h, nil) == NA_OK)
        Self.shared.handle = h
        #expect(na_client_set_log_callback(h, 4, Self.freeingLog, nil) == NA_OK)
        for _ in 0..<2 { #expect(na_start(h, "client_info", "{}", Self.countingDone, nil, nil) == NA_OK) }
        #expect(try await eventually(60) { Self.meet.count("returned") == 2 }, "a free waits for the other")
        #expect(try await eventually(60) { Self.meet.count("finished") == 2 })
        #expect(Self.meet.count("returned after the other's done") == 1)
    }

    /// A done run by na_client_dispatch frees the client while a running call's log callback does too.
    static let freeingDone: NADoneFunction = { _, _, _ in
        meet.wait("in log", atLeast: 1)
        freeFromCallback()
        meet.bump("finished")
    }

    static let holdingLog: NALogFunction = { _, message, _, _ in
        guard let message, String(cString: message).contains("na_client_info") else { return }
        guard meet.bump("in log") == 1 else { return }
        meet.wait("freeing", atLeast: 1)
        freeFromCallback()
    }

    @Test func aDispatchedDoneAndALogCallbackFreeingAtOnceBothReturn() async throws {
        Self.shared = Shared()
        Self.meet = Rendezvous()
        var h: OpaquePointer? = nil
        #expect(na_client_new(Self.config, &h, nil) == NA_OK)
        Self.shared.handle = h
        var fd: Int32 = -1
        #expect(na_client_event_fd(h, &fd) == NA_OK)
        #expect(na_client_set_log_callback(h, 4, Self.holdingLog, nil) == NA_OK)
        // The first call stays in its log callback; the second's completion waits for dispatch.
        #expect(na_start(h, "client_info", "{}", Self.countingDone, nil, nil) == NA_OK)
        #expect(try await eventually(60) { Self.meet.count("in log") == 1 })
        #expect(na_start(h, "client_info", "{}", Self.freeingDone, nil, nil) == NA_OK)
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        #expect(try await eventually(60) { poll(&pfd, 1, 0) == 1 })
        let dispatcher = Thread { _ = na_client_dispatch(Self.shared.handle) }
        dispatcher.start()
        #expect(try await eventually(60) { Self.meet.count("returned") == 2 }, "a free waits for the other")
        #expect(try await eventually(60) { Self.meet.count("finished") == 2 })
        #expect(Self.meet.count("returned after the other's done") == 1)
    }
}
