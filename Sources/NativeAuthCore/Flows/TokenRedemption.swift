/// The last part of every native sign-in: the token request and what it may lead to — the tokens, or MFA or
/// strong-auth registration (the server answers with a continuation token; the methods come from introspection).
/// A sign-in, and a sign-up's or reset's sign-in, take its `advanced(by:)`, the one home of their hand-off to
/// `StrongAuthFlow`; `StrongAuthFlow` itself takes `on` (MFA or registration asked again goes on in the same flow).
struct TokenRedemption: Sendable {
    enum Step: Sendable {
        case token
        case introspecting(registration: Bool)
        case storing
    }

    let scopes: [String]
    let claims: ClaimsRequest?
    var step = Step.token

    enum Outcome: Sendable {
        /// Perform this effect and feed its result back.
        case effect(FlowEffect)
        case signedIn(StoredSignIn)
        case mfaRequired(ContinuationToken, [AuthMethod])
        case registrationRequired(ContinuationToken, [AuthMethod])
        case failed(NativeAuthError)
    }

    /// The token request for `grant`.
    static func start(
        _ grant: NativeGrant,
        scopes: [String],
        claims: ClaimsRequest?
    ) -> (TokenRedemption, FlowEffect) {
        (TokenRedemption(scopes: scopes, claims: claims), .send(.token(grant, scopes: scopes, claims: claims)))
    }

    mutating func on(_ event: FlowEvent) -> Outcome {
        switch (step, event) {
        case (_, .answer(.failure(let e))), (_, .stored(.failure(let e))):
            return .failed(e)
        case (.token, .answer(.success(.token(.tokens(let response))))):
            step = .storing
            return .effect(.store(response, scopes: scopes, policy: TokenService.IDTokenPolicy()))
        case (.token, .answer(.success(.token(.mfaRequired(let ct))))):
            step = .introspecting(registration: false)
            return .effect(.send(.introspect(ct)))
        case (.token, .answer(.success(.token(.registrationRequired(let ct))))):
            step = .introspecting(registration: true)
            return .effect(.send(.registerIntrospect(ct)))
        case (.introspecting(let registration), .answer(.success(.methods(let ct, let methods)))):
            return registration ? .registrationRequired(ct, methods) : .mfaRequired(ct, methods)
        case (.storing, .stored(.success(let signedIn))):
            return .signedIn(signedIn)
        default:
            return .failed(.unexpectedAnswer("token redemption"))
        }
    }
}

extension TokenRedemption {
    /// What the flow holding the redemption does next: perform `effect`, then go on redeeming with `next` — or, with
    /// `next` nil, end (signed in, or handed off) — or judge a failure (whether it keeps the flow is the flow's).
    enum Next: Sendable {
        case effect(FlowEffect, next: TokenRedemption?)
        case failed(NativeAuthError)
    }

    /// `event` for a sign-in, sign-up or password reset: signed in ends the flow; MFA or strong-auth registration,
    /// asked for by the token step, is the hand-off to a `StrongAuthFlow` with the redemption's scopes and claims,
    /// the flow answering `mfa_required` or `registration_required` with the methods.
    func advanced(by event: FlowEvent) -> Next {
        var redemption = self
        switch redemption.on(event) {
        case .effect(let effect):
            return .effect(effect, next: redemption)
        case .signedIn(let s):
            return .effect(.finish(.signedIn(s.account, s.token), continues: false), next: nil)
        case .mfaRequired(let ct, let methods):
            let next = StrongAuthFlow(state: .waiting(.mfaSelect(ct, methods: methods)), scopes: scopes, claims: claims)
            return .effect(.handOff(.strongAuth(next), .mfaRequired(methods)), next: nil)
        case .registrationRequired(let ct, let methods):
            let next = StrongAuthFlow(
                state: .waiting(.registrationSelect(ct, methods: methods)),
                scopes: scopes,
                claims: claims
            )
            return .effect(.handOff(.strongAuth(next), .registrationRequired(methods)), next: nil)
        case .failed(let e):
            return .failed(e)
        }
    }
}
