import Foundation
import NativeAuthCABI
import Testing

/// Replacing the log callback while a log callback frees the client: the replacement waits for that callback, which
/// waits for the client's other call — whose next log line must not wait for the replacement.
@Suite(.serialized) struct LogCallbackReplaceTests {
    nonisolated(unsafe) static var handle: OpaquePointer? = nil
    nonisolated(unsafe) static var meet = Rendezvous()
    /// The replacing thread's directory in /proc (`/proc/<pid>/task/<tid>`).
    nonisolated(unsafe) static var replacer = ""

    static let log: NALogFunction = { _, message, _, _ in
        guard let message else { return }
        if String(cString: message).contains("na_client_info") {
            guard meet.bump("freeing") == 1 else { return }
            na_client_free(handle)
            meet.bump("returned")
        } else if meet.bump("other lines") == 1 {
            // The sign-in's first line: held until the replacement waits.
            meet.wait("release", atLeast: 1)
        }
    }

    /// Whether the thread whose /proc directory is `task` sleeps in a futex wait (x86-64's and arm64's numbers).
    static func waitsOnAFutex(_ task: String) -> Bool {
        guard !task.isEmpty, let stat = try? String(contentsOfFile: task + "/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")"),
            stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("S"),
            let call = try? String(contentsOfFile: task + "/syscall", encoding: .utf8)
        else { return false }
        let number = call.split(separator: " ").first.map(String.init) ?? ""
        return number == "202" || number == "98"
    }

    @Test func aLogLineNeverWaitsForTheCallbacksReplacement() async throws {
        Self.meet = Rendezvous()
        var h: OpaquePointer? = nil
        let config = #"{"authority":"http://127.0.0.1:9/contoso.onmicrosoft.com","client_id":"c1","async_workers":2}"#
        #expect(na_client_new(config, &h, nil) == NA_OK)
        Self.handle = h
        #expect(na_client_set_log_callback(h, 4, Self.log, nil) == NA_OK)
        let done: NADoneFunction = { _, _, _ in LogCallbackReplaceTests.meet.bump("done") }
        // A sign-in (its server refuses connections) held in its first log line; then a call whose log callback
        // frees the client, waiting for the sign-in.
        #expect(na_start(h, "sign_in", #"{"username":"a@b.c","password":"x"}"#, done, nil, nil) == NA_OK)
        #expect(try await eventually(60) { Self.meet.count("other lines") == 1 })
        #expect(na_start(h, "client_info", "{}", done, nil, nil) == NA_OK)
        #expect(try await eventually(60) { Self.meet.count("freeing") == 1 })
        let replacer = Thread {
            let task = realpath("/proc/thread-self", nil)
            Self.replacer = task.map { String(cString: $0) } ?? ""
            free(task)
            Self.meet.bump("replacing")
            _ = na_client_set_log_callback(Self.handle, 4, Self.log, nil)
            Self.meet.bump("returned")
        }
        replacer.start()
        #expect(try await eventually(60) { Self.meet.count("replacing") == 1 && Self.waitsOnAFutex(Self.replacer) })
        Self.meet.bump("release")  // the sign-in logs its next lines
        #expect(try await eventually(60) { Self.meet.count("returned") == 2 }, "the free and the replacement return")
        #expect(try await eventually(60) { Self.meet.count("done") == 2 })
    }
}
