import NativeAuthCore

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
    case storage = -10

    /// The status of an error: the one place error categories become `NA_E*` codes.
    public init(_ error: NativeAuthError) {
        self.init(error.category)
    }

    public init(_ category: NativeAuthError.Category) {
        switch category {
        case .invalidArgument: self = .invalidArgument
        case .auth: self = .auth
        case .notFound: self = .notFound
        case .interaction: self = .interaction
        case .network: self = .network
        case .server: self = .server
        case .state: self = .state
        case .outOfMemory: self = .noMemory
        case .internal: self = .internal
        case .storage: self = .storage
        }
    }

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
        case .storage: return "NA_ESTORAGE"
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
        case .storage: return "token cache storage error"
        }
    }
}
