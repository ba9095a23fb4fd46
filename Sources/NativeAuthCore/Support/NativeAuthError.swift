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

    /// Stable, documented error codes. Only ever added to. The constants and `Code.table`, which lists every one, are
    /// generated from docs/errors.tsv (ErrorCodes.swift).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

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
