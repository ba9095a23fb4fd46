import NativeAuthTestSupport
import Testing

@testable import nativeauth_cli

/// The command's exit code of each library error code is docs/errors.tsv's (whatever status it came with), and the
/// command line's own codes keep theirs.
@Suite struct ExitCodeTests {
    @Test(arguments: [Int32(0), -1, -2, -3, -4, -5, -6, -7, -8, -9, -10])
    func eachLibraryCodeHasTheTablesExitCode(status: Int32) throws {
        let table = try ErrorTableFile.load()
        #expect(table.rows.count > 40)
        for row in table.rows {
            #expect(ExitCode.of(code: row.code, status: status).rawValue == row.exit, "\(row.code)")
        }
    }

    @Test func theCommandLinesOwnCodesAndUnknownCodes() {
        #expect(ExitCode.of(code: "usage", status: 0) == .usage)
        #expect(ExitCode.of(code: "http_error", status: 0) == .server)
        #expect(ExitCode.of(code: "a_newer_code", status: -4) == .signIn)
        #expect(ExitCode.of(code: "a_newer_code", status: -7) == .error)
    }
}
