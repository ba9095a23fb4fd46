import NativeAuthJSON

/// Strong-auth (MFA method) registration during sign-in: `/register/v1.0/introspect`, `/challenge`, `/continue`.
extension NativeAuthService {
    func registerIntrospect(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            var (token, f) = try table.take(.registerIntrospect, r)
            f.stage = .registrationIntrospected
            token = table.advance(f, by: .registerIntrospect, from: token, r)
            // Email and (since 2025-09) SMS; the SMS method has no address to hint at until one is registered.
            return .json([
                "continuation_token": .string(token),
                "methods": [
                    [
                        "id": "email", "challenge_type": "oob", "challenge_channel": "email",
                        "login_hint": .string(maskEmail(f.username)),
                    ],
                    ["id": "sms", "challenge_type": "oob", "challenge_channel": "sms"],
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
            let channel: StrongMethod.Channel
            switch form["challenge_channel"] ?? "" {
            case "", "email": channel = .email
            case "sms": channel = .sms
            case let other: throw .invalidVerificationContact(channel: other)
            }
            let rawTarget = form["challenge_target"] ?? ""
            guard channel == .email ? isValidEmail(rawTarget) : isValidPhone(rawTarget) else {
                throw .invalidVerificationContact
            }
            let target = channel == .email ? rawTarget.lowercased() : rawTarget
            if r.config.isBlocked(target) { throw .verificationContactBlocked }
            f.registrationTarget = target
            f.registrationChannel = channel
            if channel == .email && target == f.username {  // already verified when the user signed in with it
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
                labelKey: "challenge_target",
                channel: channel
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
            let channel = f.registrationChannel
            directory.updateUser(f.username) { u in
                if channel == .sms { u?.mfaPhone = target } else { u?.mfaEmail = target }
            }
            f.stage = .readyForToken
            f.mfaSatisfied = true
            f.code = nil
            token = table.advance(f, by: step, from: token, r)
            return .json(["continuation_token": .string(token)])
        }
    }
}
