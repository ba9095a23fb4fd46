import Foundation
import NativeAuthJSON
import Synchronization
import Testing

@testable import NativeAuthCABI

/// na_start's table of calls (`StartableCall.exports`) is the header's operations — every
/// `int na_<name>(na_client *client, const char *request_json, char **out_json)` — and its na_start comment lists
/// the same names: a new operation cannot be left out of na_start, nor an old name linger in it.
@Suite struct StartableCallTests {
    /// The names of the header's operations, without `na_`.
    static func headerOperations() throws -> Set<String> {
        let header = try ErrorTableTests.read("include/nativeauth.h")
        let pattern = #"(?m)^int na_(\w+)\(na_client \*client, const char \*request_json, char \*\*out_json\);"#
        return Set(try ErrorTableTests.matches(pattern, in: header).map { $0[1] })
    }

    /// The quoted names of na_start's comment ("call  the operation's name without "na_": "client_info", …").
    static func commentList() throws -> Set<String> {
        let header = try ErrorTableTests.read("include/nativeauth.h")
        guard let start = header.range(of: #"the operation's name without "na_":"#),
            let end = header.range(of: "request_json", range: start.upperBound..<header.endIndex)
        else { throw TestFailure("na_start's comment no longer lists the calls") }
        return Set(
            try ErrorTableTests.matches(#""([a-z_]+)""#, in: String(header[start.upperBound..<end.lowerBound]))
                .map { $0[1] }
        )
    }

    @Test func theTableIsTheHeadersOperations() throws {
        let operations = try Self.headerOperations()
        #expect(operations.count >= 12)
        #expect(Set(StartableCall.exports.keys) == operations)
        #expect(try Self.commentList() == operations)
    }

    /// Through na_start itself: each operation is started (its done gets the blocking call's answer to a request that
    /// is not JSON), and names that are not operations are refused with NA_EINVAL, done never called.
    @Test func naStartTakesTheOperationsAndNothingElse() throws {
        var handle: OpaquePointer? = nil
        guard na_client_new(#"{"v":1,"tenant_subdomain":"contoso","client_id":"abc"}"#, &handle, nil) == 0 else {
            throw TestFailure("na_client_new")
        }
        defer { na_client_free(handle) }  // after it, no done of the client runs again
        let answers = Answers()
        let user = Unmanaged.passUnretained(answers).toOpaque()
        let operations = try Self.headerOperations()
        var started = 0
        for name in operations.sorted() {
            let rc = na_start(handle, name, "not json", Answers.done, user, nil)
            #expect(rc == NAStatus.ok.rawValue, "\(name)")
            started += rc == NAStatus.ok.rawValue ? 1 : 0
        }
        for name in ["start", "client_new", "client_free", "parse_www_authenticate", "na_sign_in", "SIGN_IN", ""] {
            #expect(
                na_start(handle, name, "{}", Answers.done, user, nil) == NAStatus.invalidArgument.rawValue,
                "\(name)"
            )
        }
        let deadline = Date().addingTimeInterval(60)  // a bound, not a wait: the answers come as soon as they run
        while answers.codes.withLock({ $0.count }) < started && Date() < deadline { usleep(1_000) }
        let codes = answers.codes.withLock { $0 }
        #expect(codes.count == operations.count)
        #expect(codes.allSatisfy { $0 == "invalid_argument" }, "\(codes)")
    }
}

/// The error codes started calls answered with.
private final class Answers: Sendable {
    let codes = Mutex<[String]>([])

    static let done: NADoneFunction = { _, text, user in
        guard let user else { return }
        let me = Unmanaged<Answers>.fromOpaque(user).takeUnretainedValue()
        let doc = text.flatMap { try? JSONValue.parse(String(cString: $0)) }
        me.codes.withLock { $0.append(doc?["error"]?["code"]?.stringValue ?? "?") }
    }
}
