import Testing

@testable import NativeAuthCore

/// The hand-off of a sign-in, and of a sign-up's or a password reset's sign-in, to MFA or strong-auth registration
/// (`TokenRedemption.advanced(by:)`, the one place it is written): each flow ends with a `StrongAuthFlow` waiting for
/// a method, carrying the sign-in's scopes and claims, and answers `mfa_required` or `registration_required`.
@Suite struct HandOffTests {
    static let scopes = ["api://x/Read"]
    static let claims = ClaimsRequest(json: #"{"access_token":{"acrs":{"essential":true,"value":"c1"}}}"#)

    /// A flow brought to its token request, then given the token step's answer and the introspection's.
    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let play: @Sendable (_ tokenAnswer: FlowEvent, _ methodsAnswer: FlowEvent) -> [FlowEffect]
    }

    static let cases: [Case] = [
        Case(description: "sign-in") { token, methods in
            var f = SignInFlow(username: "ann@contoso.com", scopes: scopes, claims: claims, state: .new(password: nil))
            let head = [
                step(.start, "send initiate"), step(answer(.continuation(ct("c1"))), "send challenge"),
                step(answer(.challenge(.password(ct("c2")))), "finish password_required"),
                step(.action(.submitPassword(Secret("pw"))), "send token(password)"),
            ]
            return HandOffTests.run(&f, head, token, methods) { f, e, now in f.on(e, at: now) }
        },
        Case(description: "sign-up's sign-in") { token, methods in
            var f = SignUpFlow(username: "new@contoso.com", state: .waiting(.completed(ct("c1"))))
            let head = [step(.action(.signIn(scopes: scopes, claims: claims)), "send token(continuation)")]
            return HandOffTests.run(&f, head, token, methods) { f, e, now in f.on(e, at: now) }
        },
        Case(description: "password reset's sign-in") { token, methods in
            var f = ResetPasswordFlow(username: "ann@contoso.com", state: .waiting(.completed(ct("c1"))))
            let head = [step(.action(.signIn(scopes: scopes, claims: claims)), "send token(continuation)")]
            return HandOffTests.run(&f, head, token, methods) { f, e, now in f.on(e, at: now) }
        },
    ]

    /// Plays `head`, then the token answer and the introspection's methods; all the effects.
    static func run<F>(
        _ flow: inout F,
        _ head: [Step],
        _ token: FlowEvent,
        _ methods: FlowEvent,
        _ on: (inout F, FlowEvent, Double) -> FlowEffect
    ) -> [FlowEffect] {
        var effects = play(&flow, head, on)
        effects.append(on(&flow, token, 1_000))
        effects.append(on(&flow, methods, 1_000))
        return effects
    }

    @Test(arguments: cases)
    func mfa(_ c: Case) {
        let effects = c.play(answer(.token(.mfaRequired(ct("t1")))), answer(.methods(ct("t2"), methods)))
        #expect(effects.dropLast().last?.trace == "send introspect")
        guard case .handOff(.strongAuth(let next), .mfaRequired(let named))? = effects.last else {
            Issue.record("\(c): no MFA hand-off: \(effects.last?.trace ?? "nothing")")
            return
        }
        #expect(effects.last?.trace == "handOff sign_in mfa_required")
        #expect(next.scopes == Self.scopes && next.claims == Self.claims && named == methods)
        guard case .waiting(.mfaSelect(let token, let waiting)) = next.state else {
            Issue.record("\(c): the strong-auth flow does not wait for an MFA method")
            return
        }
        #expect(token == ct("t2") && waiting == methods)
    }

    @Test(arguments: cases)
    func registration(_ c: Case) {
        let effects = c.play(answer(.token(.registrationRequired(ct("t1")))), answer(.methods(ct("t2"), methods)))
        #expect(effects.dropLast().last?.trace == "send registerIntrospect")
        guard case .handOff(.strongAuth(let next), .registrationRequired(let named))? = effects.last else {
            Issue.record("\(c): no registration hand-off: \(effects.last?.trace ?? "nothing")")
            return
        }
        #expect(effects.last?.trace == "handOff sign_in registration_required")
        #expect(next.scopes == Self.scopes && next.claims == Self.claims && named == methods)
        guard case .waiting(.registrationSelect(let token, let waiting)) = next.state else {
            Issue.record("\(c): the strong-auth flow does not wait for a method to register")
            return
        }
        #expect(token == ct("t2") && waiting == methods)
    }
}
