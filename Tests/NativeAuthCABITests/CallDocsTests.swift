import Foundation
import Testing

/// docs/calls/*.md carry each call's part of include/nativeauth.h in a block `make docs` generates (.ci/call-docs):
/// the committed pages must be what the header gives, every operation of the header must have a page, and
/// docs/c-abi.md's list of calls must name every declaration.
@Suite struct CallDocsTests {
    @Test func theCallPagesAreWhatTheHeaderGives() throws {
        let root = ErrorTableTests.root
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent(".ci/call-docs").path, "--check"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "docs/calls differ from include/nativeauth.h (make docs):\n\(text)")
    }
}
