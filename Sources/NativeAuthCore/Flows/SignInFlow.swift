/// Sign-in with email + password or an emailed one-time code: `initiate` → `challenge` → `token`. With a password
/// given up front (and a password account) it completes in one call. MFA and strong-auth registration, when the token
/// step asks for them, are a hand-off to `StrongAuthFlow` (below, in `redeeming`: `TokenRedemption.advanced(by:)`).
struct SignInFlow: Sendable {
    /// What the flow waits for from the app.
    enum Waiting: Sendable {
        case password(ContinuationToken)
        case code(ContinuationToken, CodeChallenge)
    }

    enum State: Sendable {
        /// Not started; the password given up front, if any.
        case new(password: Secret?)
        case initiating(password: Secret?)
        case challenging(password: Secret?)
        case waiting(Waiting)
        /// A new code was asked for.
        case resending(from: Waiting)
        /// The token request and what follows it; `from` is where a retryable failure returns.
        case redeeming(TokenRedemption, from: Waiting)
        case ended
    }

    let username: String
    let scopes: [String]
    let claims: ClaimsRequest?
    private(set) var state: State

    init(_ request: SignInRequest) {
        username = request.username
        scopes = request.scopes
        claims = request.claims
        state = .new(password: request.password)
    }

    init(username: String, scopes: [String], claims: ClaimsRequest?, state: State) {
        self.username = username
        self.scopes = scopes
        self.claims = claims
        self.state = state
    }

    /// Whether the flow stays usable after `e` (then in the state it waited in): the user's input was refused, or
    /// the server gave no verdict. The continuation token is still good.
    static func keeps(_ e: NativeAuthError) -> Bool {
        switch e.code {
        case .invalidPassword, .invalidCredentials, .invalidCode, .invalidScope, .invalidArgument: return true
        default: return e.isTransient
        }
    }

    mutating func on(_ event: FlowEvent, at now: Double) -> FlowEffect {
        switch (state, event) {
        case (.new(let password), .start):
            state = .initiating(password: password)
            return .send(.initiate(username: username))
        case (.initiating(let password), .answer(.success(.continuation(let ct)))):
            state = .challenging(password: password)
            return .send(.challenge(ct, methodID: nil, context: .flowStep))
        case (.challenging(let password), .answer(.success(.challenge(.password(let ct))))):
            state = .waiting(.password(ct))
            guard let password else { return .finish(.passwordRequired, continues: true) }
            return redeem(.password(ct, username: username, password: password), from: .password(ct))
        case (.challenging, .answer(.success(.challenge(.code(let ct, let challenge))))):
            // An account without a password answers with a code even when a password was given (as MSAL iOS).
            state = .waiting(.code(ct, challenge))
            return .finish(.codeRequired(challenge), continues: true)
        case (.initiating, .answer(.failure(let e))), (.challenging, .answer(.failure(let e))):
            state = .ended
            return .fail(e, keepsFlow: false)

        case (.waiting(.password(let ct)), .action(.submitPassword(let password))):
            return redeem(.password(ct, username: username, password: password), from: .password(ct))
        case (.waiting(.code(let ct, let challenge)), .action(.submitCode(let code))):
            return redeem(.oob(ct, code: code), from: .code(ct, challenge))
        case (.waiting(.code(let ct, let challenge)), .action(.resendCode)):
            state = .resending(from: .code(ct, challenge))
            return .send(.challenge(ct, methodID: nil, context: .flowStep))
        case (.waiting(.password), .action(let action)):
            return .fail(.wrongStep(action, expected: .submitPassword), keepsFlow: true)
        case (.waiting(.code), .action(let action)):
            return .fail(.wrongStep(action, expected: .submitCode), keepsFlow: true)

        case (.resending, .answer(.success(.challenge(.code(let next, let challenge))))):
            state = .waiting(.code(next, challenge))
            return .finish(.codeRequired(challenge), continues: true)
        case (.resending(let from), .answer(.success(.challenge(.password)))):
            state = .waiting(from)
            return .fail(.unexpected("a resend answered with a password challenge"), keepsFlow: true)
        case (.resending(let from), .answer(.failure(let e))):
            return failing(e, back: from)

        // Signed in, or the hand-off to MFA or strong-auth registration (a StrongAuthFlow): TokenRedemption.advanced.
        case (.redeeming(let redemption, let from), _):
            switch redemption.advanced(by: event) {
            case .effect(let effect, let next):
                state = next.map { .redeeming($0, from: from) } ?? .ended
                return effect
            case .failed(let e): return failing(e, back: from)
            }

        default:
            state = .ended
            return .fail(.unexpectedAnswer("sign-in"), keepsFlow: false)
        }
    }

    /// The token request with `grant`; a retryable failure returns to `from`.
    private mutating func redeem(_ grant: NativeGrant, from: Waiting) -> FlowEffect {
        let (redemption, effect) = TokenRedemption.start(grant, scopes: scopes, claims: claims)
        state = .redeeming(redemption, from: from)
        return effect
    }

    /// A failed step: back to `from` when the flow stays usable, else ended.
    private mutating func failing(_ e: NativeAuthError, back from: Waiting) -> FlowEffect {
        guard Self.keeps(e) else {
            state = .ended
            return .fail(e, keepsFlow: false)
        }
        state = .waiting(from)
        return .fail(e, keepsFlow: true)
    }
}
