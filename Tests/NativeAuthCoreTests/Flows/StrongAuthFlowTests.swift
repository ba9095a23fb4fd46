import Testing

@testable import NativeAuthCore

@Suite struct StrongAuthFlowTests {
    func flow(_ waiting: StrongAuthFlow.Waiting) -> StrongAuthFlow {
        StrongAuthFlow(state: .waiting(waiting), scopes: ["api"], claims: nil)
    }
    func on(_ f: inout StrongAuthFlow, _ e: FlowEvent, _ now: Double) -> FlowEffect { f.on(e, at: now) }

    static var mfa: StrongAuthFlow.Waiting {
        StrongAuthFlow.Waiting.mfaSelect(ct("c1"), methods: methods)
    }
    static var registration: StrongAuthFlow.Waiting {
        StrongAuthFlow.Waiting.registrationSelect(ct("c1"), methods: methods)
    }

    static var cases: [(name: String, start: StrongAuthFlow.Waiting, steps: [Step], ended: Bool)] {
        [
            (
                "MFA: a method, its code, signed in", mfa,
                [
                    step(.action(.requestChallenge(methodID: nil)), "send challenge"),
                    step(answer(.challenge(.code(ct("c2"), aCode))), "finish code_required"),
                    step(.action(.submitCode(Secret("1"))), "send token(mfa_oob)"),
                    step(answer(.token(.tokens(tokens()))), "store"), step(storedOK, "finish signed_in ended"),
                ], true
            ),
            (
                "MFA: an unknown method is refused, a wrong code kept, a resend goes to the same method", mfa,
                [
                    step(.action(.requestChallenge(methodID: "nope")), "fail invalid_argument kept"),
                    step(.action(.submitCode(Secret("1"))), "fail flow_invalid kept"),
                    step(.action(.requestChallenge(methodID: "m2")), "send challenge"),
                    step(answer(.challenge(.code(ct("c2"), aCode))), "finish code_required"),
                    step(.action(.submitCode(Secret("1"))), "send token(mfa_oob)"),
                    step(failure(.invalidCode), "fail invalid_code kept"),
                    step(.action(.resendCode), "send challenge"),
                    step(answer(.challenge(.code(ct("c3"), aCode))), "finish code_required"),
                ], false
            ),
            (
                "MFA: no method id and no default method on the server: the methods again, then one is chosen", mfa,
                [
                    step(.action(.requestChallenge(methodID: nil)), "send challenge"),
                    step(answer(.challenge(.introspectRequired)), "send introspect"),
                    step(answer(.methods(ct("c2"), methods)), "finish mfa_required"),
                    step(.action(.requestChallenge(methodID: "m2")), "send challenge"),
                    step(answer(.challenge(.code(ct("c3"), aCode))), "finish code_required"),
                ], false
            ),
            (
                "MFA: an introspection after introspect_required that fails keeps the flow where it was", mfa,
                [
                    step(.action(.requestChallenge(methodID: nil)), "send challenge"),
                    step(answer(.challenge(.introspectRequired)), "send introspect"),
                    step(failure(.network), "fail network kept"),
                    step(.action(.requestChallenge(methodID: "m1")), "send challenge"),
                ], false
            ),
            (
                "registration: a contact that needs its code", registration,
                [
                    step(.action(.registerMethod(contact: "", methodID: nil)), "fail invalid_argument kept"),
                    step(.action(.registerMethod(contact: "me@example.com", methodID: nil)), "send registerChallenge"),
                    step(answer(.registerChallenge(.code(ct("c2"), aCode))), "finish code_required"),
                    step(.action(.submitCode(Secret("1"))), "send registerContinue"),
                    step(answer(.continuation(ct("c3"))), "send token(continuation)"),
                    step(answer(.token(.tokens(tokens()))), "store"), step(storedOK, "finish signed_in ended"),
                ], true
            ),
            (
                "registration: a preverified contact, then a token request that fails once is retried alone",
                registration,
                [
                    step(
                        .action(.registerMethod(contact: "ann@contoso.com", methodID: "m1")),
                        "send registerChallenge"
                    ),
                    step(answer(.registerChallenge(.preverified(ct("c2")))), "send registerContinue"),
                    step(answer(.continuation(ct("c3"))), "send token(continuation)"),
                    step(failure(.network), "fail network kept"),
                    step(.action(.signIn(scopes: nil, claims: nil)), "send token(continuation)"),
                    step(answer(.token(.tokens(tokens()))), "store"), step(storedOK, "finish signed_in ended"),
                ], true
            ),
            (
                "a blocked method ends nothing; an expired flow ends it", mfa,
                [
                    step(.action(.requestChallenge(methodID: "m1")), "send challenge"),
                    step(failure(.authMethodBlocked), "fail auth_method_blocked kept"),
                    step(.action(.requestChallenge(methodID: "m2")), "send challenge"),
                    step(failure(.flowExpired), "fail flow_expired"),
                ], true
            ),
        ]
    }

    @Test(arguments: cases.indices)
    func script(_ i: Int) {
        let c = Self.cases[i]
        var f = flow(c.start)
        play(&f, c.steps, on)
        if case .ended = f.state { #expect(c.ended, "\(c.name)") } else { #expect(!c.ended, "\(c.name)") }
    }

    /// After `register/v1.0/continue` a failed token request leaves the flow `registered`, never back where it was:
    /// the server has consumed that continuation token.
    @Test func aRegistrationIsNotRepeated() {
        var f = flow(Self.registration)
        play(
            &f,
            [
                step(.action(.registerMethod(contact: "me@example.com", methodID: nil)), "send registerChallenge"),
                step(answer(.registerChallenge(.code(ct("c2"), aCode))), "finish code_required"),
                step(.action(.submitCode(Secret("1"))), "send registerContinue"),
                step(answer(.continuation(ct("c3"))), "send token(continuation)"),
                step(failure(.server), "fail server kept"),
            ],
            on
        )
        guard case .waiting(.registered(let c)) = f.state else {
            Issue.record("not registered: \(f.state)")
            return
        }
        #expect(c == ct("c3"))
    }
}
