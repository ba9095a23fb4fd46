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
}

extension NativeAuthError {
    /// Maps a server error envelope to the library's stable codes. Messages are the library's own sentences: the
    /// server's `error_description` may name the user and is never repeated.
    static func from(_ envelope: ServerErrorEnvelope, context: ErrorContext) -> NativeAuthError {
        let d = envelope.details
        let error = d.error ?? ""
        let sub = d.suberror ?? ""
        let codes = d.errorCodes
        let description = envelope.description
        func make(_ code: Code, _ message: String) -> NativeAuthError {
            NativeAuthError(code, message, server: d)
        }
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
                "The server answered with something that is not a native-auth response (HTTP \(d.httpStatus ?? 0))."
            )
        }
        if context == .refresh {
            if codes.contains(700082) || error == "expired_refresh_token" {
                return make(.refreshTokenExpired, "The refresh token has expired; the user must sign in again.")
            }
            if error == "invalid_scope" { return make(.invalidScope, "The server refused the requested scopes.") }
            if codes.contains(50142) {
                return make(.passwordChangeRequired, "The user must change their password; sign in again.")
            }
            if ["invalid_grant", "interaction_required", "consent_required", "login_required"].contains(error) {
                return make(.interactionRequired, "The user must sign in again (the refresh token was refused).")
            }
        }
        if error == "expired_token" { return make(.flowExpired, "The flow expired; start again.") }
        if codes.contains(55200) || codes.contains(55000)
            || description.contains("continuation_token") && error == "invalid_request"
            || (error == "invalid_grant" && description.lowercased().contains("continuation token"))
        {
            return make(.flowInvalid, "The server no longer accepts this flow; start again.")
        }
        if error == "invalid_client" || error == "unauthorized_client" {
            return make(
                .invalidClient,
                "The server refused this client_id for native authentication (check the app registration: public "
                    + "client, native authentication enabled)."
            )
        }
        if error == "invalid_request" && codes.contains(90100) {
            if description.contains("client_id") { return make(.invalidClient, "The server refused the client_id.") }
            return make(.invalidUsername, "The username is not valid.")
        }
        if error == "user_not_found" || codes.contains(50034) {
            return make(.userNotFound, "No account exists for this username.")
        }
        if sub == "invalid_oob_value" { return make(.invalidCode, "The code is not valid.") }
        if sub.hasPrefix("password_") {
            var e = make(.invalidPassword, passwordMessage(sub))
            e.reason = sub
            return e
        }
        if error == "invalid_grant" && codes.contains(50126) {
            return make(.invalidCredentials, "The username or password is incorrect.")
        }
        if error == "user_already_exists" {
            return make(.userAlreadyExists, "An account already exists for this username.")
        }
        if sub == "attribute_validation_failed" {
            let names = envelope.invalidAttributes
            var e = make(.attributesInvalid, "Some attributes are not valid: \(names.joined(separator: ", ")).")
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
            var e = make(
                .browserRequired,
                "The server needs a challenge type this client does not support; use the browser."
            )
            e.redirectReason = nil
            return e
        }
        return make(.server, "The server refused the request (\(error)\(sub.isEmpty ? "" : " / " + sub)).")
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
