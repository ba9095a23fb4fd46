/// Self-service password reset: `resetpassword/start` → `challenge` (code) → `continue` → `submit` (new password) →
/// `poll_completion` until it succeeds → completed, after which `sign_in` redeems the continuation token.
struct ResetPasswordFlow: Sendable {
    enum State: Sendable {
        case awaitingCode(ContinuationToken, CodeChallenge)
        case awaitingNewPassword(ContinuationToken)
        /// The server may complete without a continuation token; then there is no automatic sign-in.
        case completed(ContinuationToken?)
    }

    let username: String
    var state: State

    /// As MSAL iOS: poll right after submitting, then at most five more times, `poll_interval` apart.
    static let maxPolls = 6

    static func start(_ request: ResetPasswordRequest, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        ctx.logger.log(.info, "password reset started")
        let ct = try ctx.server.resetStart(username: request.username)
        let (next, challenge) = try ctx.server.resetChallenge(ct)
        let flow = ResetPasswordFlow(username: request.username, state: .awaitingCode(next, challenge))
        return Transition(next: .resetPassword(flow), status: .codeRequired(challenge))
    }

    func apply(_ action: FlowAction, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        switch (state, action) {
        case (.awaitingCode(let ct, _), .submitCode(let code)):
            let next = try ctx.server.resetContinue(ct, code: code)
            return moving(to: .awaitingNewPassword(next), .passwordRequired)
        case (.awaitingCode(let ct, _), .resendCode):
            let (next, challenge) = try ctx.server.resetChallenge(ct)
            return moving(to: .awaitingCode(next, challenge), .codeRequired(challenge))
        case (.awaitingNewPassword(let ct), .submitPassword(let password)):
            return try submit(ct, password, ctx)
        case (.completed(let ct), .signIn(let scopes, let claims)):
            guard let ct else {
                throw NativeAuthError(.flowInvalid, "The server did not allow an automatic sign-in; call na_sign_in.")
            }
            let scopes = scopes ?? []
            let answer = try ctx.server.token(.continuation(ct, username: username), scopes: scopes, claims: claims)
            return try ctx.redeem(answer, scopes: scopes, claims: claims)
        case (.awaitingCode, _): throw ctx.wrongStep(action, expected: .submitCode)
        case (.awaitingNewPassword, _): throw ctx.wrongStep(action, expected: .submitPassword)
        case (.completed, _): throw ctx.wrongStep(action, expected: .signIn)
        }
    }

    private func submit(
        _ ct: ContinuationToken,
        _ password: Secret,
        _ ctx: FlowContext
    ) throws(NativeAuthError)
        -> Transition
    {
        let (pollToken, interval) = try ctx.server.resetSubmit(ct, newPassword: password)
        let wait = Double(min(10, max(0, interval ?? 2)))
        for attempt in 0..<Self.maxPolls {
            if attempt > 0 { ctx.clock.sleep(wait) }
            switch try ctx.server.resetPoll(pollToken) {
            case .succeeded(let next):
                ctx.logger.log(.info, "password reset completed")
                return moving(to: .completed(next), .passwordResetCompleted)
            case .failed:
                throw NativeAuthError(.server, "The server could not reset the password.")
            case .inProgress:
                continue
            }
        }
        throw NativeAuthError(.server, "The password reset did not complete in time.")
    }

    private func moving(to state: State, _ status: FlowStatus) -> Transition {
        var flow = self
        flow.state = state
        return Transition(next: .resetPassword(flow), status: status)
    }
}
