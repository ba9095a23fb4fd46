/// The native-auth endpoints, as paths below the tenant.
enum NativeEndpoint: String, CaseIterable {
    case initiate = "oauth2/v2.0/initiate"
    case challenge = "oauth2/v2.0/challenge"
    case introspect = "oauth2/v2.0/introspect"
    case token = "oauth2/v2.0/token"
    case signUpStart = "signup/v1.0/start"
    case signUpChallenge = "signup/v1.0/challenge"
    case signUpContinue = "signup/v1.0/continue"
    case resetStart = "resetpassword/v1.0/start"
    case resetChallenge = "resetpassword/v1.0/challenge"
    case resetContinue = "resetpassword/v1.0/continue"
    case resetSubmit = "resetpassword/v1.0/submit"
    case resetPoll = "resetpassword/v1.0/poll_completion"
    case registerIntrospect = "register/v1.0/introspect"
    case registerChallenge = "register/v1.0/challenge"
    case registerContinue = "register/v1.0/continue"

    /// The grants of `/oauth2/v2.0/token` that are native auth (the others are standard OAuth).
    static let nativeGrants: Set<String> = ["password", "oob", "mfa_oob", "continuation_token"]
}

/// A step of a native-auth flow: an endpoint, with the grant it is called with where that matters.
enum NativeStep: CaseIterable {
    case initiate, signInChallenge, signInIntrospect
    case passwordGrant, oobGrant, mfaOOBGrant, continuationTokenGrant
    case registerIntrospect, registerChallenge, registerOOB, registerPreverified
    case signUpStart, signUpChallenge, signUpOOB, signUpPassword, signUpAttributes
    case resetStart, resetChallenge, resetOOB, resetSubmit, resetPoll

    /// The step `endpoint` takes with `grant_type` `grant`, if any.
    static func at(_ endpoint: NativeEndpoint, grant: String?) -> NativeStep? {
        allCases.first { $0.transition.endpoint == endpoint && $0.transition.grant == grant }
    }
}

/// One row of the transition table: a step, the flows it takes (kind and stage of the continuation token's flow; a
/// start endpoint takes none), and the stages it moves them to (besides finishing them: tokens, or a completed
/// sign-up or reset without a token). A flow at any other stage is `invalid_request` AADSTS55200 "not valid for this
/// endpoint or step".
struct Transition {
    let step: NativeStep
    let endpoint: NativeEndpoint
    let grant: String?
    let kinds: Set<Flow.Kind>
    let from: Set<Flow.Stage>
    let to: Set<Flow.Stage>

    init(
        _ step: NativeStep,
        _ endpoint: NativeEndpoint,
        _ grant: String?,
        _ kinds: Set<Flow.Kind>,
        from: Set<Flow.Stage>,
        to: Set<Flow.Stage>
    ) {
        self.step = step
        self.endpoint = endpoint
        self.grant = grant
        self.kinds = kinds
        self.from = from
        self.to = to
    }
}

extension NativeStep {
    /// This step's row. Every step has one (NativeAuthEmulatorTests checks the table); a step without one would take
    /// no flow at no stage — refused as "not valid for this step", never a trap.
    var transition: Transition {
        Self.table[self] ?? Transition(self, .initiate, "-", [], from: [], to: [])
    }

    /// Steps with no row, or with more than one (the table keeps the first): what the table's test checks is empty.
    static var tableProblems: [String] {
        var problems: [String] = []
        for step in allCases {
            let rows = rows.filter { $0.step == step }.count
            if rows != 1 { problems.append("\(step): \(rows) rows") }
        }
        return problems
    }

    /// The transition table: which endpoint is allowed at which flow stage, and where it leads.
    static let table: [NativeStep: Transition] = Dictionary(rows.map { ($0.step, $0) }, uniquingKeysWith: { a, _ in a })

    static let rows: [Transition] = [
        // Sign-in. The token grants lead to MFA or registration when the user needs one.
        Transition(.initiate, .initiate, nil, [.signIn], from: [], to: [.initiated]),
        Transition(
            .signInChallenge,
            .challenge,
            nil,
            [.signIn],
            from: [.initiated, .oobChallenge, .mfaRequired, .mfaIntrospected, .mfaChallenge],
            to: [.passwordChallenge, .oobChallenge, .mfaChallenge]
        ),
        // Introspection lists the methods again at any MFA stage: after `/challenge` answered `introspect_required`
        // (MSAL Android introspects with the token it sent to `/challenge`). UNCONFIRMED beyond the first call.
        Transition(
            .signInIntrospect,
            .introspect,
            nil,
            [.signIn],
            from: [.mfaRequired, .mfaIntrospected, .mfaChallenge],
            to: [.mfaIntrospected]
        ),
        Transition(
            .passwordGrant,
            .token,
            "password",
            [.signIn],
            from: [.passwordChallenge],
            to: [.mfaRequired, .registrationRequired]
        ),
        Transition(
            .oobGrant,
            .token,
            "oob",
            [.signIn],
            from: [.oobChallenge, .mfaChallenge],
            to: [.oobChallenge, .mfaChallenge, .mfaRequired, .registrationRequired]
        ),
        Transition(.mfaOOBGrant, .token, "mfa_oob", [.signIn], from: [.mfaChallenge], to: [.mfaChallenge]),
        Transition(
            .continuationTokenGrant,
            .token,
            "continuation_token",
            [.signIn, .signUp, .reset],
            from: [.readyForToken],
            to: [.mfaRequired, .registrationRequired]
        ),
        // Strong-auth registration: sign-in flows of users who must register an MFA method.
        Transition(
            .registerIntrospect,
            .registerIntrospect,
            nil,
            [.signIn],
            from: [.registrationRequired],
            to: [.registrationIntrospected]
        ),
        Transition(
            .registerChallenge,
            .registerChallenge,
            nil,
            [.signIn],
            from: [.registrationIntrospected, .registrationChallenge],
            to: [.registrationPreverified, .registrationChallenge]
        ),
        Transition(
            .registerOOB,
            .registerContinue,
            "oob",
            [.signIn],
            from: [.registrationChallenge],
            to: [.readyForToken]
        ),
        Transition(
            .registerPreverified,
            .registerContinue,
            "continuation_token",
            [.signIn],
            from: [.registrationPreverified],
            to: [.readyForToken]
        ),
        // Sign-up. /continue asks for what is still missing (credential, attributes), else makes the account.
        Transition(.signUpStart, .signUpStart, nil, [.signUp], from: [], to: [.signUpStarted]),
        Transition(
            .signUpChallenge,
            .signUpChallenge,
            nil,
            [.signUp],
            from: [.signUpStarted, .signUpCodeSent, .signUpCredentialRequired],
            to: [.signUpPasswordChallenge, .signUpCodeSent]
        ),
        Transition(.signUpOOB, .signUpContinue, "oob", [.signUp], from: [.signUpCodeSent], to: signUpNext),
        Transition(
            .signUpPassword,
            .signUpContinue,
            "password",
            [.signUp],
            from: [.signUpPasswordChallenge, .signUpCredentialRequired],
            to: signUpNext
        ),
        Transition(
            .signUpAttributes,
            .signUpContinue,
            "attributes",
            [.signUp],
            from: [.signUpAttributesRequired],
            to: signUpNext
        ),
        // Password reset. A poll answers in_progress (same token), then succeeded, or reopens the submit step.
        Transition(.resetStart, .resetStart, nil, [.reset], from: [], to: [.resetStarted]),
        Transition(
            .resetChallenge,
            .resetChallenge,
            nil,
            [.reset],
            from: [.resetStarted, .resetCodeSent],
            to: [.resetCodeSent]
        ),
        Transition(.resetOOB, .resetContinue, "oob", [.reset], from: [.resetCodeSent], to: [.resetVerified]),
        Transition(.resetSubmit, .resetSubmit, nil, [.reset], from: [.resetVerified], to: [.resetSubmitted]),
        Transition(
            .resetPoll,
            .resetPoll,
            nil,
            [.reset],
            from: [.resetSubmitted],
            to: [.resetSubmitted, .resetVerified, .readyForToken]
        ),
    ]

    private static let signUpNext: Set<Flow.Stage> = [
        .signUpCredentialRequired, .signUpAttributesRequired, .readyForToken,
    ]
}
