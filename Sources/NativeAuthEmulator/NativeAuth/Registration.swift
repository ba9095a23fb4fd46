import NativeAuthJSON

/// Strong-auth (MFA method) registration during sign-in: `/register/v1.0/introspect`, `/challenge`, `/continue`.
extension NativeAuthService {
    func registerIntrospect(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            var (token, f) = try table.take(.registerIntrospect, r)
            f.stage = .registrationIntrospected
            token = table.advance(f, by: .registerIntrospect, from: token, r)
            return .json([
                "continuation_token": .string(token),
                "methods": [
                    [
                        "id": "email", "challenge_type": "oob", "challenge_channel": "email",
                        "login_hint": .string(maskEmail(f.username)),
                    ]
                ],
            ])
        }
    }

    func registerChallenge(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            var (token, f) = try table.take(.registerChallenge, r)
            if let t = form["challenge_type"], !t.split(separator: " ").contains("oob") {
                throw .registrationChallengeTypeUnsupported
            }
            if let ch = form["challenge_channel"], !ch.isEmpty, ch != "email" {
                throw .invalidVerificationContact(channel: ch)
            }
            guard let rawTarget = form["challenge_target"], isValidEmail(rawTarget) else {
                throw .invalidVerificationContact
            }
            let target = rawTarget.lowercased()
            if r.config.blockedContacts.contains(where: { $0.lowercased() == target }) {
                throw .verificationContactBlocked
            }
            f.registrationTarget = target
            if target == f.username {  // already verified when the user signed in with it
                f.stage = .registrationPreverified
                token = table.advance(f, by: .registerChallenge, from: token, r)
                return .json(["continuation_token": .string(token), "challenge_type": "preverified"])
            }
            return codeChallenge(
                f,
                .registerChallenge,
                stage: .registrationChallenge,
                to: target,
                purpose: "register",
                from: token,
                &table,
                r,
                labelKey: "challenge_target"
            )
        }
    }

    /// `grant_type` oob (a code sent to the new address) or continuation_token (the address is the username).
    func registerContinue(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let grant = form["grant_type"] ?? ""
            guard let step = NativeStep.at(.registerContinue, grant: grant) else { throw .unsupportedGrantType }
            var (token, f) = try table.take(step, r)
            if step == .registerOOB { try checkCode(f, r) }
            guard let target = f.registrationTarget, directory.user(f.username) != nil else {
                throw .invalidContinuationToken
            }
            directory.updateUser(f.username) { $0?.mfaEmail = target }
            f.stage = .readyForToken
            f.mfaSatisfied = true
            f.code = nil
            token = table.advance(f, by: step, from: token, r)
            return .json(["continuation_token": .string(token)])
        }
    }
}
