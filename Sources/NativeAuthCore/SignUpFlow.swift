/// Sign-up: `signup/start` → `signup/challenge` (the email is verified first) → `signup/continue` with the code, then
/// the password and attributes the server still asks for → completed, after which `sign_in` redeems the flow's
/// continuation token.
struct SignUpFlow: Sendable {
    enum State: Sendable {
        case awaitingCode(ContinuationToken, CodeChallenge)
        case awaitingPassword(ContinuationToken)
        case awaitingAttributes(ContinuationToken, [RequiredAttribute])
        case completed(ContinuationToken)
    }

    let username: String
    var state: State

    static func start(_ request: SignUpRequest, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        ctx.log(.info, "sign-up started")
        let ct = try ctx.server.signUpStart(
            username: request.username,
            password: request.password,
            attributes: request.attributes
        )
        guard case .code(let next, let challenge) = try ctx.server.signUpChallenge(ct) else {
            throw .unexpected("sign-up challenge_type password before the email was verified")
        }
        let flow = SignUpFlow(username: request.username, state: .awaitingCode(next, challenge))
        return Transition(next: .signUp(flow), status: .codeRequired(challenge))
    }

    func apply(_ action: FlowAction, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        switch (state, action) {
        case (.awaitingCode(let ct, _), .submitCode(let code)):
            return try next(ctx.server.signUpContinue(ct, .code(code)), ctx)
        case (.awaitingCode(let ct, _), .resendCode):
            guard case .code(let next, let challenge) = try ctx.server.signUpChallenge(ct) else {
                throw .unexpected("a resend answered with a password challenge")
            }
            return moving(to: .awaitingCode(next, challenge), .codeRequired(challenge))
        case (.awaitingPassword(let ct), .submitPassword(let password)):
            return try next(ctx.server.signUpContinue(ct, .password(password)), ctx)
        case (.awaitingAttributes(let ct, _), .submitAttributes(let attributes)):
            return try next(ctx.server.signUpContinue(ct, .attributes(attributes)), ctx)
        case (.completed(let ct), .signIn(let scopes, let claims)):
            let scopes = scopes ?? []
            let answer = try ctx.server.token(.continuation(ct, username: username), scopes: scopes, claims: claims)
            return try ctx.redeem(answer, scopes: scopes, claims: claims)
        case (.awaitingCode, _): throw ctx.wrongStep(action, expected: .submitCode)
        case (.awaitingPassword, _): throw ctx.wrongStep(action, expected: .submitPassword)
        case (.awaitingAttributes, _): throw ctx.wrongStep(action, expected: .submitAttributes)
        case (.completed, _): throw ctx.wrongStep(action, expected: .signIn)
        }
    }

    /// After each `signup/continue`.
    private func next(_ answer: SignUpContinueAnswer, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        switch answer {
        case .completed(let ct):
            ctx.log(.info, "sign-up completed")
            // Without a continuation token the server allows no automatic sign-in: the flow ends here and the app
            // signs in normally (MSAL iOS, SignUpResponseValidator: "Even if the continuationToken is nil, the signUp
            // flow is considered successfully completed").
            guard let ct else { return .ended(.signUpCompleted) }
            return moving(to: .completed(ct), .signUpCompleted)
        case .credentialRequired(let ct):
            switch try ctx.server.signUpChallenge(ct) {
            case .password(let next): return moving(to: .awaitingPassword(next), .passwordRequired)
            case .code(let next, let challenge):
                return moving(to: .awaitingCode(next, challenge), .codeRequired(challenge))
            }
        case .attributesRequired(let ct, let attributes):
            return moving(to: .awaitingAttributes(ct, attributes), .attributesRequired(attributes))
        }
    }

    private func moving(to state: State, _ status: FlowStatus) -> Transition {
        var flow = self
        flow.state = state
        return Transition(next: .signUp(flow), status: status)
    }
}
