/// Sign-up: `signup/start` → `signup/challenge` (the email is verified first) → `signup/continue` with the code, then
/// the password and attributes the server still asks for → completed. The app may then `sign_in`: the flow's
/// continuation token is redeemed at the token endpoint (`signingIn`, below), which may hand off to MFA or
/// registration like any sign-in.
struct SignUpFlow: Sendable {
    /// What the flow waits for from the app.
    enum Waiting: Sendable {
        case code(ContinuationToken, CodeChallenge)
        case password(ContinuationToken)
        case attributes(ContinuationToken, [RequiredAttribute])
        /// Signed up; `sign_in` redeems this continuation token.
        case completed(ContinuationToken)
    }

    enum State: Sendable {
        case new(password: Secret?, attributes: [String: String]?)
        case starting
        /// The first challenge (the email is verified before anything else).
        case verifying
        case waiting(Waiting)
        /// `signup/continue` with the code, the password or the attributes.
        case continuing(from: Waiting)
        /// The challenge after `continue` answered that a credential is needed.
        case challenging(from: Waiting)
        case resending(from: Waiting)
        /// After sign-up: the sign-in with the flow's continuation token (the hand-off to a sign-in).
        case signingIn(TokenRedemption, from: Waiting)
        case ended
    }

    let username: String
    private(set) var state: State

    init(_ request: SignUpRequest) {
        username = request.username
        state = .new(password: request.password, attributes: request.attributes)
    }

    init(username: String, state: State) {
        self.username = username
        self.state = state
    }

    static func keeps(_ e: NativeAuthError) -> Bool {
        switch e.code {
        case .invalidCode, .invalidPassword, .attributesInvalid, .invalidScope, .invalidArgument: return true
        default: return e.isTransient
        }
    }

    mutating func on(_ event: FlowEvent, at now: Double) -> FlowEffect {
        switch (state, event) {
        case (.waiting(let waiting), .action(let action)):
            return act(action, waiting)
        case (.new(let password, let attributes), .start):
            state = .starting
            return .send(.signUpStart(username: username, password: password, attributes: attributes))
        case (.starting, .answer(.success(.continuation(let ct)))):
            state = .verifying
            return .send(.signUpChallenge(ct))
        case (.verifying, .answer(.success(.challenge(.code(let next, let challenge))))):
            state = .waiting(.code(next, challenge))
            return .finish(.codeRequired(challenge), continues: true)
        case (.verifying, .answer(.success(.challenge(.password)))):
            state = .ended
            return .fail(.unexpected("sign-up challenge_type password before the email was verified"), keepsFlow: false)
        case (.starting, .answer(.failure(let e))), (.verifying, .answer(.failure(let e))):
            state = .ended
            return .fail(e, keepsFlow: false)

        case (.continuing(let from), .answer(.success(.signUpContinue(let answer)))):
            switch answer {
            case .completed(let ct):
                // Without a continuation token the server allows no automatic sign-in: the flow ends here and the
                // app signs in normally (MSAL iOS, SignUpResponseValidator: "Even if the continuationToken is nil,
                // the signUp flow is considered successfully completed").
                guard let ct else {
                    state = .ended
                    return .finish(.signUpCompleted, continues: false)
                }
                state = .waiting(.completed(ct))
                return .finish(.signUpCompleted, continues: true)
            case .credentialRequired(let ct):
                state = .challenging(from: from)
                return .send(.signUpChallenge(ct))
            case .attributesRequired(let ct, let attributes):
                state = .waiting(.attributes(ct, attributes))
                return .finish(.attributesRequired(attributes), continues: true)
            }
        case (.challenging, .answer(.success(.challenge(.password(let next))))):
            state = .waiting(.password(next))
            return .finish(.passwordRequired, continues: true)
        case (.challenging, .answer(.success(.challenge(.code(let next, let challenge))))),
            (.resending, .answer(.success(.challenge(.code(let next, let challenge))))):
            state = .waiting(.code(next, challenge))
            return .finish(.codeRequired(challenge), continues: true)
        case (.resending(let from), .answer(.success(.challenge(.password)))):
            state = .waiting(from)
            return .fail(.unexpected("a resend answered with a password challenge"), keepsFlow: true)
        case (.continuing(let from), .answer(.failure(let e))), (.challenging(let from), .answer(.failure(let e))),
            (.resending(let from), .answer(.failure(let e))):
            return failing(e, back: from)

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
            return .fail(.unexpectedAnswer("sign-up"), keepsFlow: false)
        }
    }

    /// An action of the app in the state `w`.
    private mutating func act(_ action: FlowAction, _ w: Waiting) -> FlowEffect {
        switch (w, action) {
        case (.code(let ct, _), .submitCode(let code)):
            state = .continuing(from: w)
            return .send(.signUpContinue(ct, .code(code)))
        case (.code(let ct, _), .resendCode):
            state = .resending(from: w)
            return .send(.signUpChallenge(ct))
        case (.password(let ct), .submitPassword(let password)):
            state = .continuing(from: w)
            return .send(.signUpContinue(ct, .password(password)))
        case (.attributes(let ct, _), .submitAttributes(let attributes)):
            state = .continuing(from: w)
            return .send(.signUpContinue(ct, .attributes(attributes)))
        case (.completed(let ct), .signIn(let scopes, let claims)):
            let scopes = scopes ?? []
            let (redemption, effect) = TokenRedemption.start(
                .continuation(ct, username: username),
                scopes: scopes,
                claims: claims
            )
            state = .signingIn(redemption, from: w)
            return effect
        case (.code, _): return .fail(.wrongStep(action, expected: .submitCode), keepsFlow: true)
        case (.password, _): return .fail(.wrongStep(action, expected: .submitPassword), keepsFlow: true)
        case (.attributes, _): return .fail(.wrongStep(action, expected: .submitAttributes), keepsFlow: true)
        case (.completed, _): return .fail(.wrongStep(action, expected: .signIn), keepsFlow: true)
        }
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
