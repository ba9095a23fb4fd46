/// Self-service password reset: `resetpassword/start` → `challenge` (code) → `continue` → `submit` (new password) →
/// `poll_completion` until it succeeds → completed, after which `sign_in` redeems the continuation token.
struct ResetPasswordFlow: Sendable {
    enum State: Sendable {
        case awaitingCode(ContinuationToken, CodeChallenge)
        case awaitingNewPassword(ContinuationToken)
        /// The server accepted the new password; polling its completion failed once (no connection, 5xx, …) and
        /// continues on the next `submit_password` (whose password is then not sent again).
        case polling(ContinuationToken, interval: Int64?)
        /// The server may complete without a continuation token; then there is no automatic sign-in.
        case completed(ContinuationToken?)
    }

    let username: String
    var state: State

    /// Polling lasts at most this long (MSAL Android and msal-browser: 300 000 ms).
    static let maxPolling = 300.0

    static func start(_ request: ResetPasswordRequest, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        ctx.log(.info, "password reset started")
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
            let (pollToken, interval) = try ctx.server.resetSubmit(ct, newPassword: password)
            return try poll(pollToken, interval: interval, ctx)
        case (.polling(let pollToken, let interval), .submitPassword):
            return try poll(pollToken, interval: interval, ctx)
        case (.completed(let ct), .signIn(let scopes, let claims)):
            guard let ct else {
                throw NativeAuthError(.flowInvalid, "The server did not allow an automatic sign-in; call na_sign_in.")
            }
            let scopes = scopes ?? []
            let answer = try ctx.server.token(.continuation(ct, username: username), scopes: scopes, claims: claims)
            return try ctx.redeem(answer, scopes: scopes, claims: claims)
        case (.awaitingCode, _): throw ctx.wrongStep(action, expected: .submitCode)
        case (.awaitingNewPassword, _), (.polling, _): throw ctx.wrongStep(action, expected: .submitPassword)
        case (.completed, _): throw ctx.wrongStep(action, expected: .signIn)
        }
    }

    /// Polls `poll_completion` with the submit's token: right away, then every `poll_interval` seconds (the
    /// server's; 0 or absent means 2, as msal-browser; at most 10) while it answers `in_progress` or `not_started`,
    /// for up to `maxPolling` seconds. `failed` ends the flow with `password_reset_failed`; a password-policy error
    /// during polling leaves the flow waiting for another password (MSAL iOS's ResetPasswordResponseValidator maps
    /// it to a password error with a new password-required state); any other failure of a poll keeps the accepted
    /// password and resumes polling on the next `submit_password`; a cancel from another thread ends the wait with
    /// `cancelled`.
    private func poll(
        _ pollToken: ContinuationToken,
        interval: Int64?,
        _ ctx: FlowContext
    ) throws(NativeAuthError)
        -> Transition
    {
        let wait = Double((interval ?? 0) <= 0 ? 2 : min(interval ?? 2, 10))
        var waited = 0.0
        while true {
            let status: ResetPollStatus
            do {
                status = try ctx.server.resetPoll(pollToken)
            } catch {
                guard keepsFlow(error), error.code != .invalidPassword else { throw error }
                var flow = self
                flow.state = .polling(pollToken, interval: interval)
                return .failed(after: .resetPassword(flow), error)
            }
            switch status {
            case .succeeded(let next):
                ctx.log(.info, "password reset completed")
                return moving(to: .completed(next), .passwordResetCompleted)
            case .failed:
                throw NativeAuthError(.passwordResetFailed, "The server could not reset the password; start again.")
            case .inProgress:
                guard waited < Self.maxPolling else {
                    throw NativeAuthError(.server, "The password reset did not complete in time.")
                }
                try ctx.sleep(wait)
                waited += wait
            }
        }
    }

    private func moving(to state: State, _ status: FlowStatus) -> Transition {
        var flow = self
        flow.state = state
        return Transition(next: .resetPassword(flow), status: status)
    }
}
