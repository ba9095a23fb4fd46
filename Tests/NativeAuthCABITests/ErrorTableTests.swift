import CNativeAuthHeader
import Foundation
import NativeAuthCABI
import NativeAuthCore
import NativeAuthTestSupport
import Testing

/// docs/errors.tsv is the one list of error codes. The header's and docs/errors.md's lists, the Swift table
/// (ErrorCodes.swift) and the command's exit codes are generated from it (.ci/error-table, checked here and by make
/// lint); the Python classes and the Go sentinels are checked against it by their own tests. Here: what the compiled
/// library makes of the table.
@Suite struct ErrorTableTests {
    static let root = ErrorTableFile.root

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static func matches(_ pattern: String, in text: String) throws -> [[String]] {
        let re = try NSRegularExpression(pattern: pattern)
        let ns = text as NSString
        return re.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { m in
            (0..<m.numberOfRanges).map {
                m.range(at: $0).location == NSNotFound ? "" : ns.substring(with: m.range(at: $0))
            }
        }
    }

    /// The generated files and blocks are what the table gives (as make lint checks), so the library built from
    /// them is the table's.
    @Test func theGeneratedFilesAreWhatTheTableGives() throws {
        let (status, text) = try Self.check(".ci/error-table")
        #expect(status == 0, "generated files differ from docs/errors.tsv (make docs):\n\(text)")
    }

    /// Runs one of the repository's `.ci` scripts with `--check`: its exit status and output.
    static func check(_ script: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent(script).path, "--check"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// Each code of the table, in its order, is a code of the library with the table's status (through the
    /// category → status mapping of the C ABI), and the library has no other.
    @Test func theLibrarysCodesAreTheTablesWithTheirStatus() throws {
        let file = try ErrorTableFile.load()
        let library = NativeAuthError.Code.table.map { ($0.code.rawValue, NAStatus($0.category).name.description) }
        #expect(library.map(\.0) == file.rows.map(\.code))
        #expect(library.map(\.1) == file.rows.map(\.status))
        for row in file.rows {
            let code = NativeAuthError.Code(rawValue: row.code)
            #expect(NAStatus(code.category).name.description == row.status, "\(row.code)")
            #expect(NAStatus(NativeAuthError(code, "m")).name.description == row.status, "\(row.code)")
        }
    }

    @Test func theTableHasEachCodeOnceAndEveryStatusIsReachable() {
        let codes = NativeAuthError.Code.table.map(\.code)
        #expect(Set(codes).count == codes.count)
        let statuses = Set(NativeAuthError.Code.table.map { NAStatus($0.category) })
        #expect(statuses == Set(NAStatus.allCases.filter { $0 != .ok }))
    }

    @Test func theHeaderValuesAreTheSwiftValues() {
        #expect(NA_OK == NAStatus.ok.rawValue)
        #expect(NA_EINVAL == NAStatus.invalidArgument.rawValue)
        #expect(NA_EAUTH == NAStatus.auth.rawValue)
        #expect(NA_ENOTFOUND == NAStatus.notFound.rawValue)
        #expect(NA_EINTERACTION == NAStatus.interaction.rawValue)
        #expect(NA_ENETWORK == NAStatus.network.rawValue)
        #expect(NA_ESERVER == NAStatus.server.rawValue)
        #expect(NA_ESTATE == NAStatus.state.rawValue)
        #expect(NA_ENOMEM == NAStatus.noMemory.rawValue)
        #expect(NA_EINTERNAL == NAStatus.internal.rawValue)
        #expect(NA_ESTORAGE == NAStatus.storage.rawValue)
        #expect(NA__LAST == (NAStatus.allCases.map(\.rawValue).min() ?? 0) - 1)
        #expect(NA_LOG_VERBOSE == LogLevel.verbose.rawValue && NA_LOG_OFF == LogLevel.off.rawValue)
    }

    /// Every "Errors:" list of a call names only codes of the table and is complete (no "…").
    @Test func theHeaderPerCallListsAreCompleteAndKnown() throws {
        let header = try Self.read("include/nativeauth.h")
        let known = Set(try ErrorTableFile.load().rows.map(\.code))
        let lists = try Self.matches(#"Errors[^:]*:([^.]*(?:\.[a-z_][^.]*)*)"#, in: header)
        #expect(!lists.isEmpty)
        for l in lists {
            #expect(!l[1].contains("…"), "an Errors: list ends in an ellipsis: \(l[1].prefix(80))")
            for word in try Self.matches(
                #"\b[a-z]+(?:_[a-z]+)+\b|\b(?:network|timeout|tls|server|internal)\b"#,
                in: l[1]
            ) {
                let w = word[0]
                if !known.contains(w) && !["force_refresh", "redirect_reason", "password_too_weak"].contains(w)
                    && !w.hasPrefix("password_") && !w.hasPrefix("na_")
                {
                    Issue.record("the header's Errors: list names \(w), which is not an error code")
                }
            }
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
