public import NativeAuthJSON

/// Sign-in, sign-up, password reset, MFA and strong-auth registration (spec §2) as state machines whose states are
/// returned to the caller as documents and continued with `submit`.
extension NativeAuthClient {
    var challengeTypes: String { configuration.challengeTypeParameter }

    private func startFields(_ username: String) -> [(String, String)] {
        var f = [("username", username), ("challenge_type", challengeTypes)]
        if let caps = configuration.capabilitiesParameter { f.append(("capabilities", caps)) }
        return f
    }

    private func requireOK(_ answer: ServerAnswer, _ context: ErrorContext) throws(NativeAuthError) -> JSONValue {
        switch answer {
        case .ok(let body): return body
        case .redirect(let reason): throw NativeAuthError.browserRequired(reason)
        case .error(let d, let body): throw NativeAuthError.from(server: d, body: body, context: context)
        }
    }

    private func continuationToken(_ body: JSONValue, _ what: String) throws(NativeAuthError) -> String {
        guard let t = body["continuation_token"]?.stringValue, !t.isEmpty else { throw .unexpected("\(what) without continuation_token") }
        return t
    }

    /// Validates an `oob` challenge answer (spec §2.1.2: iOS requires these fields) and describes it.
    private func codeChallenge(_ body: JSONValue, targetKey: String = "challenge_target_label") throws(NativeAuthError) -> JSONValue {
        guard body["challenge_type"]?.stringValue == "oob", let target = body[targetKey]?.stringValue,
              let channel = body["challenge_channel"]?.stringValue, let length = body["code_length"]?.intValue
        else { throw .unexpected("an oob challenge without \(targetKey), challenge_channel or code_length") }
        var o: [String: JSONValue] = ["sent_to": .string(target), "channel": .string(channel), "code_length": .int(length)]
        if let interval = body["interval"]?.intValue { o["resend_interval"] = .int(interval) }
        return .object(o)
    }

    private func doc(_ status: String, flow: String?, _ state: FlowState, _ extra: JSONValue = .object([:])) -> JSONValue {
        var o = extra.objectValue ?? [:]
        o["v"] = 1
        o["status"] = .string(status)
        o["flow_type"] = .string(state.kind.rawValue)
        if let flow { o["flow"] = .string(flow) }
        return .object(o)
    }

    /// Runs one step of a stored flow: check it out, run `step`, keep or forget it by the outcome.
    private func withFlow(_ id: String, _ step: (inout FlowState) throws(NativeAuthError) -> FlowOutcome) throws(NativeAuthError) -> JSONValue {
        var state = try flows.checkout(id, now: clock.now())
        let original = state
        do {
            let outcome = try step(&state)
            flows.checkin(id, outcome.keep ? state : nil, now: clock.now())
            return doc(outcome.status, flow: outcome.keep ? id : nil, state, outcome.details)
        } catch {
            // A retryable answer, or an action the flow is not waiting for: the flow stays as it was.
            let keep = keepsFlow(error) || error.extra["expected"] != nil
            flows.checkin(id, keep ? original : nil, now: clock.now())
            var e = error
            if keep { e.extra["flow"] = .string(id) }
            throw e
        }
    }

    /// Starts a flow with its first state and returns the state's document.
    private func begin(_ state: FlowState, _ outcome: FlowOutcome) -> JSONValue {
        guard outcome.keep else { return doc(outcome.status, flow: nil, state, outcome.details) }
        let id = flows.create(state, now: clock.now())
        flows.checkin(id, state, now: clock.now())
        return doc(outcome.status, flow: id, state, outcome.details)
    }

    struct FlowOutcome {
        var status: String
        var keep: Bool
        var details: JSONValue = .object([:])
    }

    // MARK: - Sign-in (spec §2.1)

    /// `na_sign_in`: `{"username", "password"?, "scopes"?, "claims"?}`.
    public func signIn(_ request: JSONValue) throws(NativeAuthError) -> JSONValue {
        let f = try Validate.fields(request)
        let username = try Validate.username(f)
        let password = try Validate.password(f, required: false)
        let scopes = try Validate.scopes(f)
        let claims = try Validate.claims(f)
        logger.log(.info, "sign-in started")
        let start = try requireOK(api.post(.initiate, startFields(username)), .signInStart)
        let ct1 = try continuationToken(start, "initiate")
        let ch = try requireOK(api.post(.challenge, [("continuation_token", ct1), ("challenge_type", challengeTypes)]), .flowStep)
        var state = FlowState(kind: .signIn, step: .signInPassword, token: try continuationToken(ch, "challenge"), username: username,
                              scopes: scopes, claims: claims)
        switch ch["challenge_type"]?.stringValue {
        case "password":
            guard let password else { return begin(state, FlowOutcome(status: "password_required", keep: true)) }
            do {
                let outcome = try passwordGrant(&state, password)
                return begin(state, outcome)
            } catch {
                // Let the app retry the password on the same flow (the continuation token is still good).
                guard keepsFlow(error) else { throw error }
                let id = flows.create(state, now: clock.now())
                flows.checkin(id, state, now: clock.now())
                var e = error
                e.extra["flow"] = .string(id)
                throw e
            }
        case "oob":
            // An account without a password answers with a code even when a password was given (as iOS does).
            state.step = .signInCode
            state.challenge = try codeChallenge(ch)
            return begin(state, FlowOutcome(status: "code_required", keep: true, details: state.challenge))
        default:
            throw .unexpected("challenge_type \(ch["challenge_type"]?.stringValue ?? "missing")")
        }
    }

    private func tokenFields(_ state: FlowState, grant: String) -> [(String, String)] {
        var f = [("continuation_token", state.token), ("grant_type", grant), ("scope", requestScopes(state.scopes).joined(separator: " ")),
                 ("client_info", "1")]
        if let claims = state.claims { f.append(("claims", claims)) }
        return f
    }

    private func passwordGrant(_ state: inout FlowState, _ password: String) throws(NativeAuthError) -> FlowOutcome {
        var fields = tokenFields(state, grant: "password")
        fields += [("password", password), ("username", state.username), ("challenge_type", challengeTypes)]
        return try tokenAnswer(api.post(.token, fields), &state)
    }

    /// What `/token` answered in a flow: tokens, or MFA / registration needed (spec §2.1.3, §2.1.5, §2.4).
    private func tokenAnswer(_ answer: ServerAnswer, _ state: inout FlowState) throws(NativeAuthError) -> FlowOutcome {
        switch answer {
        case .ok(let body):
            let signedIn = try tokens.acceptSignIn(body, requestedScopes: state.scopes)
            logger.log(.info, "signed in")
            return FlowOutcome(status: "signed_in", keep: false, details: signedIn)
        case .redirect(let reason):
            throw NativeAuthError.browserRequired(reason)
        case .error(let d, let body):
            // MFA (a method is registered) or JIT registration (none is): list the methods (spec §2.1.5, §2.4).
            let next: (Endpoint, FlowState.Step, String)? = switch d.suberror {
            case "mfa_required": (.introspect, .mfaSelect, "mfa_required")
            case "registration_required": (.registerIntrospect, .registrationSelect, "registration_required")
            default: nil
            }
            if let (endpoint, step, status) = next, let ct = body["continuation_token"]?.stringValue {
                let intro = try requireOK(api.post(endpoint, [("continuation_token", ct)]), .flowStep)
                guard let methods = intro["methods"]?.arrayValue, !methods.isEmpty else { throw .unexpected("\(endpoint.rawValue) without methods") }
                state.kind = .signIn
                state.step = step
                state.token = try continuationToken(intro, endpoint.rawValue)
                state.methods = methods
                return FlowOutcome(status: status, keep: true, details: ["methods": .array(methods.map(describeMethod))])
            }
            throw NativeAuthError.from(server: d, body: body, context: .flowStep)
        }
    }

    private func describeMethod(_ m: JSONValue) -> JSONValue {
        var o: [String: JSONValue] = [:]
        for (k, name) in [("id", "id"), ("challenge_channel", "channel"), ("login_hint", "login_hint"), ("challenge_type", "challenge_type")] {
            if let v = m[k]?.stringValue { o[name] = .string(v) }
        }
        return .object(o)
    }

    // MARK: - Sign-up (spec §2.2)

    /// `na_sign_up`: `{"username", "password"?, "attributes"?}`.
    public func signUp(_ request: JSONValue) throws(NativeAuthError) -> JSONValue {
        let f = try Validate.fields(request)
        let username = try Validate.username(f)
        let password = try Validate.password(f, required: false)
        let attributes = try Validate.attributes(f, required: false)
        logger.log(.info, "sign-up started")
        var fields = startFields(username)
        if let password { fields.append(("password", password)) }
        if let attributes { fields.append(("attributes", JSONValue.object(attributes.mapValues { .string($0) }).serialized())) }
        let start = try requireOK(api.post(.signUpStart, fields), .signUpStart)
        var state = FlowState(kind: .signUp, step: .signUpCode, token: try continuationToken(start, "sign-up start"), username: username)
        let outcome = try signUpChallenge(&state)
        return begin(state, outcome)
    }

    private func signUpChallenge(_ state: inout FlowState) throws(NativeAuthError) -> FlowOutcome {
        let ch = try requireOK(api.post(.signUpChallenge, [("continuation_token", state.token), ("challenge_type", challengeTypes)]), .flowStep)
        state.token = try continuationToken(ch, "sign-up challenge")
        switch ch["challenge_type"]?.stringValue {
        case "oob":
            state.step = .signUpCode
            state.challenge = try codeChallenge(ch)
            return FlowOutcome(status: "code_required", keep: true, details: state.challenge)
        case "password" where state.step == .signUpPassword:
            return FlowOutcome(status: "password_required", keep: true)
        default:
            throw .unexpected("sign-up challenge_type \(ch["challenge_type"]?.stringValue ?? "missing")")
        }
    }

    /// After each `signup/continue` (spec §2.2.3).
    private func signUpNext(_ answer: ServerAnswer, _ state: inout FlowState) throws(NativeAuthError) -> FlowOutcome {
        switch answer {
        case .ok(let body):
            state.step = .signUpCompleted
            state.token = try continuationToken(body, "sign-up continue")
            logger.log(.info, "sign-up completed")
            return FlowOutcome(status: "sign_up_completed", keep: true)
        case .redirect(let reason):
            throw NativeAuthError.browserRequired(reason)
        case .error(let d, let body):
            switch d.error {
            case "credential_required":
                state.token = try continuationToken(body, "credential_required")
                state.step = .signUpPassword
                return try signUpChallenge(&state)
            case "attributes_required":
                state.token = try continuationToken(body, "attributes_required")
                guard let list = body["required_attributes"]?.arrayValue, !list.isEmpty else {
                    throw .unexpected("attributes_required without required_attributes")
                }
                state.step = .signUpAttributes
                state.requiredAttributes = .array(list.map { a in
                    var o: [String: JSONValue] = ["name": a["name"] ?? .null, "type": a["type"] ?? "string",
                                                  "required": a["required"] ?? true]
                    if let r = a["options"]?["regex"] { o["regex"] = r }
                    return .object(o)
                })
                return FlowOutcome(status: "attributes_required", keep: true, details: ["required_attributes": state.requiredAttributes])
            default:
                if let ct = body["continuation_token"]?.stringValue { state.token = ct }
                throw NativeAuthError.from(server: d, body: body, context: .flowStep)
            }
        }
    }

    // MARK: - Password reset (spec §2.3)

    /// `na_reset_password`: `{"username"}`.
    public func resetPassword(_ request: JSONValue) throws(NativeAuthError) -> JSONValue {
        let f = try Validate.fields(request)
        let username = try Validate.username(f)
        logger.log(.info, "password reset started")
        let start = try requireOK(api.post(.resetStart, startFields(username)), .resetStart)
        var state = FlowState(kind: .resetPassword, step: .resetCode, token: try continuationToken(start, "reset start"), username: username)
        let outcome = try resetChallenge(&state)
        return begin(state, outcome)
    }

    private func resetChallenge(_ state: inout FlowState) throws(NativeAuthError) -> FlowOutcome {
        let ch = try requireOK(api.post(.resetChallenge, [("continuation_token", state.token), ("challenge_type", challengeTypes)]), .flowStep)
        state.token = try continuationToken(ch, "reset challenge")
        state.step = .resetCode
        state.challenge = try codeChallenge(ch)
        return FlowOutcome(status: "code_required", keep: true, details: state.challenge)
    }

    /// Submits the new password, then polls `poll_completion` (spec §2.3: as iOS, at most 5 more polls).
    private func resetSubmit(_ state: inout FlowState, _ password: String) throws(NativeAuthError) -> FlowOutcome {
        let submit = try requireOK(api.post(.resetSubmit, [("continuation_token", state.token), ("new_password", password)]), .flowStep)
        let pollToken = try continuationToken(submit, "reset submit")
        let interval = min(10, max(0, Double(submit["poll_interval"]?.intValue ?? 2)))
        for attempt in 0..<6 {
            if attempt > 0 { clock.sleep(interval) }
            let poll = try requireOK(api.post(.resetPoll, [("continuation_token", pollToken)]), .flowStep)
            switch poll["status"]?.stringValue {
            case "succeeded":
                state.step = .resetCompleted
                state.token = poll["continuation_token"]?.stringValue ?? ""
                logger.log(.info, "password reset completed")
                return FlowOutcome(status: "password_reset_completed", keep: true)
            case "failed":
                throw NativeAuthError(.server, "The server could not reset the password.")
            case "in_progress", "not_started":
                continue
            default:
                throw .unexpected("poll_completion status \(poll["status"]?.stringValue ?? "missing")")
            }
        }
        throw NativeAuthError(.server, "The password reset did not complete in time.")
    }

    // MARK: - Continuing a flow

    /// `na_flow_submit`: `{"flow", "action"?, …}` — one action on a flow a previous result returned.
    public func submit(_ request: JSONValue) throws(NativeAuthError) -> JSONValue {
        let f = try Validate.fields(request)
        guard let id = try Validate.wrap({ () throws(JSONFieldError) in try f.optionalString("flow") }), !id.isEmpty else {
            throw NativeAuthError(.invalidArgument, "flow: required (the \"flow\" of a previous result)", extra: ["field": "flow"])
        }
        var action = try Validate.wrap { () throws(JSONFieldError) in try f.optionalString("action") }
        if action == nil {
            if f.contains("code") { action = "submit_code" }
            else if f.contains("password") { action = "submit_password" }
            else if f.contains("attributes") { action = "submit_attributes" }
        }
        guard let action else {
            throw NativeAuthError(.invalidArgument, "action: required (submit_code, resend_code, submit_password, submit_attributes, request_challenge, register_method, sign_in, cancel)",
                                  extra: ["field": "action"])
        }
        // Arguments are validated before the flow is touched.
        var code: String? = nil
        var password: String? = nil
        var attributes: [String: String]? = nil
        switch action {
        case "submit_code":
            guard let c = try Validate.wrap({ () throws(JSONFieldError) in try f.optionalString("code") }), !c.isEmpty, c.utf8.count <= 64 else {
                throw NativeAuthError(.invalidCode, "The code is empty or too long.", extra: ["field": "code", "flow": .string(id)])
            }
            code = c
        case "submit_password":
            password = try Validate.password(f, required: true)
        case "submit_attributes":
            attributes = try Validate.attributes(f, required: true)
        case "cancel":
            _ = try? flows.checkout(id, now: clock.now())
            flows.checkin(id, nil, now: clock.now())
            return ["v": 1, "status": "cancelled"]
        case "resend_code", "request_challenge", "register_method", "sign_in":
            break
        default:
            throw NativeAuthError(.invalidArgument, "action: unknown action \"\(action.prefix(40))\"", extra: ["field": "action"])
        }
        let methodID = try Validate.wrap { () throws(JSONFieldError) in try f.optionalString("method_id") }
        let contact = try Validate.wrap { () throws(JSONFieldError) in try f.optionalString("contact") }
        let newScopes = f.contains("scopes") ? try Validate.scopes(f) : nil
        let newClaims = try Validate.claims(f)

        return try withFlow(id) { (state: inout FlowState) throws(NativeAuthError) -> FlowOutcome in
            func wrongStep() -> NativeAuthError {
                NativeAuthError(.flowInvalid, "\(action) is not possible now: the flow is waiting for \(expected(state.step)).",
                                extra: ["expected": .string(expected(state.step))])
            }
            switch (action, state.step) {
            // codes
            case ("submit_code", .signInCode):
                return try tokenAnswer(api.post(.token, tokenFields(state, grant: "oob") + [("oob", code ?? "")]), &state)
            case ("submit_code", .mfaCode):
                return try tokenAnswer(api.post(.token, tokenFields(state, grant: "mfa_oob") + [("oob", code ?? "")]), &state)
            case ("submit_code", .signUpCode):
                return try signUpNext(api.post(.signUpContinue, [("continuation_token", state.token), ("grant_type", "oob"), ("oob", code ?? "")]), &state)
            case ("submit_code", .resetCode):
                let body = try requireOK(api.post(.resetContinue, [("continuation_token", state.token), ("grant_type", "oob"), ("oob", code ?? "")]), .flowStep)
                state.token = try continuationToken(body, "reset continue")
                state.step = .resetNewPassword
                return FlowOutcome(status: "password_required", keep: true)
            case ("submit_code", .registrationCode):
                let body = try requireOK(api.post(.registerContinue, [("continuation_token", state.token), ("grant_type", "oob"), ("oob", code ?? "")]), .flowStep)
                state.token = try continuationToken(body, "register continue")
                return try tokenAnswer(api.post(.token, tokenFields(state, grant: "continuation_token")), &state)
            // resend
            case ("resend_code", .signInCode):
                let ch = try requireOK(api.post(.challenge, [("continuation_token", state.token), ("challenge_type", challengeTypes)]), .flowStep)
                state.token = try continuationToken(ch, "challenge")
                state.challenge = try codeChallenge(ch)
                return FlowOutcome(status: "code_required", keep: true, details: state.challenge)
            case ("resend_code", .signUpCode):
                return try signUpChallenge(&state)
            case ("resend_code", .resetCode):
                return try resetChallenge(&state)
            case ("resend_code", .mfaCode), ("request_challenge", .mfaSelect), ("request_challenge", .mfaCode):
                var fields = [("continuation_token", state.token), ("challenge_type", challengeTypes)]
                let chosen = action == "resend_code" ? state.methodID : (methodID ?? state.methods.first?["id"]?.stringValue)
                if let chosen {
                    guard action == "resend_code" || state.methods.contains(where: { $0["id"]?.stringValue == chosen }) else {
                        throw NativeAuthError(.invalidArgument, "method_id: not one of the flow's methods", extra: ["field": "method_id"])
                    }
                    fields.append(("id", chosen))
                }
                let ch = try requireOK(api.post(.challenge, fields), .mfaChallenge)
                state.token = try continuationToken(ch, "MFA challenge")
                state.methodID = chosen
                state.step = .mfaCode
                state.challenge = try codeChallenge(ch)
                return FlowOutcome(status: "code_required", keep: true, details: state.challenge)
            case ("resend_code", .registrationCode), ("register_method", .registrationSelect), ("register_method", .registrationCode):
                let target = action == "resend_code" ? state.contact : contact
                guard let target, !target.isEmpty, target.utf8.count <= 320 else {
                    throw NativeAuthError(.invalidArgument, "contact: required (the email address or phone number to register)", extra: ["field": "contact"])
                }
                let method = state.methods.first(where: { $0["id"]?.stringValue == (methodID ?? state.methodID) }) ?? state.methods.first ?? .null
                if let m = methodID, !state.methods.contains(where: { $0["id"]?.stringValue == m }) {
                    throw NativeAuthError(.invalidArgument, "method_id: not one of the flow's methods", extra: ["field": "method_id"])
                }
                var fields = [("continuation_token", state.token), ("challenge_type", method["challenge_type"]?.stringValue ?? "oob"),
                              ("challenge_target", target)]
                if let ch = method["challenge_channel"]?.stringValue { fields.append(("challenge_channel", ch)) }
                let ch = try requireOK(api.post(.registerChallenge, fields), .registerChallenge)
                state.token = try continuationToken(ch, "register challenge")
                state.contact = target
                state.methodID = method["id"]?.stringValue
                if ch["challenge_type"]?.stringValue == "preverified" {
                    let body = try requireOK(api.post(.registerContinue, [("continuation_token", state.token), ("grant_type", "continuation_token")]), .flowStep)
                    state.token = try continuationToken(body, "register continue")
                    return try tokenAnswer(api.post(.token, tokenFields(state, grant: "continuation_token")), &state)
                }
                state.step = .registrationCode
                state.challenge = try codeChallenge(ch, targetKey: "challenge_target")
                return FlowOutcome(status: "code_required", keep: true, details: state.challenge)
            // passwords
            case ("submit_password", .signInPassword):
                return try passwordGrant(&state, password ?? "")
            case ("submit_password", .signUpPassword):
                return try signUpNext(api.post(.signUpContinue, [("continuation_token", state.token), ("grant_type", "password"),
                                                                 ("password", password ?? "")]), &state)
            case ("submit_password", .resetNewPassword):
                return try resetSubmit(&state, password ?? "")
            // attributes
            case ("submit_attributes", .signUpAttributes):
                let value = JSONValue.object((attributes ?? [:]).mapValues { .string($0) }).serialized()
                return try signUpNext(api.post(.signUpContinue, [("continuation_token", state.token), ("grant_type", "attributes"),
                                                                 ("attributes", value)]), &state)
            // sign in after sign-up / reset
            case ("sign_in", .signUpCompleted), ("sign_in", .resetCompleted):
                if let newScopes { state.scopes = newScopes }
                if let newClaims { state.claims = newClaims }
                guard !state.token.isEmpty else {
                    throw NativeAuthError(.flowInvalid, "The server did not allow an automatic sign-in; call na_sign_in.")
                }
                return try tokenAnswer(api.post(.token, tokenFields(state, grant: "continuation_token") + [("username", state.username)]), &state)
            default:
                throw wrongStep()
            }
        }
    }

    private func expected(_ step: FlowState.Step) -> String {
        switch step {
        case .signInPassword, .signUpPassword, .resetNewPassword: return "submit_password"
        case .signInCode, .mfaCode, .signUpCode, .resetCode, .registrationCode: return "submit_code"
        case .mfaSelect: return "request_challenge"
        case .registrationSelect: return "register_method"
        case .signUpAttributes: return "submit_attributes"
        case .signUpCompleted, .resetCompleted: return "sign_in"
        }
    }
}
