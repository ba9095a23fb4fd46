// The catalogue, continued: the browser endpoints' errors (error pages and error redirects) and the JSON error
// bodies outside the service's envelope.

/// An error of the browser endpoints (authorize, end session): shown on an error page, or sent to the redirect URI as
/// `error` + `error_description` (+ `error_subcode`). Entra's descriptions carry AADSTS codes; the generic provider's
/// are plain.
struct BrowserError {
    var error: String
    var entra: String
    var generic: String
    var subcode: String? = nil

    func description(_ idp: IdP) -> String { idp == .entra ? entra : generic }
    /// Entra's subcode (the generic provider sends none).
    func subcode(_ idp: IdP) -> String? { idp == .entra ? subcode : nil }

    // MARK: - Error pages (no redirect)

    static func unknownClient(_ id: String, tenant: String) -> BrowserError {
        BrowserError(
            error: "unauthorized_client",
            entra: ServiceError.unknownClient(id, tenant: tenant).text,
            generic: unknownClientID(id)
        )
    }
    static func redirectURINotAllowed(_ uri: String) -> BrowserError {
        BrowserError(
            error: "invalid_request",
            entra: "AADSTS50011: The redirect URI '\(uri)' specified in the request does not match the redirect URIs "
                + "configured for the application.",
            generic: "The redirect_uri '\(uri)' is not registered for this client."
        )
    }
    static let postLogoutRedirectURINotAllowed = BrowserError(
        error: "invalid_request",
        entra: "AADSTS50011: post_logout_redirect_uri is not allowed.",
        generic: "post_logout_redirect_uri is not registered for this client."
    )
    /// End session's error page for an unknown `client_id` (either provider).
    static func unknownClientID(_ id: String) -> String { "Unknown client_id '\(id)'." }
    static func idTokenHintOfAnotherClient(_ id: String) -> String {
        "The id_token_hint was not issued to client_id '\(id)'."
    }

    // MARK: - Error redirects

    static func unsupportedResponseMode(_ mode: String) -> BrowserError {
        BrowserError(
            error: "invalid_request",
            entra: "AADSTS900144: Unsupported response_mode '\(mode)'.",
            generic: "Unsupported response_mode."
        )
    }
    static func unsupportedResponseType(_ type: String) -> BrowserError {
        BrowserError(
            error: "unsupported_response_type",
            entra: "AADSTS70005: response_type '\(type)' is not enabled for the client.",
            generic: "Only response_type=code is supported."
        )
    }
    static let pkceRequired = BrowserError(
        error: "invalid_request",
        entra: "AADSTS9002325: Proof Key for Code Exchange with the S256 method is required.",
        generic: "PKCE with code_challenge_method=S256 is required."
    )
    static let noUserSignedIn = BrowserError(
        error: "login_required",
        entra: "AADSTS50058: A silent sign-in request was sent but no user is signed in.",
        generic: "No user is signed in."
    )
    static let loginHintNotSignedIn = BrowserError(
        error: "login_required",
        entra: "AADSTS50058: A silent sign-in request was sent but none of the currently signed in user(s) match the "
            + "requested login hint.",
        generic: "The signed-in user does not match login_hint."
    )
    static let severalUsersSignedIn = BrowserError(
        error: "interaction_required",
        entra: "AADSTS16000: Either multiple user identities are available for the current request or selected "
            + "account is not supported for the scenario.",
        generic: "More than one user is signed in; choose one interactively."
    )
    static func invalidPrompt(_ prompt: String) -> BrowserError {
        BrowserError(
            error: "invalid_request",
            entra: "AADSTS90023: Invalid prompt value '\(prompt)'.",
            generic: "Unsupported prompt value."
        )
    }
    static let consentDeclined = BrowserError(
        error: "access_denied",
        entra: "AADSTS65004: User declined to consent to access the app.",
        generic: "The user denied the request.",
        subcode: "cancel"
    )
}

/// JSON error bodies outside the service's envelope.
extension EmulatorResponse {
    /// A path the emulator does not serve.
    static let notFound = EmulatorResponse.json(
        ["error": "not_found", "error_description": "No such endpoint on the NativeAuth emulator."],
        status: 404
    )
    /// A tenant endpoint that takes POST only.
    static let postOnly = EmulatorResponse.json(
        ["error": "invalid_request", "error_description": "AADSTS900561: The endpoint only accepts POST requests."],
        status: 405
    )
    static let methodNotAllowed = EmulatorResponse.json(["error": "method_not_allowed"], status: 405)
    /// A control's refusal of its request body.
    static func badControlRequest(_ why: String) -> EmulatorResponse {
        .json(["error": "invalid_request", "error_description": .string(why)], status: 400)
    }
}
