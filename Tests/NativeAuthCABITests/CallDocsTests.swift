import Foundation
import Testing

/// docs/calls/*.md carry each call's part of include/nativeauth.h in a block `make docs` generates (.ci/call-docs):
/// the committed pages must be what the header gives, every operation of the header must have a page, and
/// docs/c-abi.md's list of calls must name every declaration.
@Suite struct CallDocsTests {
    @Test func theCallPagesAreWhatTheHeaderGives() throws {
        let (status, text) = try ErrorTableTests.check(".ci/call-docs")
        #expect(status == 0, "docs/calls differ from include/nativeauth.h (make docs):\n\(text)")
    }
}
