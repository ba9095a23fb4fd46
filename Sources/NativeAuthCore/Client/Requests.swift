internal import NativeAuthHTTP
internal import NativeAuthJSON

/// The typed requests of the client's operations. Each validates its values when built (before any network call);
/// the C ABI builds them from request documents.

/// `na_sign_in`.
public struct SignInRequest: Sendable {
    /// The app's `x-` headers for this flow's requests (`request_headers`), beside the configuration's.
    public var requestHeaders: [RequestHeader] = []
    public var username: String
    public var password: Secret?
    public var scopes: [String]
    public var claims: ClaimsRequest?
    public var correlationID: String?

    public init(
        username: String?,
        password: String?,
        scopes: [String]?,
        claims: ClaimsRequest?,
        correlationID: String? = nil
    ) throws(NativeAuthError) {
        self.username = try Validate.username(username)
        self.password = try Validate.password(password, required: false)
        self.scopes = try Validate.scopes(scopes)
        self.claims = claims
        self.correlationID = try Validate.correlationID(correlationID)
    }
}

/// `na_sign_up`.
public struct SignUpRequest: Sendable {
    /// The app's `x-` headers for this flow's requests (`request_headers`), beside the configuration's.
    public var requestHeaders: [RequestHeader] = []
    public var username: String
    public var password: Secret?
    public var attributes: [String: String]?
    public var correlationID: String?

    public init(
        username: String?,
        password: String?,
        attributes: [String: String]?,
        correlationID: String? = nil
    )
        throws(NativeAuthError)
    {
        self.username = try Validate.username(username)
        self.password = try Validate.password(password, required: false)
        self.attributes = attributes
        self.correlationID = try Validate.correlationID(correlationID)
    }
}

/// `na_reset_password`.
public struct ResetPasswordRequest: Sendable {
    /// The app's `x-` headers for this flow's requests (`request_headers`), beside the configuration's.
    public var requestHeaders: [RequestHeader] = []
    public var username: String
    public var correlationID: String?

    public init(username: String?, correlationID: String? = nil) throws(NativeAuthError) {
        self.username = try Validate.username(username)
        self.correlationID = try Validate.correlationID(correlationID)
    }
}

/// `na_get_access_token`.
public struct TokenRequest: Sendable {
    /// The scopes; nil for "the scopes of the sign-in" (absent or empty in the request).
    public var scopes: [String]?
    public var key: ScopeKey?
    public var forceRefresh: Bool
    public var claims: ClaimsRequest?
    /// The `client-request-id` of this call's requests, when the app chose it.
    public var correlationID: String?
    /// The account (a `home_account_id` or a username); `.only` when the request names none.
    public var account: AccountSelection

    public init(
        scopes: [String]?,
        forceRefresh: Bool,
        claims: ClaimsRequest?,
        correlationID: String? = nil,
        account: String? = nil
    )
        throws(NativeAuthError)
    {
        self.account = try Validate.account(account)
        let list = try Validate.scopes(scopes)
        self.scopes = list.isEmpty ? nil : list
        self.key = list.isEmpty ? nil : ScopeKey(list)
        self.forceRefresh = forceRefresh
        self.claims = claims
        self.correlationID = try Validate.correlationID(correlationID)
    }
}

/// `na_sign_in_device_code`.
public struct DeviceCodeRequest: Sendable {
    public var scopes: [String]
    public var correlationID: String?

    public init(scopes: [String]?, correlationID: String? = nil) throws(NativeAuthError) {
        self.scopes = try Validate.scopes(scopes)
        self.correlationID = try Validate.correlationID(correlationID)
    }
}

/// `na_sign_out`.
public struct SignOutRequest: Sendable {
    public var account: AccountSelection
    public var all: Bool
    /// Also open the provider's end-session page in the browser.
    public var browser: BrowserMode

    public init(account: String?, all: Bool, browser: String?) throws(NativeAuthError) {
        self.account = try Validate.account(account)
        self.all = all
        switch browser {
        case nil, "none": self.browser = .none
        case "system": self.browser = .system
        default: throw .invalidArgument("browser: must be none or system", field: "browser")
        }
    }
}
