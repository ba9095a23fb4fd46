import Testing

@testable import NativeAuthCore

@Suite struct SignInFlowTests {
    func flow(password: String? = nil) -> SignInFlow {
        SignInFlow(
            username: "ann@contoso.com",
            scopes: ["api"],
            claims: nil,
            state: .new(password: password.map(Secret.init))
        )
    }

    func on(_ f: inout SignInFlow, _ e: FlowEvent, _ now: Double) -> FlowEffect { f.on(e, at: now) }

    static var cases: [(name: String, password: String?, steps: [Step], ended: Bool)] {
        [
            (
                "a password up front signs in in one call", "pw",
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.password(ct("c2")))), "send token(password)"),
                    step(answer(.token(.tokens(tokens()))), "store"), step(storedOK, "finish signed_in ended"),
                ], true
            ),
            (
                "without a password the flow waits for it", nil,
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.password(ct("c2")))), "finish password_required"),
                    step(.action(.submitPassword(Secret("pw"))), "send token(password)"),
                    step(answer(.token(.tokens(tokens()))), "store"), step(storedOK, "finish signed_in ended"),
                ], true
            ),
            (
                "a wrong password up front leaves the flow waiting for another", "bad",
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.password(ct("c2")))), "send token(password)"),
                    step(failure(.invalidCredentials), "fail invalid_credentials kept"),
                    step(.action(.submitPassword(Secret("pw"))), "send token(password)"),
                ], false
            ),
            (
                "a code account: resend, a wrong code, then the right one", nil,
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.code(ct("c2"), aCode))), "finish code_required"),
                    step(.action(.resendCode), "send challenge"),
                    step(answer(.challenge(.code(ct("c3"), aCode))), "finish code_required"),
                    step(.action(.submitCode(Secret("1"))), "send token(oob)"),
                    step(failure(.invalidCode), "fail invalid_code kept"),
                    step(.action(.submitCode(Secret("2"))), "send token(oob)"),
                    step(answer(.token(.tokens(tokens()))), "store"), step(storedOK, "finish signed_in ended"),
                ], true
            ),
            (
                "MFA: the hand-off to the strong-auth flow", nil,
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.password(ct("c2")))), "finish password_required"),
                    step(.action(.submitPassword(Secret("pw"))), "send token(password)"),
                    step(answer(.token(.mfaRequired(ct("c3")))), "send introspect"),
                    step(answer(.methods(ct("c4"), methods)), "handOff sign_in mfa_required"),
                ], true
            ),
            (
                "registration: the hand-off to the strong-auth flow", "pw",
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.password(ct("c2")))), "send token(password)"),
                    step(answer(.token(.registrationRequired(ct("c3")))), "send registerIntrospect"),
                    step(answer(.methods(ct("c4"), methods)), "handOff sign_in registration_required"),
                ], true
            ),
            (
                "an action the state cannot take leaves it as it was", nil,
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.password(ct("c2")))), "finish password_required"),
                    step(.action(.submitCode(Secret("1"))), "fail flow_invalid kept"),
                    step(.action(.resendCode), "fail flow_invalid kept"),
                    step(.action(.submitPassword(Secret("pw"))), "send token(password)"),
                ], false
            ),
            (
                "no verdict from the server (network) keeps the flow", nil,
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.password(ct("c2")))), "finish password_required"),
                    step(.action(.submitPassword(Secret("pw"))), "send token(password)"),
                    step(failure(.network), "fail network kept"),
                ], false
            ),
            (
                "browser_required ends the flow", nil,
                [
                    step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                    step(answer(.challenge(.password(ct("c2")))), "finish password_required"),
                    step(.action(.submitPassword(Secret("pw"))), "send token(password)"),
                    step(failure(.browserRequired), "fail browser_required"),
                ], true
            ),
            (
                "a failed start ends the flow", "pw",
                [step(.start, "send initiate"), step(failure(.userNotFound), "fail user_not_found")], true
            ),
        ]
    }

    @Test(arguments: cases.indices)
    func script(_ i: Int) {
        let c = Self.cases[i]
        var f = flow(password: c.password)
        play(&f, c.steps, on)
        if case .ended = f.state {
            #expect(c.ended, "\(c.name): ended")
        } else {
            #expect(!c.ended, "\(c.name): still going")
        }
    }

    /// The MFA hand-off carries the sign-in's scopes and the methods the server named.
    @Test func theHandOffCarriesTheSignIn() {
        var f = flow(password: "pw")
        let effects = play(
            &f,
            [
                step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                step(answer(.challenge(.password(ct("c2")))), "send token(password)"),
                step(answer(.token(.mfaRequired(ct("c3")))), "send introspect"),
                step(answer(.methods(ct("c4"), methods)), "handOff sign_in mfa_required"),
            ],
            on
        )
        guard case .handOff(.strongAuth(let next), .mfaRequired(let named))? = effects.last else {
            Issue.record("no hand-off")
            return
        }
        #expect(next.scopes == ["api"] && named == methods)
        guard case .waiting(.mfaSelect(let c, let m)) = next.state else {
            Issue.record("the strong-auth flow does not wait for a method")
            return
        }
        #expect(c == ct("c4") && m == methods)
    }
}
