/// One native-auth flow, keyed by its current continuation token.
struct Flow {
    enum Kind: String {
        case signIn = "sign_in"
        case signUp = "sign_up"
        case reset = "reset_password"
    }
    /// Where a flow is (`Transitions.swift` says which endpoint takes it at which stage).
    enum Stage: String {
        // sign-in
        case initiated, passwordChallenge, oobChallenge, mfaRequired, mfaIntrospected, mfaChallenge
        case registrationRequired, registrationIntrospected, registrationChallenge, registrationPreverified
        case readyForToken  // after sign-up, reset or registration: redeemable with grant_type=continuation_token
        // sign-up
        case signUpStarted, signUpCodeSent, signUpCredentialRequired, signUpPasswordChallenge, signUpAttributesRequired
        // reset password
        case resetStarted, resetCodeSent, resetVerified, resetSubmitted
    }

    var kind: Kind
    var stage: Stage
    var clientID: String
    var username: String
    var challengeTypes: Set<String>
    var capabilities: Set<String>
    var expires: Double = 0
    var code: String? = nil
    var codeExpires: Double = 0
    var codeTarget: String? = nil
    var password: String? = nil
    var attributes: [String: String] = [:]
    var verified = false
    var pollsLeft = 0
    var registrationTarget: String? = nil
    var registrationChannel = StrongMethod.Channel.email
    /// Skip MFA checks when redeemed (just registered a method).
    var mfaSatisfied = false
    /// The continuation token `/resetpassword/v1.0/submit` was called with (see `FlowTable.reopenForSubmit`).
    var submittedWith: String? = nil
    /// Every token this flow is stored under; using one retires them all.
    var aliases: [String] = []
}

/// The flows in progress, by continuation token. Every change of stage goes through `advance` or `keep`, which check
/// it against the transition table.
struct FlowTable {
    private(set) var flows: [String: Flow] = [:]

    /// The flow behind the request's `continuation_token`, if `step` takes it: the right kind and stage (the
    /// transition table), the same client, not expired (an expired one is forgotten).
    mutating func take(_ step: NativeStep, _ r: NativeRequest) throws(ServiceError) -> (token: String, flow: Flow) {
        guard let token = r.form["continuation_token"], !token.isEmpty else {
            throw .missingParameter("continuation_token")
        }
        guard let f = flows[token] else { throw .invalidContinuationToken }
        guard f.expires > r.now else {
            flows.removeValue(forKey: token)
            throw .expiredContinuationToken
        }
        let t = step.transition
        guard t.kinds.contains(f.kind), t.from.contains(f.stage), f.clientID == r.client.clientID else {
            throw .continuationTokenWrongStep
        }
        return (token, f)
    }

    /// Stores `flow` (moved on by `step`) under a fresh continuation token, retiring `old`; returns the token.
    mutating func advance(_ flow: Flow, by step: NativeStep, from old: String?, _ r: NativeRequest) -> String {
        assert(step.transition.to.contains(flow.stage), "\(step) does not lead to \(flow.stage)")
        if let old { forget(old) }
        var f = flow
        f.aliases = []
        f.expires = r.now + Double(r.config.lifetimes.continuationToken)
        let token = Ids.token("CT.")
        flows[token] = f
        return token
    }

    /// Stores `flow` back under the same token (a code used up, a poll counted).
    mutating func keep(_ flow: Flow, by step: NativeStep, under token: String) {
        assert(step.transition.to.contains(flow.stage), "\(step) does not lead to \(flow.stage)")
        flows[token] = flow
    }

    /// Retires a continuation token, and every other token its flow is stored under.
    mutating func forget(_ token: String) {
        guard let f = flows.removeValue(forKey: token) else { return }
        for alias in f.aliases { flows.removeValue(forKey: alias) }
    }

    /// After a failed (or policy-refused) reset: the flow can take a new password again, under the token submit
    /// answered and the one submit was called with (one submission through either retires both).
    mutating func reopenForSubmit(_ flow: Flow, pollToken: String, _ r: NativeRequest) {
        var f = flow
        f.stage = .resetVerified
        assert(NativeStep.resetPoll.transition.to.contains(f.stage))
        f.password = nil
        f.pollsLeft = 0
        f.expires = r.now + Double(r.config.lifetimes.continuationToken)
        f.aliases = [pollToken] + (f.submittedWith.map { [$0] } ?? [])
        f.submittedWith = nil
        for key in f.aliases { flows[key] = f }
    }
}
