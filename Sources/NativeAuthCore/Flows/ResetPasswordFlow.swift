/// Self-service password reset: `resetpassword/start` → `challenge` (code) → `continue` → `submit` (new password) →
/// `poll_completion` until it succeeds → completed. The app may then `sign_in`: the flow's continuation token is
/// redeemed at the token endpoint (`signingIn`, below), which may hand off to MFA or registration like any sign-in.
struct ResetPasswordFlow: Sendable {
    /// What the flow waits for from the app.
    enum Waiting: Sendable {
        case code(ContinuationToken, CodeChallenge)
        case newPassword(ContinuationToken)
        /// The server accepted the new password; polling its completion failed once (no connection, 5xx, …) and
        /// goes on at the next `submit_password` (whose password is then not sent again).
        case pollingPaused(ContinuationToken, interval: Int64?)
        /// The server may complete without a continuation token; then there is no automatic sign-in.
        case completed(ContinuationToken?)
    }

    enum State: Sendable {
        case new
        case starting
        case challenging
        case waiting(Waiting)
        case resending(from: Waiting)
        /// The code was sent (`continue`).
        case verifying(from: Waiting)
        /// The new password was sent (`submit`).
        case submitting(from: Waiting)
        /// `poll_completion` was sent (`polled`: seconds waited between polls so far).
        case polling(ContinuationToken, interval: Int64?, polled: Double, from: Waiting)
        /// Between two polls.
        case pausing(ContinuationToken, interval: Int64?, polled: Double, from: Waiting)
        case signingIn(TokenRedemption, from: Waiting)
        case ended
    }

    let username: String
    private(set) var state: State

    /// Polling lasts at most this long (MSAL Android and msal-browser: 300 000 ms).
    static let maxPolling = 300.0

    init(_ request: ResetPasswordRequest) {
        username = request.username
        state = .new
    }

    init(username: String, state: State) {
        self.username = username
        self.state = state
    }

    static func keeps(_ e: NativeAuthError) -> Bool {
        switch e.code {
        case .invalidCode, .invalidPassword, .invalidScope, .invalidArgument: return true
        default: return e.isTransient
        }
    }

    /// Seconds between polls: the server's `poll_interval` (0 or absent means 2, as msal-browser; at most 10).
    static func pollWait(_ interval: Int64?) -> Double {
        Double((interval ?? 0) <= 0 ? 2 : min(interval ?? 2, 10))
    }

    mutating func on(_ event: FlowEvent, at now: Double) -> FlowEffect {
        switch (state, event) {
        case (.waiting(let waiting), .action(let action)):
            return act(action, waiting)
        case (.new, .start):
            state = .starting
            return .send(.resetStart(username: username))
        case (.starting, .answer(.success(.continuation(let ct)))):
            state = .challenging
            return .send(.resetChallenge(ct))
        case (.challenging, .answer(.success(.codeChallenge(let next, let challenge)))),
            (.resending, .answer(.success(.codeChallenge(let next, let challenge)))):
            state = .waiting(.code(next, challenge))
            return .finish(.codeRequired(challenge), continues: true)
        case (.starting, .answer(.failure(let e))), (.challenging, .answer(.failure(let e))):
            state = .ended
            return .fail(e, keepsFlow: false)
        case (.verifying, .answer(.success(.continuation(let next)))):
            state = .waiting(.newPassword(next))
            return .finish(.passwordRequired, continues: true)
        case (.submitting(let from), .answer(.success(.resetSubmitted(let pollToken, let interval)))):
            return poll(pollToken, interval: interval, polled: 0, from: from)
        case (.resending(let from), .answer(.failure(let e))), (.verifying(let from), .answer(.failure(let e))),
            (.submitting(let from), .answer(.failure(let e))):
            return failing(e, back: from)

        // Polling: right away, then every `pollWait` seconds while the server answers in_progress (or not_started),
        // for up to `maxPolling` seconds. `failed` ends the flow with password_reset_failed; a password-policy error
        // during polling leaves the flow waiting as it was before the call (MSAL iOS's ResetPasswordResponseValidator
        // maps it to a password error with a new password-required state); any other failure of a poll that keeps
        // the flow pauses polling until the next submit_password. A cancel ends a wait in the driver.
        case (.polling(_, _, _, _), .answer(.success(.resetPoll(.succeeded(let next))))):
            state = .waiting(.completed(next))
            return .finish(.passwordResetCompleted, continues: true)
        case (.polling, .answer(.success(.resetPoll(.failed)))):
            state = .ended
            return .fail(
                NativeAuthError(.passwordResetFailed, "The server could not reset the password; start again."),
                keepsFlow: false
            )
        case (.polling(let pollToken, let interval, let polled, let from), .answer(.success(.resetPoll(.inProgress)))):
            guard polled < Self.maxPolling else {
                state = .ended
                return .fail(NativeAuthError(.server, "The password reset did not complete in time."), keepsFlow: false)
            }
            let wait = Self.pollWait(interval)
            state = .pausing(pollToken, interval: interval, polled: polled + wait, from: from)
            return .wait(seconds: wait)
        case (.pausing(let pollToken, let interval, let polled, let from), .waited):
            return poll(pollToken, interval: interval, polled: polled, from: from)
        case (.polling(let pollToken, let interval, _, let from), .answer(.failure(let e))):
            guard Self.keeps(e) else {
                state = .ended
                return .fail(e, keepsFlow: false)
            }
            if e.code == .invalidPassword {
                state = .waiting(from)
                return .fail(e, keepsFlow: true)
            }
            state = .waiting(.pollingPaused(pollToken, interval: interval))
            return .fail(e, keepsFlow: true)

        // Signed in, or the hand-off to MFA or strong-auth registration (a StrongAuthFlow): TokenRedemption.advanced.
        case (.signingIn(let redemption, let from), _):
            switch redemption.advanced(by: event) {
            case .effect(let effect, let next):
                state = next.map { .signingIn($0, from: from) } ?? .ended
                return effect
            case .failed(let e): return failing(e, back: from)
            }
        default:
            state = .ended
            return .fail(.unexpectedAnswer("password reset"), keepsFlow: false)
        }
    }

    /// An action of the app in the state `w`.
    private mutating func act(_ action: FlowAction, _ w: Waiting) -> FlowEffect {
        switch (w, action) {
        case (.code(let ct, _), .submitCode(let code)):
            state = .verifying(from: w)
            return .send(.resetContinue(ct, code: code))
        case (.code(let ct, _), .resendCode):
            state = .resending(from: w)
            return .send(.resetChallenge(ct))
        case (.newPassword(let ct), .submitPassword(let password)):
            state = .submitting(from: w)
            return .send(.resetSubmit(ct, newPassword: password))
        case (.pollingPaused(let pollToken, let interval), .submitPassword):
            return poll(pollToken, interval: interval, polled: 0, from: w)
        case (.completed(let ct), .signIn(let scopes, let claims)):
            guard let ct else {
                return .fail(
                    NativeAuthError(.flowInvalid, "The server did not allow an automatic sign-in; start a sign-in."),
                    keepsFlow: false
                )
            }
            let (redemption, effect) = TokenRedemption.start(
                .continuation(ct, username: username),
                scopes: scopes ?? [],
                claims: claims
            )
            state = .signingIn(redemption, from: w)
            return effect
        case (.code, _): return .fail(.wrongStep(action, expected: .submitCode), keepsFlow: true)
        case (.newPassword, _), (.pollingPaused, _):
            return .fail(.wrongStep(action, expected: .submitPassword), keepsFlow: true)
        case (.completed, _): return .fail(.wrongStep(action, expected: .signIn), keepsFlow: true)
        }
    }

    private mutating func poll(
        _ pollToken: ContinuationToken,
        interval: Int64?,
        polled: Double,
        from: Waiting
    ) -> FlowEffect {
        state = .polling(pollToken, interval: interval, polled: polled, from: from)
        return .send(.resetPoll(pollToken))
    }

    private mutating func failing(_ e: NativeAuthError, back: Waiting) -> FlowEffect {
        guard Self.keeps(e) else {
            state = .ended
            return .fail(e, keepsFlow: false)
        }
        state = .waiting(back)
        return .fail(e, keepsFlow: true)
    }
}
