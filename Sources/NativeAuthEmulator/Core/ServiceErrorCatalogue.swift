import NativeAuthJSON

// The catalogue of the service's errors: each AADSTS answer (error, error_codes, suberror, description) written once
// and used by name. Descriptions reproduce the phrases the SDKs match; change them only with the spec.

extension ServiceError {
    // MARK: - Requests

    /// AADSTS90100: a parameter is missing, empty or not valid.
    static func invalidParameter(_ name: String) -> ServiceError {
        ServiceError("invalid_request", [90100], "AADSTS90100: \(name) parameter is empty or not valid.")
    }
    static func missingParameter(_ name: String) -> ServiceError { invalidParameter(name) }
    static func invalidUsername() -> ServiceError { invalidParameter("username") }

    static let formBodyRequired = ServiceError(
        "invalid_request",
        [900144],
        "AADSTS900144: The request body must be application/x-www-form-urlencoded."
    )
    static let serverError = ServiceError(
        "server_error",
        [50000],
        "AADSTS50000: There was an error issuing a token.",
        status: 500
    )
    /// An injected fault's own answer (`POST /_emulator/faults` with a `status` and no body).
    static func injectedFault(status: Int) -> ServiceError {
        let name =
            status >= 500
            ? (status == 503 ? "temporarily_unavailable" : "server_error")
            : (status == 429 ? "too_many_requests" : "invalid_request")
        let code = status >= 500 ? 50000 : 90000
        return ServiceError(name, [code], "AADSTS\(code): Injected fault (HTTP \(status)).", status: status)
    }

    // MARK: - Clients

    static func unknownClient(_ id: String, tenant: String) -> ServiceError {
        ServiceError(
            "unauthorized_client",
            [700016],
            "AADSTS700016: Application with identifier '\(id)' was not found in the directory '\(tenant)'."
        )
    }
    static let confidentialClientNotSupported = ServiceError(
        "invalid_client",
        [550022],
        "AADSTS550022: Confidential Client is not supported in Native Authentication API flow.",
        suberror: "nativeauthapi_disabled"
    )
    static let nativeAuthDisabled = ServiceError(
        "invalid_client",
        [550021],
        "AADSTS550021: The application is not enabled for native authentication.",
        suberror: "nativeauthapi_disabled"
    )
    /// A confidential client at a standard grant without its credentials.
    static let clientCredentialsRequired = ServiceError(
        "invalid_client",
        [7000218],
        "AADSTS7000218: The request body must contain the following parameter: 'client_assertion' or "
            + "'client_secret'.",
        status: 401
    )

    // MARK: - Native auth: challenge types, continuation tokens, users

    static let unsupportedChallengeType = ServiceError(
        "invalid_request",
        [901007],
        "AADSTS901007: The challenge_type list parameter contains an unsupported challenge type."
    )
    static let challengeTypeWithoutRedirect = ServiceError(
        "invalid_request",
        [901007],
        "AADSTS901007: The challenge_type list parameter does not include the 'redirect' type."
    )
    static let invalidContinuationToken = ServiceError(
        "invalid_request",
        [55200],
        "AADSTS55200: The continuation_token is invalid."
    )
    static let continuationTokenWrongStep = ServiceError(
        "invalid_request",
        [55200],
        "AADSTS55200: The continuation_token is invalid: it is not valid for this endpoint or step."
    )
    static let expiredContinuationToken = ServiceError(
        "expired_token",
        [552003],
        "AADSTS552003: The continuation_token is expired."
    )
    static let usernameMismatch = ServiceError(
        "invalid_grant",
        [55200],
        "AADSTS55200: The username does not match the continuation_token."
    )
    static let userNotFound = ServiceError(
        "user_not_found",
        [50034],
        "AADSTS50034: The user account does not exist in the directory."
    )
    static let unsupportedGrantType = ServiceError(
        "unsupported_grant_type",
        [70003],
        "AADSTS70003: The app requested an unsupported grant type."
    )
    /// `/token`'s answer names the grant.
    static func unsupportedGrantType(_ grant: String) -> ServiceError {
        ServiceError(
            "unsupported_grant_type",
            [70003],
            "AADSTS70003: The app requested an unsupported grant type '\(grant)'."
        )
    }

    // MARK: - Native auth: credentials

    static let invalidOOB = ServiceError(
        "invalid_grant",
        [50181],
        "AADSTS50181: Unable to validate the one-time passcode.",
        suberror: "invalid_oob_value"
    )
    static let wrongPassword = ServiceError(
        "invalid_grant",
        [50126],
        "AADSTS50126: Error validating credentials due to invalid username or password."
    )
    static let userHasNoPassword = ServiceError(
        "invalid_request",
        [500222],
        "AADSTS500222: The user does not have a password."
    )
    /// The tenant's password policy refused a new password (`password_too_short`, …).
    static func passwordPolicy(_ suberror: String) -> ServiceError {
        let text = passwordPolicySuberrors[suberror] ?? "The new password does not meet the policy."
        return ServiceError("invalid_grant", [399246], "AADSTS399246: \(text)", suberror: suberror)
    }

    // MARK: - Native auth: MFA and strong-auth registration

    static let mfaRequired = ServiceError(
        "invalid_grant",
        [50076],
        "AADSTS50076: Due to a configuration change made by your administrator, or because you moved to a new "
            + "location, you must use multi-factor authentication.",
        suberror: "mfa_required"
    )
    static let registrationRequired = ServiceError(
        "invalid_grant",
        [50079],
        "AADSTS50079: Due to a configuration change made by your administrator, you must enroll in multi-factor "
            + "authentication.",
        suberror: "registration_required"
    )
    static let invalidAuthMethodID = ServiceError(
        "invalid_request",
        [50226],
        "AADSTS50226: The authentication method id is not valid for this user."
    )
    /// `/oauth2/v2.0/challenge` without a method `id` for a user with several strong methods and no default. MSAL
    /// Android reads the suberror (and calls `/introspect`); the code and wording are UNCONFIRMED (the docs keep this
    /// case commented out).
    static let introspectRequired = ServiceError(
        "invalid_request",
        [50228],
        "AADSTS50228: The user has no default strong authentication method; introspect the methods and choose one.",
        suberror: "introspect_required"
    )
    /// `/oauth2/v2.0/challenge` for a method whose address the service will not send codes to (MSAL iOS:
    /// `MFARequestChallengeError.isAuthMethodBlocked`).
    static let authMethodBlocked = ServiceError(
        "access_denied",
        [550024],
        "AADSTS550024: The strong authentication method is blocked.",
        suberror: "provider_blocked_by_rep"
    )
    static let registrationChallengeTypeUnsupported = ServiceError(
        "unsupported_challenge_type",
        [50227],
        "AADSTS50227: The challenge type is not supported for registration."
    )
    static let invalidVerificationContact = ServiceError(
        "invalid_request",
        [901001],
        "AADSTS901001: The verification contact is invalid."
    )
    static func invalidVerificationContact(channel: String) -> ServiceError {
        ServiceError(
            "invalid_request",
            [901001],
            "AADSTS901001: The verification contact is invalid for channel \(channel)."
        )
    }
    static let verificationContactBlocked = ServiceError(
        "access_denied",
        [550024],
        "AADSTS550024: Configuring multi-factor authentication method is blocked.",
        suberror: "provider_blocked_by_rep"
    )

    // MARK: - Native auth: sign-up

    static let signUpDisabled = ServiceError(
        "unsupported_auth_method",
        [1003035],
        "AADSTS1003035: Sign-up is not enabled for this application."
    )
    static let userAlreadyExists = ServiceError(
        "user_already_exists",
        [1003037],
        "AADSTS1003037: It looks like you may already have an account. Please sign in instead."
    )
    static let credentialRequired = ServiceError(
        "credential_required",
        [55103],
        "AADSTS55103: Credential required."
    )
    static let attributesRequired = ServiceError(
        "attributes_required",
        [55106],
        "AADSTS55106: User attributes are required."
    )
    /// Attributes that break their definition's type or regex (`invalid_attributes` names them).
    static func attributeValidationFailed(_ names: [String], token: String?) -> ServiceError {
        var extra: [String: JSONValue] = ["invalid_attributes": .array(names.map { ["name": .string($0)] })]
        if let token { extra["continuation_token"] = .string(token) }
        return ServiceError(
            "invalid_grant",
            [1003036],
            "AADSTS1003036: One or more user attributes failed validation.",
            suberror: "attribute_validation_failed",
            extra: extra
        )
    }

    // MARK: - Scopes

    static func invalidScope(_ scope: String) -> ServiceError {
        ServiceError(
            "invalid_scope",
            [70011],
            "AADSTS70011: The provided value for the input parameter 'scope' is not valid. The scope '\(scope)' is "
                + "not valid."
        )
    }
    static func resourceNotFound(_ resource: String, tenant: String) -> ServiceError {
        ServiceError(
            "invalid_scope",
            [500011],
            "AADSTS500011: The resource principal named \(resource) was not found in the tenant named \(tenant)."
        )
    }
    static func scopeNotOnResource(_ scope: String) -> ServiceError {
        ServiceError(
            "invalid_scope",
            [70011],
            "AADSTS70011: The provided value for the input parameter 'scope' is not valid. The scope '\(scope)' does "
                + "not exist on the resource."
        )
    }
    static let moreThanOneResource = ServiceError(
        "invalid_scope",
        [28000],
        "AADSTS28000: Provided value for the input parameter scope is not valid because it contains more than one "
            + "resource."
    )
    static func consentRequired(clientID: String) -> ServiceError {
        ServiceError(
            "invalid_grant",
            [65001],
            "AADSTS65001: The user or administrator has not consented to use the application with ID '\(clientID)'.",
            suberror: "consent_required"
        )
    }

    // MARK: - Refresh tokens

    static let malformedRefreshToken = ServiceError(
        "invalid_grant",
        [9002313],
        "AADSTS9002313: Invalid request. Request is malformed or invalid."
    )
    static let refreshTokenOfAnotherClient = ServiceError(
        "invalid_grant",
        [700005],
        "AADSTS700005: The provided refresh token is not valid for this client."
    )
    /// The grant was revoked (password change, `users/revoke`): `issued` and `validFrom` are service timestamps.
    static func refreshTokenRevoked(issued: String, validFrom: String) -> ServiceError {
        ServiceError(
            "invalid_grant",
            [50173],
            "AADSTS50173: The provided grant has expired due to it being revoked, a fresh auth token is needed. The "
                + "user might have changed or reset their password. The grant was issued on '\(issued)' and the "
                + "TokensValidFrom date (before which tokens are not valid) for this user is '\(validFrom)'.",
            suberror: "bad_token"
        )
    }
    static let refreshTokenExpired = ServiceError(
        "invalid_grant",
        [700082],
        "AADSTS700082: The refresh token has expired due to inactivity."
    )
    static let refreshTokenReused = ServiceError(
        "invalid_grant",
        [50173],
        "AADSTS50173: The provided grant has expired due to it being revoked: a refresh token was used twice.",
        suberror: "bad_token"
    )

    // MARK: - Authorization codes

    static let authorizationCodeRedeemed = ServiceError(
        "invalid_grant",
        [54005],
        "AADSTS54005: OAuth2 Authorization code was already redeemed or is not valid."
    )
    static let authorizationCodeExpired = ServiceError(
        "invalid_grant",
        [70008],
        "AADSTS70008: The provided authorization code has expired."
    )
    static let authorizationCodeOfAnotherClient = ServiceError(
        "invalid_grant",
        [70000],
        "AADSTS70000: The provided authorization code is not valid for this client."
    )
    static let redirectURIMismatch = ServiceError(
        "invalid_grant",
        [50011],
        "AADSTS50011: The redirect URI does not match the one used in the authorization request."
    )
    static let codeVerifierMismatch = ServiceError(
        "invalid_grant",
        [501481],
        "AADSTS501481: The Code_Verifier does not match the code_challenge supplied in the authorization request."
    )

    // MARK: - Device codes

    static let invalidDeviceCode = ServiceError(
        "invalid_grant",
        [70000],
        "AADSTS70000: The provided device code is not valid."
    )
    static let deviceCodeExpired = ServiceError(
        "expired_token",
        [70020],
        "AADSTS70020: The provided value for the input parameter 'device_code' is expired."
    )
    static let deviceCodeDeclined = ServiceError(
        "authorization_declined",
        [70019],
        "AADSTS70019: The user declined the authorization request."
    )
    static let slowDown = ServiceError("slow_down", [70016], "AADSTS70016: Polling too fast; slow down.")
    static let authorizationPending = ServiceError(
        "authorization_pending",
        [70016],
        "AADSTS70016: OAuth 2.0 device flow error. Authorization is pending. Continue polling."
    )

    // MARK: - Injected errors

    /// The description of an injected error (`POST /_emulator/token_errors` without `error_description`), in the
    /// service's style, for the codes token-endpoint tests ask for most.
    static func injectedDescription(_ code: Int, clientID: String, resource: String, now: Double) -> String {
        let issued = serviceTimestamp(now - 90 * 86_400)
        let text: String
        switch code {
        case 65001:
            text =
                "The user or administrator has not consented to use the application with ID '\(clientID)'. Send an "
                + "interactive authorization request for this user and resource."
        case 50076:
            text =
                "Due to a configuration change made by your administrator, or because you moved to a new location, "
                + "you must use multi-factor authentication to access '\(resource)'."
        case 50079:
            text =
                "Due to a configuration change made by your administrator, or because you moved to a new location, "
                + "you are required to enroll in multi-factor authentication."
        case 700082:
            text =
                "The refresh token has expired due to inactivity. The token was issued on \(issued) and was "
                + "inactive for 90.00:00:00."
        case 70008:
            text =
                "The provided authorization code or refresh token has expired due to inactivity. Send a new "
                + "interactive authorization request for this user and resource."
        case 700084:
            text =
                "The refresh token was issued to a single page app (SPA), and therefore has a fixed, limited "
                + "lifetime of 1.00:00:00, which cannot be extended. It is now expired and a new sign in request "
                + "must be sent by the SPA to the sign in page. The token was issued on \(issued)."
        case 50173:
            text =
                "The provided grant has expired due to it being revoked, a fresh auth token is needed. The user "
                + "might have changed or reset their password."
        case 50126: text = "Error validating credentials due to invalid username or password."
        case 50142: text = "Password change is required due to a conditional access policy."
        case 50034: text = "The user account does not exist in the directory."
        case 50057: text = "The user account is disabled."
        case 53003:
            text =
                "Access has been blocked by Conditional Access policies. The access policy does not allow token "
                + "issuance."
        case 9002313: text = "Invalid request. Request is malformed or invalid."
        case 70011:
            text =
                "The provided value for the input parameter 'scope' is not valid. The scope '\(resource)' is not valid."
        case 500011:
            text = "The resource principal named \(resource) was not found in the tenant."
        default: text = "Injected token endpoint error."
        }
        return "AADSTS\(code): \(text)"
    }
}
