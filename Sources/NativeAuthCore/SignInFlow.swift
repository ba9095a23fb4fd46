/// Sign-in with email + password or an emailed one-time code: `initiate` → `challenge` → `token`. MFA and strong-auth
/// registration, when the token step asks for them, continue as a `StrongAuthFlow`.
struct SignInFlow: Sendable {
    enum State: Sendable {
        case awaitingPassword(ContinuationToken)
        case awaitingCode(ContinuationToken, CodeChallenge)
    }

    let username: String
    let scopes: [String]
    let claims: ClaimsRequest?
    var state: State

    /// Starts a sign-in. With a password (and a password account) it completes in one call; otherwise the flow
    /// waits for the password or the code. A retryable failure of an up-front password (wrong password) leaves the
    /// flow waiting for the password: `retry` carries it.
    static func start(_ request: SignInRequest, _ ctx: FlowContext) throws(SignInStartFailure) -> Transition {
        do {
            ctx.log(.info, "sign-in started")
            let first = try ctx.server.initiate(username: request.username)
            let flow: (State) -> SignInFlow = {
                SignInFlow(username: request.username, scopes: request.scopes, claims: request.claims, state: $0)
            }
            switch try ctx.server.challenge(first) {
            case .password(let ct):
                let waiting = flow(.awaitingPassword(ct))
                guard let password = request.password else {
                    return Transition(next: .signIn(waiting), status: .passwordRequired)
                }
                do {
                    return try waiting.apply(.submitPassword(password), ctx)
                } catch {
                    guard keepsFlow(error) else { throw SignInStartFailure(error: error, retry: nil) }
                    // The continuation token is still good: let the app retry the password on the same flow.
                    throw SignInStartFailure(error: error, retry: .signIn(waiting))
                }
            case .code(let ct, let challenge):
                // An account without a password answers with a code even when a password was given (as MSAL iOS).
                return Transition(next: .signIn(flow(.awaitingCode(ct, challenge))), status: .codeRequired(challenge))
            }
        } catch let failure as SignInStartFailure {
            throw failure
        } catch let e as NativeAuthError {
            throw SignInStartFailure(error: e, retry: nil)
        } catch {
            throw SignInStartFailure(error: NativeAuthError(.internal, "unexpected sign-in error"), retry: nil)
        }
    }

    func apply(_ action: FlowAction, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        switch (state, action) {
        case (.awaitingPassword(let ct), .submitPassword(let password)):
            let answer = try ctx.server.token(
                .password(ct, username: username, password: password),
                scopes: scopes,
                claims: claims
            )
            return try ctx.redeem(answer, scopes: scopes, claims: claims)
        case (.awaitingCode(let ct, _), .submitCode(let code)):
            let answer = try ctx.server.token(.oob(ct, code: code), scopes: scopes, claims: claims)
            return try ctx.redeem(answer, scopes: scopes, claims: claims)
        case (.awaitingCode(let ct, _), .resendCode):
            guard case .code(let next, let challenge) = try ctx.server.challenge(ct) else {
                throw .unexpected("a resend answered with a password challenge")
            }
            var flow = self
            flow.state = .awaitingCode(next, challenge)
            return Transition(next: .signIn(flow), status: .codeRequired(challenge))
        case (.awaitingPassword, _):
            throw ctx.wrongStep(action, expected: .submitPassword)
        case (.awaitingCode, _):
            throw ctx.wrongStep(action, expected: .submitCode)
        }
    }
}

/// A failed sign-in start; `retry` is the flow to retry on, when the failure leaves one.
struct SignInStartFailure: Error {
    var error: NativeAuthError
    var retry: Flow?
}
