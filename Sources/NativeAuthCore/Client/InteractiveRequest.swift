internal import NativeAuthHTTP
internal import NativeAuthJSON

/// How a browser sign-in reaches the browser.
public enum BrowserMode: String, Sendable, CaseIterable {
    /// The client's launcher opens the URL and the call waits for the redirect.
    case system
    /// Nothing is opened: the call answers `browser_pending` and the app continues the flow.
    case none
}

/// `na_sign_in_interactive`.
public struct InteractiveRequest: Sendable {
    public var scopes: [String]
    public var loginHint: String?
    public var prompt: Prompt?
    public var domainHint: String?
    public var claims: ClaimsRequest?
    public var extraQueryParameters: [(String, String)]
    public var responseMode: ResponseMode
    public var browser: BrowserMode
    /// How long the sign-in may take, in milliseconds (the authorization's lifetime).
    public var timeoutMs: Int
    /// Browser system: how long the first call serves the listener before it answers browser_pending (nil: the
    /// whole sign-in).
    public var waitMs: Int?
    public var correlationID: String?

    public init(
        scopes: [String]?,
        loginHint: String? = nil,
        prompt: String? = nil,
        domainHint: String? = nil,
        claims: ClaimsRequest? = nil,
        extraQueryParameters: [(String, String)] = [],
        responseMode: String? = nil,
        browser: String? = nil,
        timeoutMs: Int? = nil,
        waitMs: Int? = nil,
        correlationID: String? = nil
    ) throws(NativeAuthError) {
        self.scopes = try Validate.scopes(scopes)
        self.loginHint = try Validate.text(loginHint, field: "login_hint")
        self.waitMs = waitMs
        self.domainHint = try Validate.text(domainHint, field: "domain_hint")
        if let prompt {
            guard let p = Prompt(rawValue: prompt) else {
                throw .invalidArgument(
                    "prompt: must be select_account, login, consent, none or create",
                    field: "prompt"
                )
            }
            self.prompt = p
        } else {
            self.prompt = nil
        }
        self.claims = claims
        guard extraQueryParameters.count <= 32 else {
            throw .invalidArgument("extra_query_parameters: too many", field: "extra_query_parameters")
        }
        for (name, value) in extraQueryParameters {
            let field = "extra_query_parameters.\(name)"
            _ = try Validate.text(name, field: field)
            _ = try Validate.text(value, field: field, allowEmpty: true)
            guard !ServerAPI.reservedAuthorizationParameters.contains(name.lowercased()) else {
                throw .invalidArgument("\(field): set by the library (use its own request member)", field: field)
            }
        }
        self.extraQueryParameters = extraQueryParameters
        switch responseMode {
        case nil: self.responseMode = .query
        case let m?:
            guard let mode = ResponseMode(rawValue: m) else {
                throw .invalidArgument("response_mode: must be query or form_post", field: "response_mode")
            }
            self.responseMode = mode
        }
        switch browser {
        case nil: self.browser = .system
        case let b?:
            guard let mode = BrowserMode(rawValue: b) else {
                throw .invalidArgument("browser: must be system or none", field: "browser")
            }
            self.browser = mode
        }
        if let t = timeoutMs, !(1_000...3_600_000).contains(t) {
            throw .invalidArgument("timeout_ms: must be 1000 to 3600000", field: "timeout_ms")
        }
        self.timeoutMs = timeoutMs ?? 300_000
        self.correlationID = try Validate.correlationID(correlationID)
    }
}
