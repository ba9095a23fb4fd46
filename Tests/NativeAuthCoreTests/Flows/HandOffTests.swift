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

    /// What the token step asks for, and how the strong-auth flow must wait.
    enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case mfa = "mfa_required"
        case registration = "registration_required"

        var description: String { rawValue }
        var tokenAnswer: FlowEvent {
            answer(.token(self == .mfa ? .mfaRequired(ct("t1")) : .registrationRequired(ct("t1"))))
        }
        var introspection: String { self == .mfa ? "send introspect" : "send registerIntrospect" }
    }

    @Test(arguments: cases, Kind.allCases)
    func handOff(_ c: Case, _ kind: Kind) {
        let effects = c.play(kind.tokenAnswer, answer(.methods(ct("t2"), methods)))
        #expect(effects.dropLast().last?.trace == kind.introspection)
        #expect(effects.last?.trace == "handOff sign_in \(kind)")
        guard case .handOff(.strongAuth(let next), let status)? = effects.last else {
            Issue.record("\(c): no hand-off: \(effects.last?.trace ?? "nothing")")
            return
        }
        #expect(next.scopes == Self.scopes && next.claims == Self.claims)
        switch (kind, status, next.state) {
        case (.mfa, .mfaRequired(let named), .waiting(.mfaSelect(let token, let waiting))),
            (.registration, .registrationRequired(let named), .waiting(.registrationSelect(let token, let waiting))):
            #expect(named == methods && token == ct("t2") && waiting == methods)
        default:
            Issue.record("\(c): the strong-auth flow does not wait for a method of \(kind)")
        }
    }
}
