/// What the server said when an error came from a server answer.
public struct ServerErrorDetails: Sendable, Equatable {
    public var error: String?
    public var suberror: String?
    public var errorCodes: [Int64]
    public var correlationID: String?
    public var traceID: String?
    public var httpStatus: Int?
    /// The `Retry-After` header of a 429/503 answer, as sent.
    public var retryAfter: String?

    public init(
        error: String? = nil,
        suberror: String? = nil,
        errorCodes: [Int64] = [],
        correlationID: String? = nil,
        traceID: String? = nil,
        httpStatus: Int? = nil,
        retryAfter: String? = nil
    ) {
        self.error = error
        self.suberror = suberror
        self.errorCodes = errorCodes
        self.correlationID = correlationID
        self.traceID = traceID
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
    }
}

/// The one error type of the library: a stable `code` an app can branch on, a human `message` that never holds a
/// secret, the server's details when there was a server answer, and typed extra details documented per code.
public struct NativeAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The coarse class of an error code; the C ABI maps each to one `NA_E*` status.
    public enum Category: String, Sendable, CaseIterable {
        case invalidArgument, auth, notFound, interaction, network, server, state, outOfMemory, `internal`, storage
    }

    /// Stable, documented error codes. Only ever added to; `Code.table` lists every one.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        // Arguments and the library itself
        public static let invalidArgument = Code(rawValue: "invalid_argument")
        public static let invalidHandle = Code(rawValue: "invalid_handle")
        public static let notSupported = Code(rawValue: "not_supported")
        public static let outOfMemory = Code(rawValue: "out_of_memory")
        public static let network = Code(rawValue: "network")
        public static let timeout = Code(rawValue: "timeout")
        public static let tls = Code(rawValue: "tls")
        public static let server = Code(rawValue: "server")
        public static let `internal` = Code(rawValue: "internal")
        // Authentication outcomes
        public static let invalidUsername = Code(rawValue: "invalid_username")
        public static let userNotFound = Code(rawValue: "user_not_found")
        public static let invalidCredentials = Code(rawValue: "invalid_credentials")
        public static let invalidCode = Code(rawValue: "invalid_code")
        public static let invalidPassword = Code(rawValue: "invalid_password")
        public static let userAlreadyExists = Code(rawValue: "user_already_exists")
        public static let attributesInvalid = Code(rawValue: "attributes_invalid")
        public static let userHasNoPassword = Code(rawValue: "user_has_no_password")
        public static let invalidContact = Code(rawValue: "invalid_contact")
        public static let contactBlocked = Code(rawValue: "contact_blocked")
        public static let authMethodBlocked = Code(rawValue: "auth_method_blocked")
        // The user must act
        public static let browserRequired = Code(rawValue: "browser_required")
        public static let interactionRequired = Code(rawValue: "interaction_required")
        public static let refreshTokenExpired = Code(rawValue: "refresh_token_expired")
        public static let passwordChangeRequired = Code(rawValue: "password_change_required")
        // Flow state
        public static let flowExpired = Code(rawValue: "flow_expired")
        public static let flowInvalid = Code(rawValue: "flow_invalid")
        // Nothing to act on
        public static let noAccount = Code(rawValue: "no_account")
        // Configuration problems reported by the server
        public static let invalidScope = Code(rawValue: "invalid_scope")
        public static let invalidClient = Code(rawValue: "invalid_client")
        // Added with the conformance work
        public static let declinedScopes = Code(rawValue: "declined_scopes")
        public static let passwordResetFailed = Code(rawValue: "password_reset_failed")
        public static let throttled = Code(rawValue: "throttled")
        public static let cancelled = Code(rawValue: "cancelled")
        public static let idTokenInvalid = Code(rawValue: "id_token_invalid")
        // Added with the browser flows and accounts
        public static let accountRequired = Code(rawValue: "account_required")
        public static let browserUnavailable = Code(rawValue: "browser_unavailable")
        public static let accessDenied = Code(rawValue: "access_denied")
        // Added with the persistent cache
        public static let cacheUnreadable = Code(rawValue: "cache_unreadable")
        public static let cacheWriteFailed = Code(rawValue: "cache_write_failed")
        public static let cacheInsecure = Code(rawValue: "cache_insecure")
        public static let cacheKeyInvalid = Code(rawValue: "cache_key_invalid")
        // Added with the shared cache
        public static let reentrantCall = Code(rawValue: "reentrant_call")
        // Added with the keyring-protected cache
        public static let keyringUnavailable = Code(rawValue: "keyring_unavailable")
        // Added with DPoP (RFC 9449)
        public static let dpopUnsupported = Code(rawValue: "dpop_unsupported")

        /// Every code with its category and when it happens. This table is the source: the header, `docs/errors.md`,
        /// the Python exception map and the Go sentinels are checked against it (ErrorTableTests).
        public static let table: [(code: Code, category: Category, meaning: String)] = [
            (
                .invalidArgument, .invalidArgument,
                "NULL pointer, invalid JSON or UTF-8, document over 1 MiB, wrong type, missing or invalid member "
                    + "(`field` names it)"
            ),
            (.invalidHandle, .invalidArgument, "the `na_client *` is NULL, freed, or was never created"),
            (.notSupported, .invalidArgument, "a recognised option this version does not implement"),
            (.invalidScope, .invalidArgument, "the server refused the scopes"),
            (
                .dpopUnsupported, .invalidArgument,
                "`\"dpop\": true` with a provider that does not do DPoP: an Entra authority, a discovery document "
                    + "without ES256 in `dpop_signing_alg_values_supported`, or a Bearer token answered to a proof"
            ),
            (
                .invalidClient, .invalidArgument,
                "the app registration does not allow native auth (unknown, confidential, or not enabled), or the "
                    + "server found the client_id not valid (AADSTS90100 naming it)"
            ),
            (.outOfMemory, .outOfMemory, "allocation failed"),
            (.network, .network, "cannot connect, connection broken"),
            (.timeout, .network, "connect or request timeout elapsed"),
            (.tls, .network, "TLS handshake or certificate verification failed"),
            (.server, .server, "unexpected server answer (5xx, oversized or undecodable response, an unknown error)"),
            (
                .throttled, .server,
                "429 or 503 with a Retry-After longer than `retry_after_max_s`; `retry_after_s` says how long to wait"
            ),
            (
                .declinedScopes, .server,
                "the server granted fewer scopes than asked: `declined` and `granted` list them (the token is cached)"
            ),
            (.passwordResetFailed, .server, "the server reports the password reset failed; start again"),
            (
                .idTokenInvalid, .server,
                "the ID token failed its checks (`aud`, `iss`, `exp`/`nbf`); nothing was cached"
            ),
            (.internal, .internal, "a bug; please report it"),
            (.invalidUsername, .auth, "empty, or refused by the server (AADSTS90100 naming the username)"),
            (.userNotFound, .auth, "no such account (sign-in, reset)"),
            (.invalidCredentials, .auth, "wrong password (AADSTS50126); carries `flow` to retry"),
            (.invalidCode, .auth, "wrong or expired one-time code (`invalid_oob_value`); the flow stays usable"),
            (
                .invalidPassword, .auth,
                "the password policy refused it; `reason` is the server's suberror (`password_too_weak`, …)"
            ),
            (.userAlreadyExists, .auth, "sign-up for an existing account"),
            (.attributesInvalid, .auth, "`attributes` lists the names; the flow stays usable"),
            (.accessDenied, .auth, "the user (or the server) refused the browser sign-in or the device code"),
            (.userHasNoPassword, .auth, "reset for a one-time-passcode account (AADSTS500222)"),
            (.invalidContact, .auth, "registration: the contact is not valid (AADSTS901001)"),
            (.contactBlocked, .auth, "registration: the contact is blocked (`provider_blocked_by_rep`)"),
            (.authMethodBlocked, .auth, "MFA: the method is blocked"),
            (.browserRequired, .interaction, "the server asked for the web fallback; `redirect_reason` says why"),
            (.interactionRequired, .interaction, "the refresh token was refused (revoked, consent, …): sign in again"),
            (.refreshTokenExpired, .interaction, "the refresh token expired (AADSTS700082)"),
            (.passwordChangeRequired, .interaction, "AADSTS50142"),
            (
                .browserUnavailable, .interaction,
                "no browser could be opened; `authorization_url` is the address the browser was to get (the "
                    + "sign-in has ended: start again with `\"browser\":\"none\"` to show one)"
            ),
            (.flowExpired, .state, "the flow's continuation token expired"),
            (
                .flowInvalid, .state,
                "unknown, finished, busy flow, or an action it is not waiting for (`expected`); also a browser "
                    + "sign-in stopped because its one-time start page was fetched twice"
            ),
            (.cancelled, .state, "the flow was cancelled (from another thread) while this call waited on it"),
            (
                .reentrantCall, .state,
                "a call from inside a log or browser callback needs what its own thread holds (a token refresh it is "
                    + "making): answered at once instead of waiting for itself"
            ),
            (
                .cacheUnreadable, .storage,
                "the cache file cannot be read (permissions, a directory in its place); the client starts empty and "
                    + "keeps changes in memory"
            ),
            (
                .cacheWriteFailed, .storage,
                "the cache file could not be written (permissions, disk full, read-only); the change is kept in memory"
            ),
            (
                .cacheInsecure, .storage,
                "the cache file or its directory is writable by others or owned by another user; it is not used"
            ),
            (
                .cacheKeyInvalid, .storage,
                "the cache file is encrypted with another key, was altered, or its key left the key store (the file is "
                    + "then set aside and the client starts empty)"
            ),
            (
                .keyringUnavailable, .storage,
                "`key_store`: neither the Secret Service nor the kernel keyring could hold the cache key (the message "
                    + "says what was tried and the ways out)"
            ),
            (.noAccount, .notFound, "no signed-in account (or none matches `account`)"),
            (
                .accountRequired, .invalidArgument,
                "several accounts are signed in and the call named none: `accounts` lists them"
            ),
        ]

        private static let categories: [Code: Category] = Dictionary(
            table.map { ($0.code, $0.category) },
            uniquingKeysWith: { a, _ in a }
        )

        /// The code's category (`internal` for a code missing from the table, which a test forbids).
        public var category: Category { Code.categories[self] ?? .internal }
    }

    /// Which action a flow is waiting for, when an action it cannot take was submitted.
    public typealias ExpectedAction = FlowAction.Kind

    public var code: Code
    public var message: String
    public var server: ServerErrorDetails?
    /// The request member the error is about ("scopes[2]", "cache.path").
    public var field: String?
    /// The flow that stays usable after this error (set when a retry on the same flow makes sense).
    public var flow: FlowID?
    /// `flow_invalid` for an action the flow was not waiting for: the action it waits for.
    public var expected: ExpectedAction?
    /// `invalid_password`: the server's suberror (`password_too_weak`, …) or "empty" / "invalid".
    public var reason: String?
    /// `attributes_invalid`: the attribute names the server refused.
    public var attributes: [String]?
    /// `browser_required`: the server's `redirect_reason`.
    public var redirectReason: String?
    /// `declined_scopes`: the scopes the server did not grant, and those it did.
    public var declined: [String]?
    public var granted: [String]?
    /// `throttled`: how long the server asked to wait, in seconds.
    public var retryAfterSeconds: Int?
    /// `account_required`: the signed-in accounts.
    public var accounts: [Account]?
    /// `interaction_required`, `browser_required` and the other interaction errors: the `login_hint` to pass to
    /// the interactive sign-in, and the server's claims challenge when it sent one.
    public var loginHint: String?
    public var claims: String?
    /// `browser_unavailable`: the authorization URL the app should show.
    public var authorizationURL: String?
    /// `cancelled` because the started call itself was cancelled (`na_op_cancel`) before or during a request, as
    /// opposed to a flow's cancel, the client being freed or a sign-out: the server gave no verdict on the step.
    public var byCallCancel = false

    public init(
        _ code: Code,
        _ message: String,
        server: ServerErrorDetails? = nil,
        field: String? = nil,
        reason: String? = nil,
        attributes: [String]? = nil,
        redirectReason: String? = nil
    ) {
        self.code = code
        // A message may repeat a piece of outside text (a server's error code): no control character reaches a
        // terminal through it (see DisplayText).
        self.message = DisplayText.clean(message)
        self.server = server
        self.field = field
        self.reason = reason
        self.attributes = attributes
        self.redirectReason = redirectReason
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The error of a started call that was cancelled (`CallCancellation`).
    public static func callCancelled(_ message: String = "The call was cancelled.") -> NativeAuthError {
        var e = NativeAuthError(.cancelled, message)
        e.byCallCancel = true
        return e
    }
    public var category: Category { code.category }

    public static func invalidArgument(_ message: String, field: String? = nil) -> NativeAuthError {
        NativeAuthError(.invalidArgument, message, field: field)
    }

    static func unexpected(_ what: String) -> NativeAuthError {
        NativeAuthError(.server, "Unexpected server response: \(what).")
    }

    static func browserRequired(_ reason: String?) -> NativeAuthError {
        NativeAuthError(
            .browserRequired,
            "Native authentication cannot complete this; use the browser (interactive) flow.",
            redirectReason: reason
        )
    }
}
