internal import NativeAuthHTTP
internal import NativeAuthJSON

/// The typed requests of the client's operations. Each validates its values when built (before any network call);
/// the C ABI builds them from request documents.

/// A `claims` request parameter: a JSON object, kept as its serialised text (sent as is).
public struct ClaimsRequest: Sendable, Equatable {
    public let json: String
    public init(json: String) { self.json = json }

    /// Whether `text` can be a claims request: a JSON object nested at most as deep as any request document may be
    /// (`JSONDepth`). One check for the claims of a request, of a WWW-Authenticate header the app parses, and of an
    /// API's challenge `na_call_api` answers.
    public static func isJSONObject(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !JSONDepth.exceeds(bytes) else { return false }
        if case .object? = try? JSONValue.parse(bytes) { return true }
        return false
    }

    /// The `claims` parameter a token or authorization request sends: the request's own claims with the client's
    /// capabilities merged in as `{"access_token":{"xms_cc":{"values":[…]}}}` — MSAL for Python's
    /// `_merge_claims_challenge_and_capabilities` (msal/application.py): the capabilities replace any `xms_cc` the
    /// claims had, other members stay. No capabilities: the claims as they are (nil stays nil).
    public static func merging(_ claims: ClaimsRequest?, capabilities: [String]) -> ClaimsRequest? {
        guard !capabilities.isEmpty else { return claims }
        var document: [String: JSONValue] = [:]
        if let claims {
            guard case .object(let members)? = try? JSONValue.parse(claims.json) else { return claims }
            document = members
        }
        var accessToken: [String: JSONValue] = [:]
        if case .object(let members)? = document["access_token"] { accessToken = members }
        accessToken["xms_cc"] = ["values": .array(capabilities.map { .string($0) })]
        document["access_token"] = .object(accessToken)
        guard let bytes = JSONValue.object(document).serializedBytes() else { return claims }
        return ClaimsRequest(json: String(decoding: bytes, as: UTF8.self))
    }
}

/// Checks shared by the requests. Errors name the request member in `field`.
public enum Validate {
    /// A short text member (a hint, a parameter): at most 2048 bytes, no control characters.
    public static func text(_ t: String?, field: String, allowEmpty: Bool = false) throws(NativeAuthError) -> String? {
        guard let t else { return nil }
        guard allowEmpty || !t.isEmpty, t.utf8.count <= 2048,
            !t.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else { throw .invalidArgument("\(field): must be a short text without control characters", field: field) }
        return t
    }

    /// An `account` member: a `home_account_id` or a username (absent: the only account).
    public static func account(_ a: String?, field: String = "account") throws(NativeAuthError) -> AccountSelection {
        guard let a else { return .only }
        guard !a.isEmpty, a.utf8.count <= 512,
            !a.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
        else {
            throw .invalidArgument("account: must be a home_account_id or a username", field: field)
        }
        return .named(a)
    }

    public static func username(_ u: String?) throws(NativeAuthError) -> String {
        guard let u, !u.isEmpty else {
            throw NativeAuthError(.invalidUsername, "The username is empty.", field: "username")
        }
        guard u.utf8.count <= 256, !u.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw NativeAuthError(.invalidUsername, "The username is not valid.", field: "username")
        }
        return u
    }

    public static func password(
        _ p: String?,
        field: String = "password",
        required: Bool
    ) throws(NativeAuthError)
        -> Secret?
    {
        guard let p else {
            if required {
                throw NativeAuthError(.invalidPassword, "The password is empty.", field: field, reason: "empty")
            }
            return nil
        }
        guard !p.isEmpty else {
            throw NativeAuthError(.invalidPassword, "The password is empty.", field: field, reason: "empty")
        }
        guard p.utf8.count <= 1024, !p.utf8.contains(0) else {
            throw NativeAuthError(
                .invalidPassword,
                "The password is too long or contains a NUL character.",
                field: field,
                reason: "invalid"
            )
        }
        return Secret(p)
    }

    /// A correlation id chosen by the app: a UUID (it is sent as `client-request-id`), lower-cased.
    public static func correlationID(_ id: String?) throws(NativeAuthError) -> String? {
        guard let id else { return nil }
        let hex = Set("0123456789abcdefABCDEF".utf8)
        let groups = id.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.utf8.count) == [8, 4, 4, 4, 12], groups.allSatisfy({ $0.utf8.allSatisfy(hex.contains) })
        else {
            throw .invalidArgument(
                "correlation_id: must be a UUID (8-4-4-4-12 hexadecimal digits)",
                field: "correlation_id"
            )
        }
        return id.lowercased()
    }

    public static func code(_ c: String?) throws(NativeAuthError) -> Secret {
        guard let c, !c.isEmpty, c.utf8.count <= 64 else {
            throw NativeAuthError(.invalidCode, "The code is empty or too long.", field: "code")
        }
        return Secret(c)
    }

    public static func scopes(
        _ list: [String]?,
        field: String = "scopes",
        required: Bool = false
    )
        throws(NativeAuthError) -> [String]
    {
        guard let list else {
            if required {
                throw .invalidArgument("\(field): required (an array of scope strings)", field: field)
            }
            return []
        }
        if required && list.isEmpty { throw .invalidArgument("\(field): give at least one scope", field: field) }
        guard list.count <= 64 else { throw .invalidArgument("\(field): too many scopes", field: field) }
        for (i, s) in list.enumerated()
        where s.isEmpty || s.utf8.count > 512
            || s.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f })
        {
            throw .invalidArgument(
                "\(field)[\(i)]: a scope is a non-empty string without spaces",
                field: "\(field)[\(i)]"
            )
        }
        return list
    }
}

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

/// `na_call_api`.
public struct APIRequest: Sendable {
    public var url: String
    public var method: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
    public var token: TokenRequest

    /// Bearer tokens go only over https, or http to loopback hosts; the caller may not set Authorization itself.
    public init(
        url: String,
        method: String?,
        headers: [(name: String, value: String)],
        body: [UInt8],
        token: TokenRequest
    ) throws(NativeAuthError) {
        let parsed: HTTPURL
        do { parsed = try HTTPURL(url) } catch {
            throw .invalidArgument("url: not a valid absolute http(s) URL", field: "url")
        }
        if parsed.scheme == "http" && !parsed.isLoopback {
            throw .invalidArgument(
                "url: bearer tokens are only sent over https (or http to loopback hosts)",
                field: "url"
            )
        }
        let method = (method ?? "GET").uppercased()
        guard !method.isEmpty, method.count <= 16, method.allSatisfy({ $0 >= "A" && $0 <= "Z" }) else {
            throw .invalidArgument("method: an HTTP method such as GET or POST", field: "method")
        }
        guard !Self.forbiddenMethods.contains(method) else {
            throw .invalidArgument("method: \(method) is not allowed", field: "method")
        }
        for (name, value) in headers {
            let field = "headers.\(name.prefix(64))"
            guard !name.isEmpty, name.utf8.count <= 256, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw .invalidArgument(
                    "\(field): a header name is a token (letters, digits, !#$%&'*+-.^_`|~)",
                    field: field
                )
            }
            let lower = name.lowercased()
            if lower == "authorization" || lower == "dpop" {
                throw .invalidArgument("\(field): the library sets it", field: field)
            }
            guard !Self.forbiddenHeaders.contains(lower) else {
                throw .invalidArgument("\(field): the library and libcurl set this header", field: field)
            }
            guard value.utf8.count <= 8192, !value.utf8.contains(where: { $0 == 0x0d || $0 == 0x0a || $0 == 0 }) else {
                throw .invalidArgument("\(field): a header value may not contain CR, LF or NUL", field: field)
            }
        }
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.token = token
    }
}

extension APIRequest {
    /// Methods a caller may not send: TRACE echoes the request (and its bearer token) back; CONNECT opens a tunnel.
    static let forbiddenMethods: Set<String> = ["TRACE", "CONNECT", "TRACK"]
    /// Headers the transport owns: message framing and routing (smuggling-prone) and connection management.
    static let forbiddenHeaders: Set<String> = [
        "content-length", "transfer-encoding", "host", "connection", "keep-alive", "upgrade", "te", "trailer",
        "proxy-authorization", "proxy-connection", "expect",
    ]

    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(b)
        }
    }
}

/// What an API answered (an HTTP error status is an answer, not a library error).
public struct APIResponse: Sendable {
    public var status: Int
    /// Header names lower-cased; repeated fields kept in order.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
}

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
