/// The second half of a sign-in that the token step did not complete: MFA (`introspect` → `challenge` →
/// `token grant_type=mfa_oob`) or just-in-time strong-auth registration (`register/introspect` → `register/challenge`
/// → `register/continue` → `token grant_type=continuation_token`).
struct StrongAuthFlow: Sendable {
    enum State: Sendable {
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

    var state: State
    let scopes: [String]
    let claims: ClaimsRequest?

    func apply(_ action: FlowAction, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        switch (state, action) {
        // MFA: choose a method (or resend to the chosen one), then the code.
        case (.mfaSelect(let ct, let methods), .requestChallenge(let id)),
            (.mfaCode(let ct, let methods, _, _), .requestChallenge(let id)):
            let chosen = id ?? methods.first?.id
            if let chosen, !methods.contains(where: { $0.id == chosen }) {
                throw .invalidArgument("method_id: not one of the flow's methods", field: "method_id")
            }
            return try mfaChallenge(ct, methods: methods, methodID: chosen, ctx)
        case (.mfaCode(let ct, let methods, let methodID, _), .resendCode):
            return try mfaChallenge(ct, methods: methods, methodID: methodID, ctx)
        case (.mfaCode(let ct, _, _, _), .submitCode(let code)):
            let answer = try ctx.server.token(.mfaOOB(ct, code: code), scopes: scopes, claims: claims)
            return try ctx.redeem(answer, scopes: scopes, claims: claims)

        // Registration: the contact to register (or a resend to it), then the code.
        case (.registrationSelect(let ct, let methods), .registerMethod(let contact, let id)):
            return try register(ct, methods: methods, contact: contact, methodID: id, current: nil, ctx)
        case (.registrationCode(let ct, let methods, let current, _, _), .registerMethod(let contact, let id)):
            return try register(ct, methods: methods, contact: contact, methodID: id, current: current, ctx)
        case (.registrationCode(let ct, let methods, let current, let contact, _), .resendCode):
            return try register(ct, methods: methods, contact: contact, methodID: nil, current: current, ctx)
        case (.registrationCode(let ct, _, _, _, _), .submitCode(let code)):
            return try finishRegistration(ctx.server.registerContinue(ct, code: code), ctx)
        case (.registered(let ct), .signIn), (.registered(let ct), .submitCode):
            return try finishRegistration(ct, ctx)

        case (.mfaSelect, _): throw ctx.wrongStep(action, expected: .requestChallenge)
        case (.registrationSelect, _): throw ctx.wrongStep(action, expected: .registerMethod)
        case (.mfaCode, _), (.registrationCode, _): throw ctx.wrongStep(action, expected: .submitCode)
        case (.registered, _): throw ctx.wrongStep(action, expected: .signIn)
        }
    }

    private func mfaChallenge(
        _ ct: ContinuationToken,
        methods: [AuthMethod],
        methodID: String?,
        _ ctx: FlowContext
    )
        throws(NativeAuthError) -> Transition
    {
        guard
            case .code(let next, let challenge) = try ctx.server.challenge(
                ct,
                methodID: methodID,
                context: .mfaChallenge
            )
        else { throw .unexpected("an MFA challenge answered with a password challenge") }
        var flow = self
        flow.state = .mfaCode(next, methods: methods, methodID: methodID, challenge: challenge)
        return Transition(next: .strongAuth(flow), status: .codeRequired(challenge))
    }

    private func register(
        _ ct: ContinuationToken,
        methods: [AuthMethod],
        contact: String,
        methodID: String?,
        current: String?,
        _ ctx: FlowContext
    ) throws(NativeAuthError) -> Transition {
        guard !contact.isEmpty, contact.utf8.count <= 320 else {
            throw .invalidArgument(
                "contact: required (the email address or phone number to register)",
                field: "contact"
            )
        }
        if let methodID, !methods.contains(where: { $0.id == methodID }) {
            throw .invalidArgument("method_id: not one of the flow's methods", field: "method_id")
        }
        guard let method = methods.first(where: { $0.id == (methodID ?? current) }) ?? methods.first else {
            throw .unexpected("registration without methods")
        }
        switch try ctx.server.registerChallenge(ct, method: method, target: contact) {
        case .preverified(let next):
            return try finishRegistration(ctx.server.registerContinue(next, code: nil), ctx)
        case .code(let next, let challenge):
            var flow = self
            flow.state = .registrationCode(
                next,
                methods: methods,
                methodID: method.id,
                contact: contact,
                challenge: challenge
            )
            return Transition(next: .strongAuth(flow), status: .codeRequired(challenge))
        }
    }

    /// The token request after a successful `register/v1.0/continue`. If it fails, the registration stays done: the
    /// flow moves to `registered`, and a retry (`sign_in`, or `submit_code` again) repeats only the token request —
    /// never `register/v1.0/continue`, whose continuation token the server has already consumed.
    private func finishRegistration(_ ct: ContinuationToken, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        do {
            let answer = try ctx.server.token(.continuation(ct, username: nil), scopes: scopes, claims: claims)
            return try ctx.redeem(answer, scopes: scopes, claims: claims)
        } catch {
            guard keepsFlow(error) else { throw error }
            var flow = self
            flow.state = .registered(ct)
            return .failed(after: .strongAuth(flow), error)
        }
    }
}
