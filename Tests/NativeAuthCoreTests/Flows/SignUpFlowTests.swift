import Testing

@testable import NativeAuthCore

@Suite struct SignUpFlowTests {
    func flow() -> SignUpFlow { SignUpFlow(username: "new@contoso.com", state: .new(password: nil, attributes: nil)) }
    func on(_ f: inout SignUpFlow, _ e: FlowEvent, _ now: Double) -> FlowEffect { f.on(e, at: now) }

    static var verified: [Step] {
        [
            step(.start, "send signUpStart"), step(answer(.continuation(ct("c1"))), "send signUpChallenge"),
            step(answer(.challenge(.code(ct("c2"), aCode))), "finish code_required"),
        ]
    }

    static var cases: [(name: String, steps: [Step], ended: Bool)] {
        [
            (
                "code, then password, then attributes, then the sign-in with the continuation token",
                verified + [
                    step(.action(.submitCode(Secret("1"))), "send signUpContinue"),
                    step(answer(.signUpContinue(.credentialRequired(ct("c3")))), "send signUpChallenge"),
                    step(answer(.challenge(.password(ct("c4")))), "finish password_required"),
                    step(.action(.submitPassword(Secret("pw"))), "send signUpContinue"),
                    step(answer(.signUpContinue(.attributesRequired(ct("c5"), []))), "finish attributes_required"),
                    step(.action(.submitAttributes(["city": "Oslo"])), "send signUpContinue"),
                    step(answer(.signUpContinue(.completed(ct("c6")))), "finish sign_up_completed"),
                    step(.action(.signIn(scopes: ["api"], claims: nil)), "send token(continuation)"),
                    step(answer(.token(.tokens(tokens()))), "store"), step(storedOK, "finish signed_in ended"),
                ], true
            ),
            (
                "completed without a continuation token: no automatic sign-in, the flow ends",
                verified + [
                    step(.action(.submitCode(Secret("1"))), "send signUpContinue"),
                    step(answer(.signUpContinue(.completed(nil))), "finish sign_up_completed ended"),
                ], true
            ),
            (
                "a wrong code and invalid attributes keep the flow where it was",
                verified + [
                    step(.action(.submitCode(Secret("1"))), "send signUpContinue"),
                    step(failure(.invalidCode), "fail invalid_code kept"),
                    step(.action(.resendCode), "send signUpChallenge"),
                    step(answer(.challenge(.code(ct("c3"), aCode))), "finish code_required"),
                    step(.action(.submitCode(Secret("2"))), "send signUpContinue"),
                    step(answer(.signUpContinue(.attributesRequired(ct("c4"), []))), "finish attributes_required"),
                    step(.action(.submitAttributes(["age": "x"])), "send signUpContinue"),
                    step(failure(.attributesInvalid), "fail attributes_invalid kept"),
                    step(.action(.submitPassword(Secret("pw"))), "fail flow_invalid kept"),
                ], false
            ),
            (
                "the sign-in after sign-up hands off to MFA",
                verified + [
                    step(.action(.submitCode(Secret("1"))), "send signUpContinue"),
                    step(answer(.signUpContinue(.completed(ct("c3")))), "finish sign_up_completed"),
                    step(.action(.signIn(scopes: nil, claims: nil)), "send token(continuation)"),
                    step(answer(.token(.mfaRequired(ct("c4")))), "send introspect"),
                    step(answer(.methods(ct("c5"), methods)), "handOff sign_in mfa_required"),
                ], true
            ),
            (
                "an existing user ends the flow at its start",
                [step(.start, "send signUpStart"), step(failure(.userAlreadyExists), "fail user_already_exists")], true
            ),
            (
                "a password challenge before the email was verified is refused",
                [
                    step(.start, "send signUpStart"), step(answer(.continuation(ct("c1"))), "send signUpChallenge"),
                    step(answer(.challenge(.password(ct("c2")))), "fail server"),
                ], true
            ),
        ]
    }

    @Test(arguments: cases.indices)
    func script(_ i: Int) {
        let c = Self.cases[i]
        var f = flow()
        play(&f, c.steps, on)
        if case .ended = f.state { #expect(c.ended, "\(c.name)") } else { #expect(!c.ended, "\(c.name)") }
    }
}
