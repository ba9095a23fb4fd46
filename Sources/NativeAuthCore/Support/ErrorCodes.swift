// Generated from docs/errors.tsv by .ci/error-table (run by make docs): edit that file, not this one;
// make lint fails when this file differs from what the table gives.

/// The library's error codes (docs/errors.md says when each happens).
extension NativeAuthError.Code {
    public static let invalidArgument = Self(rawValue: "invalid_argument")
    public static let invalidHandle = Self(rawValue: "invalid_handle")
    public static let notSupported = Self(rawValue: "not_supported")
    public static let invalidScope = Self(rawValue: "invalid_scope")
    public static let invalidClient = Self(rawValue: "invalid_client")
    public static let dpopUnsupported = Self(rawValue: "dpop_unsupported")
    public static let accountRequired = Self(rawValue: "account_required")
    public static let invalidUsername = Self(rawValue: "invalid_username")
    public static let userNotFound = Self(rawValue: "user_not_found")
    public static let invalidCredentials = Self(rawValue: "invalid_credentials")
    public static let invalidCode = Self(rawValue: "invalid_code")
    public static let invalidPassword = Self(rawValue: "invalid_password")
    public static let userAlreadyExists = Self(rawValue: "user_already_exists")
    public static let attributesInvalid = Self(rawValue: "attributes_invalid")
    public static let userHasNoPassword = Self(rawValue: "user_has_no_password")
    public static let invalidContact = Self(rawValue: "invalid_contact")
    public static let contactBlocked = Self(rawValue: "contact_blocked")
    public static let authMethodBlocked = Self(rawValue: "auth_method_blocked")
    public static let accessDenied = Self(rawValue: "access_denied")
    public static let noAccount = Self(rawValue: "no_account")
    public static let browserRequired = Self(rawValue: "browser_required")
    public static let interactionRequired = Self(rawValue: "interaction_required")
    public static let refreshTokenExpired = Self(rawValue: "refresh_token_expired")
    public static let passwordChangeRequired = Self(rawValue: "password_change_required")
    public static let browserUnavailable = Self(rawValue: "browser_unavailable")
    public static let network = Self(rawValue: "network")
    public static let timeout = Self(rawValue: "timeout")
    public static let tls = Self(rawValue: "tls")
    public static let server = Self(rawValue: "server")
    public static let throttled = Self(rawValue: "throttled")
    public static let declinedScopes = Self(rawValue: "declined_scopes")
    public static let passwordResetFailed = Self(rawValue: "password_reset_failed")
    public static let idTokenInvalid = Self(rawValue: "id_token_invalid")
    public static let flowExpired = Self(rawValue: "flow_expired")
    public static let flowInvalid = Self(rawValue: "flow_invalid")
    public static let cancelled = Self(rawValue: "cancelled")
    public static let reentrantCall = Self(rawValue: "reentrant_call")
    public static let outOfMemory = Self(rawValue: "out_of_memory")
    public static let `internal` = Self(rawValue: "internal")
    public static let cacheUnreadable = Self(rawValue: "cache_unreadable")
    public static let cacheWriteFailed = Self(rawValue: "cache_write_failed")
    public static let cacheInsecure = Self(rawValue: "cache_insecure")
    public static let cacheKeyInvalid = Self(rawValue: "cache_key_invalid")
    public static let keyringUnavailable = Self(rawValue: "keyring_unavailable")

    /// Every code with its category (the C ABI's `NA_E*` status, `NAStatus.init(_ category:)`), in the order
    /// of docs/errors.tsv; `docs/errors.md` says when each happens.
    public static let table: [(code: Self, category: NativeAuthError.Category)] = [
        (.invalidArgument, .invalidArgument),
        (.invalidHandle, .invalidArgument),
        (.notSupported, .invalidArgument),
        (.invalidScope, .invalidArgument),
        (.invalidClient, .invalidArgument),
        (.dpopUnsupported, .invalidArgument),
        (.accountRequired, .invalidArgument),
        (.invalidUsername, .auth),
        (.userNotFound, .auth),
        (.invalidCredentials, .auth),
        (.invalidCode, .auth),
        (.invalidPassword, .auth),
        (.userAlreadyExists, .auth),
        (.attributesInvalid, .auth),
        (.userHasNoPassword, .auth),
        (.invalidContact, .auth),
        (.contactBlocked, .auth),
        (.authMethodBlocked, .auth),
        (.accessDenied, .auth),
        (.noAccount, .notFound),
        (.browserRequired, .interaction),
        (.interactionRequired, .interaction),
        (.refreshTokenExpired, .interaction),
        (.passwordChangeRequired, .interaction),
        (.browserUnavailable, .interaction),
        (.network, .network),
        (.timeout, .network),
        (.tls, .network),
        (.server, .server),
        (.throttled, .server),
        (.declinedScopes, .server),
        (.passwordResetFailed, .server),
        (.idTokenInvalid, .server),
        (.flowExpired, .state),
        (.flowInvalid, .state),
        (.cancelled, .state),
        (.reentrantCall, .state),
        (.outOfMemory, .outOfMemory),
        (.`internal`, .internal),
        (.cacheUnreadable, .storage),
        (.cacheWriteFailed, .storage),
        (.cacheInsecure, .storage),
        (.cacheKeyInvalid, .storage),
        (.keyringUnavailable, .storage),
    ]
}
