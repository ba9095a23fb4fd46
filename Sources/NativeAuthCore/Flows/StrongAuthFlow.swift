/// The second half of a sign-in that the token step did not complete: MFA (`introspect` → `challenge` →
/// `token grant_type=mfa_oob`) or just-in-time strong-auth registration (`register/introspect` → `register/challenge`
/// → `register/continue` → `token grant_type=continuation_token`). A sign-in (or a sign-up's or reset's sign-in)
/// hands off to it; the token step here may hand on to MFA or registration again.
struct StrongAuthFlow: Sendable {
    /// What the flow waits for from the app.
    enum Waiting: Sendable {
        case mfaSelect(ContinuationToken, methods: [AuthMethod])
        case mfaCode(ContinuationToken, methods: [AuthMethod], methodID: String?, challenge: CodeChallenge)
        case registrationSelect(ContinuationToken, methods: [AuthMethod])
        case registrationCode(
            ContinuationToken,
            methods: [AuthMethod],
            methodID: String?,
            contact: String,
            challenge: CodeChallenge
        )
        /// `register/v1.0/continue` succeeded; only the token request is left (it failed once and may be retried).
        case registered(ContinuationToken)
    }

    enum State: Sendable {
        case waiting(Waiting)
        /// The MFA challenge was sent for `methodID` (nil: the user's default method).
        case challenging(methods: [AuthMethod], methodID: String?, from: Waiting)
        /// The challenge answered `introspect_required`: the methods are fetched again for the app to choose one.
        case introspecting(from: Waiting)
        /// The registration challenge was sent for `method` and `contact`.
        case registering(methods: [AuthMethod], method: AuthMethod, contact: String, from: Waiting)
        /// `register/v1.0/continue` was sent (with the code, or none for a preverified contact).
        case continuingRegistration(from: Waiting)
        /// The token request; a retryable failure returns to `back`.
        case redeeming(TokenRedemption, back: Waiting)
        case ended
    }

    private(set) var state: State
    let scopes: [String]
    let claims: ClaimsRequest?

    init(state: State, scopes: [String], claims: ClaimsRequest?) {
        self.state = state
        self.scopes = scopes
        self.claims = claims
    }

    static func keeps(_ e: NativeAuthError) -> Bool {
        switch e.code {
        case .invalidCode, .invalidContact, .contactBlocked, .authMethodBlocked, .invalidScope, .invalidArgument:
            return true
        default: return e.isTransient
        }
    }

    mutating func on(_ event: FlowEvent, at now: Double) -> FlowEffect {
        switch (state, event) {
        case (.waiting(let waiting), .action(let action)):
            return act(action, waiting)
        case (
            .challenging(let methods, let methodID, _),
            .answer(.success(.challenge(.code(let next, let challenge))))
        ):
            state = .waiting(.mfaCode(next, methods: methods, methodID: methodID, challenge: challenge))
            return .finish(.codeRequired(challenge), continues: true)
        case (.challenging(_, _, let from), .answer(.success(.challenge(.password)))):
            state = .waiting(from)
            return .fail(.unexpected("an MFA challenge answered with a password challenge"), keepsFlow: true)
        case (.challenging(_, _, let from), .answer(.success(.challenge(.introspectRequired)))):
            guard let ct = Self.mfaToken(from) else {
                state = .ended
                return .fail(.unexpectedAnswer("introspect_required outside MFA"), keepsFlow: false)
            }
            state = .introspecting(from: from)
            return .send(.introspect(ct))
        case (.challenging(_, _, let from), .answer(.failure(let e))):
            return failing(e, back: from)
        case (.introspecting, .answer(.success(.methods(let next, let methods)))):
            // No default method: the app chooses one of these (request_challenge with method_id).
            state = .waiting(.mfaSelect(next, methods: methods))
            return .finish(.mfaRequired(methods), continues: true)
        case (.introspecting(let from), .answer(.failure(let e))):
            return failing(e, back: from)

        case (.registering(_, _, _, let from), .answer(.success(.registerChallenge(.preverified(let next))))):
            state = .continuingRegistration(from: from)
            return .send(.registerContinue(next, code: nil))
        case (
            .registering(let methods, let method, let contact, _),
            .answer(.success(.registerChallenge(.code(let next, let challenge))))
        ):
            state = .waiting(
                .registrationCode(next, methods: methods, methodID: method.id, contact: contact, challenge: challenge)
            )
            return .finish(.codeRequired(challenge), continues: true)
        case (.registering(_, _, _, let from), .answer(.failure(let e))):
            return failing(e, back: from)
        case (.continuingRegistration, .answer(.success(.continuation(let ct)))):
            // Registered. If the token request fails, the registration stays done: the flow waits as `registered`,
            // and a retry repeats only the token request — never `register/v1.0/continue`, whose continuation token
            // the server has consumed.
            return redeem(.continuation(ct, username: nil), back: .registered(ct))
        case (.continuingRegistration(let from), .answer(.failure(let e))):
            return failing(e, back: from)

        case (.redeeming(var redemption, let back), _):
            switch redemption.on(event) {
            case .effect(let effect):
                state = .redeeming(redemption, back: back)
                return effect
            case .signedIn(let s):
                state = .ended
                return .finish(.signedIn(s.account, s.token), continues: false)
            case .mfaRequired(let ct, let methods):
                state = .waiting(.mfaSelect(ct, methods: methods))
                return .finish(.mfaRequired(methods), continues: true)
            case .registrationRequired(let ct, let methods):
                state = .waiting(.registrationSelect(ct, methods: methods))
                return .finish(.registrationRequired(methods), continues: true)
            case .failed(let e):
                return failing(e, back: back)
            }
        default:
            state = .ended
            return .fail(.unexpectedAnswer("strong authentication"), keepsFlow: false)
        }
    }

    /// An action of the app in the state `w`.
    private mutating func act(_ action: FlowAction, _ w: Waiting) -> FlowEffect {
        switch (w, action) {
        // MFA: choose a method (or resend to the chosen one), then the code.
        // Without a method id the challenge names none and the server uses the user's default method, as MSAL
        // Android's requestChallenge() without one; a user with several and no default gets `introspect_required`.
        case (.mfaSelect(let ct, let methods), .requestChallenge(let id)),
            (.mfaCode(let ct, let methods, _, _), .requestChallenge(let id)):
            if let id, !methods.contains(where: { $0.id == id }) {
                return .fail(
                    .invalidArgument("method_id: not one of the flow's methods", field: "method_id"),
                    keepsFlow: true
                )
            }
            state = .challenging(methods: methods, methodID: id, from: w)
            return .send(.challenge(ct, methodID: id, context: .mfaChallenge))
        case (.mfaCode(let ct, let methods, let methodID, _), .resendCode):
            state = .challenging(methods: methods, methodID: methodID, from: w)
            return .send(.challenge(ct, methodID: methodID, context: .mfaChallenge))
        case (.mfaCode(let ct, _, _, _), .submitCode(let code)):
            return redeem(.mfaOOB(ct, code: code), back: w)

        // Registration: the contact to register (or a resend to it), then the code.
        case (.registrationSelect(let ct, let methods), .registerMethod(let contact, let id)):
            return register(ct, methods: methods, contact: contact, methodID: id, current: nil, from: w)
        case (.registrationCode(let ct, let methods, let current, _, _), .registerMethod(let contact, let id)):
            return register(ct, methods: methods, contact: contact, methodID: id, current: current, from: w)
        case (.registrationCode(let ct, let methods, let current, let contact, _), .resendCode):
            return register(ct, methods: methods, contact: contact, methodID: nil, current: current, from: w)
        case (.registrationCode(let ct, _, _, _, _), .submitCode(let code)):
            state = .continuingRegistration(from: w)
            return .send(.registerContinue(ct, code: code))
        case (.registered(let ct), .signIn), (.registered(let ct), .submitCode):
            return redeem(.continuation(ct, username: nil), back: w)

        case (.mfaSelect, _): return .fail(.wrongStep(action, expected: .requestChallenge), keepsFlow: true)
        case (.registrationSelect, _): return .fail(.wrongStep(action, expected: .registerMethod), keepsFlow: true)
        case (.mfaCode, _), (.registrationCode, _):
            return .fail(.wrongStep(action, expected: .submitCode), keepsFlow: true)
        case (.registered, _): return .fail(.wrongStep(action, expected: .signIn), keepsFlow: true)
        }
    }

    /// The continuation token an MFA wait holds (the one its challenge was sent with).
    private static func mfaToken(_ w: Waiting) -> ContinuationToken? {
        switch w {
        case .mfaSelect(let ct, _), .mfaCode(let ct, _, _, _): return ct
        case .registrationSelect, .registrationCode, .registered: return nil
        }
    }

    /// The registration challenge for `contact` with a method of the flow (`methodID`, else `current`, else the
    /// first).
    private mutating func register(
        _ ct: ContinuationToken,
        methods: [AuthMethod],
        contact: String,
        methodID: String?,
        current: String?,
        from: Waiting
    ) -> FlowEffect {
        guard !contact.isEmpty, contact.utf8.count <= 320 else {
            return .fail(
                .invalidArgument("contact: required (the email address or phone number to register)", field: "contact"),
                keepsFlow: true
            )
        }
        if let methodID, !methods.contains(where: { $0.id == methodID }) {
            return .fail(
                .invalidArgument("method_id: not one of the flow's methods", field: "method_id"),
                keepsFlow: true
            )
        }
        guard let method = methods.first(where: { $0.id == (methodID ?? current) }) ?? methods.first else {
            return .fail(.unexpected("registration without methods"), keepsFlow: true)
        }
        state = .registering(methods: methods, method: method, contact: contact, from: from)
        return .send(.registerChallenge(ct, method: method, target: contact))
    }

    private mutating func redeem(_ grant: NativeGrant, back: Waiting) -> FlowEffect {
        let (redemption, effect) = TokenRedemption.start(grant, scopes: scopes, claims: claims)
        state = .redeeming(redemption, back: back)
        return effect
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
