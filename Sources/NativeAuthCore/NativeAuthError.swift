public import NativeAuthJSON

/// The coarse outcome of a C ABI call; the values are the `NA_*` codes of `include/nativeauth.h` and are permanent.
public enum NAStatus: Int32, Sendable, CaseIterable {
    case ok = 0
    case invalidArgument = -1
    case auth = -2
    case notFound = -3
    case interaction = -4
    case network = -5
    case server = -6
    case state = -7
    case noMemory = -8
    case `internal` = -9

    /// The `NA_*` macro name.
    public var name: StaticString {
        switch self {
        case .ok: return "NA_OK"
        case .invalidArgument: return "NA_EINVAL"
        case .auth: return "NA_EAUTH"
        case .notFound: return "NA_ENOTFOUND"
        case .interaction: return "NA_EINTERACTION"
        case .network: return "NA_ENETWORK"
        case .server: return "NA_ESERVER"
        case .state: return "NA_ESTATE"
        case .noMemory: return "NA_ENOMEM"
        case .internal: return "NA_EINTERNAL"
        }
    }

    /// A one-line English description (static storage, as `na_status_str` returns it).
    public var summary: StaticString {
        switch self {
        case .ok: return "success"
        case .invalidArgument: return "invalid argument"
        case .auth: return "authentication failed"
        case .notFound: return "not found"
        case .interaction: return "user interaction required"
        case .network: return "network error"
        case .server: return "server error"
        case .state: return "flow state error"
        case .noMemory: return "out of memory"
        case .internal: return "internal error"
        }
    }
}

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

    public init(error: String? = nil, suberror: String? = nil, errorCodes: [Int64] = [], correlationID: String? = nil,
                traceID: String? = nil, httpStatus: Int? = nil) {
        self.error = error
        self.suberror = suberror
        self.errorCodes = errorCodes
        self.correlationID = correlationID
        self.traceID = traceID
        self.httpStatus = httpStatus
    }

    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let error { o["error"] = .string(error) }
        if let suberror { o["suberror"] = .string(suberror) }
        if !errorCodes.isEmpty { o["error_codes"] = .array(errorCodes.map { .int($0) }) }
        if let correlationID { o["correlation_id"] = .string(correlationID) }
        if let traceID { o["trace_id"] = .string(traceID) }
        if let httpStatus { o["http_status"] = .int(Int64(httpStatus)) }
        if let retryAfter { o["retry_after"] = .string(retryAfter) }
        return .object(o)
    }
}

/// The one error type of the library: a stable `code` an app can branch on, a human `message` that never holds a
/// secret, the server's details when there was a server answer, and extra documented members (e.g. `flow`).
public struct NativeAuthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable, documented error codes. Only ever added to.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let invalidArgument = Code(rawValue: "invalid_argument")
        public static let invalidHandle = Code(rawValue: "invalid_handle")
        public static let notSupported = Code(rawValue: "not_supported")
        public static let outOfMemory = Code(rawValue: "out_of_memory")
        public static let network = Code(rawValue: "network")
        public static let timeout = Code(rawValue: "timeout")
        public static let tls = Code(rawValue: "tls")
        public static let server = Code(rawValue: "server")
        public static let `internal` = Code(rawValue: "internal")
        // Authentication outcomes (NA_EAUTH)
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
        // The user must act (NA_EINTERACTION)
        public static let browserRequired = Code(rawValue: "browser_required")
        public static let interactionRequired = Code(rawValue: "interaction_required")
        public static let refreshTokenExpired = Code(rawValue: "refresh_token_expired")
        public static let passwordChangeRequired = Code(rawValue: "password_change_required")
        // Flow state (NA_ESTATE)
        public static let flowExpired = Code(rawValue: "flow_expired")
        public static let flowInvalid = Code(rawValue: "flow_invalid")
        // Nothing to act on (NA_ENOTFOUND)
        public static let noAccount = Code(rawValue: "no_account")
        // Configuration problems reported by the server (NA_EINVAL)
        public static let invalidScope = Code(rawValue: "invalid_scope")
        public static let invalidClient = Code(rawValue: "invalid_client")
    }

    public var code: Code
    public var message: String
    public var server: ServerErrorDetails?
    /// Extra members of the error object (documented per code).
    public var extra: [String: JSONValue]

    public init(_ code: Code, _ message: String, server: ServerErrorDetails? = nil, extra: [String: JSONValue] = [:]) {
        self.code = code
        self.message = message
        self.server = server
        self.extra = extra
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The `NA_*` status for this error's code — the one place codes are mapped.
    public var status: NAStatus {
        switch code {
        case .invalidArgument, .invalidHandle, .notSupported, .invalidScope, .invalidClient: return .invalidArgument
        case .outOfMemory: return .noMemory
        case .network, .timeout, .tls: return .network
        case .server: return .server
        case .invalidUsername, .userNotFound, .invalidCredentials, .invalidCode, .invalidPassword, .userAlreadyExists,
             .attributesInvalid, .userHasNoPassword, .invalidContact, .contactBlocked, .authMethodBlocked:
            return .auth
        case .browserRequired, .interactionRequired, .refreshTokenExpired, .passwordChangeRequired: return .interaction
        case .flowExpired, .flowInvalid: return .state
        case .noAccount: return .notFound
        default: return .internal
        }
    }

    /// `{"v":1,"error":{"code":…,"message":…,"server":{…}, …extra}}`
    public var document: JSONValue {
        var e = extra
        e["code"] = .string(code.rawValue)
        e["message"] = .string(message)
        if let server { e["server"] = server.json }
        return ["v": 1, "error": .object(e)]
    }

    public static func invalidArgument(_ message: String) -> NativeAuthError { NativeAuthError(.invalidArgument, message) }

    /// Maps a field-access error ("cache.path: expected string, found integer") to `invalid_argument`.
    public init(_ field: JSONFieldError) {
        self.init(.invalidArgument, field.description, extra: field.path.isEmpty ? [:] : ["field": .string(field.path)])
    }
}
