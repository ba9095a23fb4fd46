import NativeAuthJSON

/// Sign-up: `/signup/v1.0/start`, `/challenge`, `/continue`.
extension NativeAuthService {
    func signUpStart(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let (types, username) = try startRequest(r)
            guard r.config.signUpEnabled else { throw .signUpDisabled }
            guard directory.user(username) == nil else { throw .userAlreadyExists }
            let needsPassword = r.config.signUpMethod == "email_password"
            if needsPassword && !(types.contains("password") && types.contains("oob")) {
                return Self.redirect("The sign-up user flow needs the password and oob challenge types.")
            }
            if !types.contains("oob") { return Self.redirect("The sign-up user flow needs the oob challenge type.") }
            var f = newFlow(.signUp, .signUpStarted, username: username, types: types, r)
            if let pw = form["password"], !pw.isEmpty, needsPassword {
                if let problem = AccountPolicy.passwordProblem(pw, user: nil, r.config) { throw problem }
                f.password = pw
            }
            let attrs = try AccountPolicy.parseAttributes(form["attributes"])
            let bad = AccountPolicy.invalidAttributes(attrs, r.config)
            if !bad.isEmpty { throw .attributeValidationFailed(bad, token: nil) }
            f.attributes = attrs
            return .json(["continuation_token": .string(table.advance(f, by: .signUpStart, from: nil, r))])
        }
    }

    func signUpChallenge(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let sent = try challengeTypes(form, required: false)
            var (token, f) = try table.take(.signUpChallenge, r)
            let types = sent ?? f.challengeTypes
            if f.stage == .signUpCredentialRequired {
                guard types.contains("password") else {
                    return Self.redirect("The sign-up user flow needs the password challenge type.")
                }
                f.stage = .signUpPasswordChallenge
                return .json([
                    "continuation_token": .string(table.advance(f, by: .signUpChallenge, from: token, r)),
                    "challenge_type": "password",
                ])
            }
            guard types.contains("oob") else {
                return Self.redirect("The sign-up user flow needs the oob challenge type.")
            }
            return codeChallenge(
                f,
                .signUpChallenge,
                stage: .signUpCodeSent,
                to: f.username,
                purpose: "sign_up",
                from: token,
                &table,
                r,
                interval: 300
            )
        }
    }

    /// `grant_type` oob (the code), password or attributes; then what is still missing, else the account.
    func signUpContinue(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let grant = form["grant_type"] ?? ""
            guard !grant.isEmpty else { throw .missingParameter("grant_type") }
            guard let step = NativeStep.at(.signUpContinue, grant: grant) else { throw .unsupportedGrantType }
            var (token, f) = try table.take(step, r)
            switch step {
            case .signUpOOB:
                try checkCode(f, r)
                f.verified = true
                f.code = nil
            case .signUpPassword:
                guard let pw = form["password"], !pw.isEmpty else { throw .missingParameter("password") }
                if let problem = AccountPolicy.passwordProblem(pw, user: nil, r.config) { throw problem }
                f.password = pw
            default:
                let attrs = try AccountPolicy.parseAttributes(form["attributes"])
                let bad = AccountPolicy.invalidAttributes(attrs, r.config)
                if !bad.isEmpty { throw .attributeValidationFailed(bad, token: token) }  // same token stays usable
                f.attributes.merge(attrs) { _, new in new }
            }
            try askForWhatIsMissing(&f, step, &token, &table, r)
            // Create the account.
            directory.setUser(
                AccountPolicy.newUser(email: f.username, password: f.password, attributes: f.attributes),
                for: f.username
            )
            counters.add(.usersSignedUp)
            if r.config.signUpCompletionWithoutToken {  // spec §2.2.3: completed, no automatic sign-in
                table.forget(token)
                return .json([:])
            }
            f.stage = .readyForToken
            f.password = nil
            token = table.advance(f, by: step, from: token, r)
            return .json([
                "continuation_token": .string(token),
                "expires_in": .int(Int64(r.config.lifetimes.continuationToken)),
            ])
        }
    }

    /// Throws `credential_required` or `attributes_required` (with a new continuation token) while the sign-up lacks
    /// a password (email+password sign-up) or a required attribute.
    private func askForWhatIsMissing(
        _ f: inout Flow,
        _ step: NativeStep,
        _ token: inout String,
        _ table: inout FlowTable,
        _ r: NativeRequest
    ) throws(ServiceError) {
        if r.config.signUpMethod == "email_password" && f.password == nil {
            f.stage = .signUpCredentialRequired
            token = table.advance(f, by: step, from: token, r)
            throw .credentialRequired.with(["continuation_token": .string(token)])
        }
        let missing = r.config.signUpAttributes.filter { $0.required && (f.attributes[$0.name] ?? "").isEmpty }
        guard !missing.isEmpty else { return }
        f.stage = .signUpAttributesRequired
        token = table.advance(f, by: step, from: token, r)
        let list: [JSONValue] = missing.map { d in
            var o: [String: JSONValue] = ["name": .string(d.name), "type": .string(d.type), "required": true]
            if let rx = d.regex { o["options"] = ["regex": .string(rx)] }
            return .object(o)
        }
        throw .attributesRequired.with(["continuation_token": .string(token), "required_attributes": .array(list)])
    }
}
