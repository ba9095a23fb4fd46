internal import NativeAuthHTTP
internal import NativeAuthJSON

/// The parameter an AADSTS90100 ("invalid request parameter") names. The service says which only in its
/// `error_description`; MSAL iOS (`MSALNativeAuthESTSApiErrorDescriptions`, sign-up start validator) and MSAL
/// Android / msal-browser tell a bad username from a bad client id by these phrases, and so does the library —
/// the one place it reads a description, which it still never repeats.
enum InvalidParameter: Sendable {
    case username, clientID

    init?(description: String?) {
        guard let d = description?.lowercased() else { return nil }
        if d.contains("username parameter is empty or not valid") {
            self = .username
        } else if d.contains("client_id parameter is empty or not valid") {
            self = .clientID
        } else {
            return nil
        }
    }
}

/// Where a server error came from; the same answer means different things at different steps.
enum ErrorContext: Sendable {
    case signInStart, signUpStart, resetStart
    /// A step of a flow (challenge, continue, token with a continuation token …).
    case flowStep
    /// The MFA challenge (access_denied means the method is blocked).
    case mfaChallenge
    /// JIT registration challenge (901001, provider_blocked_by_rep).
    case registerChallenge
    /// The refresh-token grant.
    case refresh
    /// The authorization-code and device-code grants and the device authorization request.
    case codeRedemption
}

extension NativeAuthError {
    /// Maps a server error envelope to the library's stable codes, from its `error`, `suberror` and `error_codes` —
    /// from the English `error_description` (which the server may reword, and which may name the user: it is never
    /// repeated) only where MSAL reads it too: which parameter an AADSTS90100 names (`InvalidParameter`). The table
    /// follows MSAL's validators: iOS `MSALNativeAuth*ResponseValidator` with `MSALNativeAuthESTSApiErrorCodes`
    /// (50034 user not found, 50126 invalid credentials, 500222 no password, 90100 invalid request parameter),
    /// Android `*ApiResult` and `ApiErrorResponseUtil` (400002, `invalid_oob_value`), and MSAL's silent-flow rules
    /// for the refresh grant. Anything else is `server`, with the server's fields attached.
    static func from(_ envelope: ServerErrorEnvelope, context: ErrorContext) -> NativeAuthError {
        var e = mapped(envelope, context: context)
        // A claims challenge goes back to the app with the interaction it asks for.
        if e.category == .interaction, let claims = envelope.claims { e.claims = claims }
        return e
    }

    private static func mapped(_ envelope: ServerErrorEnvelope, context: ErrorContext) -> NativeAuthError {
        let answer = ErrorAnswer(envelope)
        if let e = answer.unanswered() ?? answer.dpop(context) { return e }
        if context == .refresh, let e = answer.refreshGrant() { return e }
        if context == .codeRedemption, let e = answer.codeRedemption() { return e }
        return answer.flowState(context) ?? answer.credentials(context) ?? answer.other()
    }

    static func passwordMessage(_ sub: String) -> String {
        switch sub {
        case "password_too_short": return "The password is too short."
        case "password_too_long": return "The password is too long."
        case "password_too_weak": return "The password is too weak."
        case "password_recently_used": return "The password was used recently; choose another."
        case "password_banned": return "The password is too common; choose another."
        default: return "The password does not meet the policy."
        }
    }
}

extension NativeAuthError {
    /// Whether a refresh failure means the refresh token itself is dead, so it must not be presented again. MSAL
    /// iOS (MSIDDefaultSilentTokenRequest: "MSAL removes RTs on invalid_grant + bad token combination") and MSAL
    /// Android (BaseController: INVALID_GRANT with BAD_TOKEN) drop it only then; the AADSTS codes below also say
    /// the token itself expired or was revoked (700082 expired by inactivity, 70008 expired, 700084 expired for a
    /// single-page app, 50173 revoked). Consent, MFA and other interaction answers concern one scope set and keep
    /// it; network errors, 5xx and 429 never touch it.
    var meansRefreshTokenIsDead: Bool {
        guard let s = server else { return false }
        if s.error == "invalid_grant" && s.suberror == "bad_token" { return true }
        if s.error == "expired_refresh_token" { return true }
        let deadCodes: Set<Int64> = [700082, 70008, 700084, 50173]
        return s.errorCodes.contains(where: deadCodes.contains)
    }
}

extension NativeAuthError {
    /// A browser sign-in's redirect that carried `error` instead of a code (RFC 6749 §4.1.2.1): `access_denied` is
    /// the user's or the provider's refusal; `interaction_required`, `login_required` and `consent_required` (OIDC
    /// Core §3.1.2.6) say that `prompt=none` cannot complete; anything else is `server`.
    static func fromAuthorizationError(_ error: String) -> NativeAuthError {
        let details = ServerErrorDetails(error: error)
        switch error {
        case "access_denied":
            return NativeAuthError(.accessDenied, "The user or the provider refused the sign-in.", server: details)
        case "interaction_required", "login_required", "consent_required":
            return NativeAuthError(
                .interactionRequired,
                "The provider needs the user to interact (prompt=none cannot complete).",
                server: details
            )
        default:
            return NativeAuthError(
                .server,
                "The provider refused the sign-in (\(DisplayText.bounded(error))).",
                server: details
            )
        }
    }
}

/// What a protected API's `401` asks of the caller (its `WWW-Authenticate` header): a new token (RFC 6750
/// `invalid_token`), or a token with claims (Microsoft's claims challenge, `insufficient_claims`: Conditional
/// Access and Continuous Access Evaluation).
enum APIChallenge: Equatable {
    case invalidToken
    case insufficientClaims(ClaimsRequest)

    /// Claims texts longer than this are not asked for (the server's own claims challenges are bounded the same way).
    static let maxClaimsBytes = 8192

    /// The challenge of an API's `401`, if it is one the library answers (of the `Bearer` or, for DPoP-bound tokens,
    /// the `DPoP` scheme). A header that does not parse is read the way it was before the parser: `invalid_token`
    /// anywhere in it asks for a new token.
    init?(header: String?) {
        guard let header else { return nil }
        guard
            let parsed = try? WWWAuthenticate.parse(header, isJSONObject: ClaimsRequest.isJSONObject)
        else {
            if header.contains("invalid_token") { self = .invalidToken } else { return nil }
            return
        }
        if let claims = parsed.claims, claims.utf8.count <= Self.maxClaimsBytes {
            self = .insufficientClaims(ClaimsRequest(json: claims))
        } else if parsed.challenges.contains(where: {
            ($0.isScheme("Bearer") || $0.isScheme("DPoP")) && $0.params["error"] == "invalid_token"
        }) {
            self = .invalidToken
        } else {
            return nil
        }
    }
}

/// An error answer as the mapping reads it — its `error`, `suberror` and `error_codes` — and the rules, in the order
/// they apply (`NativeAuthError.from`); each rule's error carries the server's fields.
private struct ErrorAnswer {
    let envelope: ServerErrorEnvelope
    let d: ServerErrorDetails
    let error: String
    let sub: String
    let codes: [Int64]

    init(_ envelope: ServerErrorEnvelope) {
        self.envelope = envelope
        d = envelope.details
        error = d.error ?? ""
        sub = d.suberror ?? ""
        codes = d.errorCodes
    }

    func make(_ code: NativeAuthError.Code, _ message: String) -> NativeAuthError {
        NativeAuthError(code, message, server: d)
    }

    /// The server failed or throttled, or answered something that is not an OAuth error.
    func unanswered() -> NativeAuthError? {
        if let status = d.httpStatus, status >= 500 || status == 429 {
            return make(
                .server,
                status == 429
                    ? "The server is throttling requests; try again later."
                    : "The server failed (HTTP \(status)) and did not recover after a retry."
            )
        }
        if error.isEmpty {
            return make(
                .server,
                "The server answered with something that is not an OAuth error (HTTP \(d.httpStatus ?? 0))."
            )
        }
        return nil
    }

    func dpop(_ context: ErrorContext) -> NativeAuthError? {
        // DPoP (RFC 9449 §5, §8): a proof the provider refused, or a second nonce challenge after the one resend with
        // its nonce. A refresh token whose key the provider does not accept is of no more use to this client (its
        // key was replaced, or the provider lost the binding): the user signs in again, with a new key.
        if error == "invalid_dpop_proof" {
            return context == .refresh
                ? make(
                    .interactionRequired,
                    "The provider refused the DPoP proof of this account's key (invalid_dpop_proof); sign in again."
                )
                : make(.server, "The provider refused the request's DPoP proof (invalid_dpop_proof).")
        }
        if error == "use_dpop_nonce" {
            return make(.server, "The provider asked for a DPoP nonce again after one resend with the nonce it gave.")
        }
        return nil
    }

    /// The refresh-token grant: MSAL's silent-flow rules.
    func refreshGrant() -> NativeAuthError? {
        if error == "expired_refresh_token" || codes.contains(700082) {
            return make(.refreshTokenExpired, "The refresh token has expired; the user must sign in again.")
        }
        if error == "invalid_scope" { return make(.invalidScope, "The server refused the requested scopes.") }
        if codes.contains(50142) {
            return make(.passwordChangeRequired, "The user must change their password; sign in again.")
        }
        // MSAL's InteractionRequiredAuthError: interaction_required, consent_required, login_required, and
        // invalid_grant (bad_token, consent_required, basic_action, additional_action, message_only, …).
        if ["invalid_grant", "interaction_required", "consent_required", "login_required"].contains(error) {
            return make(
                .interactionRequired,
                sub == "bad_token"
                    ? "The refresh token was refused; the user must sign in again."
                    : "The server needs the user to sign in again for these scopes."
            )
        }
        return nil
    }

    /// The authorization-code and device-code grants.
    func codeRedemption() -> NativeAuthError? {
        switch error {
        case "access_denied", "authorization_declined":
            return make(.accessDenied, "The sign-in was refused.")
        case "interaction_required", "login_required", "consent_required":
            return make(.interactionRequired, "The server needs the user to sign in interactively.")
        case "invalid_grant":
            return make(
                .server,
                "The authorization code was refused (expired, already used, or the PKCE verifier does not match)."
            )
        case "expired_token":
            return make(.flowExpired, "The sign-in expired; start again.")
        default: break
        }
        return nil
    }

    /// The flow, the client or the user named cannot go on.
    func flowState(_ context: ErrorContext) -> NativeAuthError? {
        if error == "expired_token" || codes.contains(552003) {
            return make(.flowExpired, "The flow expired; start again.")
        }
        if codes.contains(55200) || codes.contains(55000) {  // "The continuation_token is invalid"
            return make(.flowInvalid, "The server no longer accepts this flow; start again.")
        }
        if error == "invalid_client" || error == "unauthorized_client" {
            return make(
                .invalidClient,
                "The server refused this client_id for native authentication "
                    + "(check the app registration: public client, native authentication enabled)."
            )
        }
        if error == "invalid_request" && codes.contains(90100) {
            // Which parameter: the description's phrase, as MSAL reads it (`InvalidParameter`). Without one of the
            // two phrases it is neither the user's nor the registration's fault that the library can name.
            switch envelope.invalidParameter {
            case .username?: return make(.invalidUsername, "The username is not valid.")
            case .clientID?:
                return make(.invalidClient, "The server refused this client_id as empty or not valid (AADSTS90100).")
            case nil: return make(.server, "The server refused a parameter of the request as not valid (AADSTS90100).")
            }
        }
        if error == "user_not_found" || codes.first == 50034 {
            return make(.userNotFound, "No account exists for this username.")
        }
        return nil
    }

    /// What the user entered or the account's state: codes, passwords, attributes, contacts, methods.
    func credentials(_ context: ErrorContext) -> NativeAuthError? {
        if sub == "invalid_oob_value" { return make(.invalidCode, "The code is not valid.") }
        if sub.hasPrefix("password_") {
            var e = make(.invalidPassword, NativeAuthError.passwordMessage(sub))
            e.reason = sub
            return e
        }
        if error == "invalid_grant" && codes.first == 50126 {
            return make(.invalidCredentials, "The username or password is incorrect.")
        }
        if error == "user_already_exists" {
            return make(.userAlreadyExists, "An account already exists for this username.")
        }
        if sub == "attribute_validation_failed" {
            let names = envelope.invalidAttributes
            var e = make(
                .attributesInvalid,
                "Some attributes are not valid: \(DisplayText.bounded(names.joined(separator: ", ")))."
            )
            e.attributes = names
            return e
        }
        if codes.contains(500222) {
            return make(.userHasNoPassword, "This account has no password (it signs in with a code).")
        }
        if codes.contains(50142) {
            return make(.passwordChangeRequired, "The user must change their password before signing in.")
        }
        if error == "invalid_scope" { return make(.invalidScope, "The server refused the requested scopes.") }
        if codes.contains(901001) { return make(.invalidContact, "The verification contact is not valid.") }
        if error == "access_denied" && sub == "provider_blocked_by_rep" {
            return context == .registerChallenge
                ? make(.contactBlocked, "This verification contact is blocked.")
                : make(.authMethodBlocked, "This authentication method is blocked.")
        }
        if error == "unsupported_challenge_type" {
            // The client's challenge types and the tenant's policy disagree: a configuration problem, not a reason
            // to send the user to a browser (the server says that with `redirect`).
            return make(.server, "The server refused the challenge types this client is configured with.")
        }
        return nil
    }

    func other() -> NativeAuthError {
        let what = DisplayText.bounded(error + (sub.isEmpty ? "" : " / " + sub))
        return make(.server, "The server refused the request (\(what)).")
    }
}
