import Testing

@testable import NativeAuthEmulator

/// The native-auth transition table has exactly one row for every step (the lookup has no trap to fall into; a
/// missing row would refuse that step everywhere).
@Suite struct TransitionTableTests {
    @Test("one row per step")
    func complete() {
        #expect(NativeStep.tableProblems == [])
        #expect(NativeStep.table.count == NativeStep.allCases.count)
        for step in NativeStep.allCases { #expect(step.transition.step == step) }
    }
}
