import NativeAuthJSON

/// Self-service password reset: `/resetpassword/v1.0/start`, `/challenge`, `/continue`, `/submit`,
/// `/poll_completion`.
extension NativeAuthService {
    func resetStart(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let (types, username) = try startRequest(r)
            guard let user = directory.user(username) else { throw .userNotFound }
            guard user.password != nil else { throw .userHasNoPassword }
            guard types.contains("oob") else { return Self.redirect("Password reset needs the oob challenge type.") }
            let f = newFlow(.reset, .resetStarted, username: username, types: types, r)
            return .json(["continuation_token": .string(table.advance(f, by: .resetStart, from: nil, r))])
        }
    }

    func resetChallenge(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            let sent = try challengeTypes(form, required: false)
            let (token, f) = try table.take(.resetChallenge, r)
            guard (sent ?? f.challengeTypes).contains("oob") else {
                return Self.redirect("Password reset needs the oob challenge type.")
            }
            return codeChallenge(
                f,
                .resetChallenge,
                stage: .resetCodeSent,
                to: f.username,
                purpose: "reset_password",
                from: token,
                &table,
                r
            )
        }
    }

    func resetContinue(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            guard form["grant_type"] == "oob" else { throw .unsupportedGrantType }
            var (token, f) = try table.take(.resetOOB, r)
            try checkCode(f, r)
            f.stage = .resetVerified
            f.code = nil
            token = table.advance(f, by: .resetOOB, from: token, r)
            return .json(["continuation_token": .string(token), "expires_in": 600])
        }
    }

    func resetSubmit(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            var (token, f) = try table.take(.resetSubmit, r)
            guard let pw = form["new_password"], !pw.isEmpty else { throw .missingParameter("new_password") }
            if let problem = AccountPolicy.passwordProblem(pw, user: directory.user(f.username), r.config) {
                throw problem
            }
            f.password = pw
            f.stage = .resetSubmitted
            f.pollsLeft = r.config.resetInProgressPolls
            f.submittedWith = token
            token = table.advance(f, by: .resetSubmit, from: token, r)
            return .json([
                "continuation_token": .string(token), "poll_interval": .int(Int64(r.config.resetPollInterval)),
            ])
        }
    }

    func resetPoll(_ form: [String: String], _ ctx: RequestContext) throws(ServiceError) -> EmulatorResponse {
        try transaction(form, ctx) { table, r throws(ServiceError) in
            var (token, f) = try table.take(.resetPoll, r)
            if f.pollsLeft > 0 {  // the same submit token is polled again
                f.pollsLeft -= 1
                table.keep(f, by: .resetPoll, under: token)
                return .json(["status": "in_progress"])
            }
            if let suberror = r.config.resetPollPolicyError {
                // Spec §2.3: MSAL iOS handles invalid_grant + password suberrors here (the policy may be evaluated
                // asynchronously) and goes back to "new password required" with the submit's continuation token.
                // UNCONFIRMED which token the service then accepts at /submit: both the token submit answered (what
                // MSAL iOS presents) and the one submit was called with stay usable, for one submission.
                table.reopenForSubmit(f, pollToken: token, r)
                throw .passwordPolicy(suberror)
            }
            if r.config.resetPollResult == "failed" {
                // Spec §2.3: after "failed" the app may submit the new password again (UNCONFIRMED: with which
                // token, and whether the answer carries one; the same tokens as above are accepted).
                table.reopenForSubmit(f, pollToken: token, r)
                return .json(["status": "failed"])
            }
            guard let pw = f.password else { throw .userNotFound }
            try changePassword(of: f.username, to: pw)
            f.password = nil
            if r.config.resetCompletionWithoutToken {  // spec §2.3: the token "may be absent"
                table.forget(token)
                return .json(["status": "succeeded"])
            }
            f.stage = .readyForToken
            token = table.advance(f, by: .resetPoll, from: token, r)
            return .json(["status": "succeeded", "continuation_token": .string(token)])
        }
    }

    /// Sets the account's password (the old one joins its previous passwords) and ends its sessions: refresh tokens
    /// and browser sessions.
    private func changePassword(of email: String, to pw: String) throws(ServiceError) {
        try directory.updateUser(email) { user throws(ServiceError) in
            guard var u = user else { throw .userNotFound }
            if let old = u.password { u.previousPasswords.append(old) }
            u.password = pw
            user = u
        }
        revocation.revoke(email)  // a password change ends existing sessions
    }
}
