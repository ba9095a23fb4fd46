/// One HTTP request. The body is sent as given; `FormEncoding` builds form bodies.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    /// Header fields in order. Names are sent as written.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(method: String = "GET", url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [])
    {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// Overwrites the body with zeros (it may have held a password, a code or a token).
    public mutating func wipeBody() {
        body.withUnsafeMutableBytes { raw in
            for i in raw.indices { raw[i] = 0 }
        }
    }

    /// A `POST` with an `application/x-www-form-urlencoded` body.
    public static func form(
        url: String,
        fields: [(String, String)],
        headers: [(name: String, value: String)] = []
    ) -> HTTPRequest {
        HTTPRequest(
            method: "POST",
            url: url,
            headers: [("Content-Type", "application/x-www-form-urlencoded")] + headers,
            body: Array(FormEncoding.encode(fields).utf8)
        )
    }
}

/// One HTTP response. Header names are lowercased; repeated fields are kept in order.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers.map { ($0.name.lowercased(), $0.value) }
        self.body = body
    }

    /// Overwrites the body with zeros (a token response holds tokens).
    public mutating func wipeBody() {
        body.withUnsafeMutableBytes { raw in
            for i in raw.indices { raw[i] = 0 }
        }
    }

    /// The first value of header `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let n = name.lowercased()
        return headers.first(where: { $0.name == n })?.value
    }
}

/// Why a request produced no HTTP response. Messages name the host at most — never bodies, headers or tokens.
public struct HTTPError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The URL is malformed, or its scheme or host is not allowed (plain http to a non-loopback host).
        case invalidURL = "invalid_url"
        /// Name resolution or TCP connect failed: nothing was sent.
        case connect
        /// The connect timeout elapsed before a connection was made: nothing was sent.
        case connectTimeout = "connect_timeout"
        /// The total timeout elapsed after the request may have reached the server.
        case timeout
        /// TLS handshake or certificate verification failed.
        case tls
        /// The response exceeded the configured size cap.
        case responseTooLarge = "response_too_large"
        /// The connection broke (possibly after the request reached the server), or the server sent something that
        /// is not HTTP.
        case network
        /// libcurl could not allocate or set up the transfer.
        case `internal`
        /// The started call the request belonged to was cancelled: the request was not sent, or was aborted.
        case cancelled
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// Settings of one HTTP client.
public struct HTTPClientOptions: Sendable {
    /// Connect timeout, in milliseconds.
    public var connectTimeoutMs: Int = 10_000
    /// Whole-request timeout, in milliseconds.
    public var totalTimeoutMs: Int = 30_000
    /// Largest response body accepted; a larger one fails with `.responseTooLarge`.
    public var maxResponseBytes: Int = 4 << 20
    /// CA bundle file used to verify servers, and nothing else; nil means `trust` (or, without it, the system's).
    public var caBundlePath: String? = nil
    /// What verifies servers when `caBundlePath` is nil; nil: the system's store (`TrustStore.system`).
    public var trust: TrustStore? = nil
    /// Where requests go; nil: the proxy environment of the process when the client is made (`ProxyPlan.environment`).
    public var proxy: ProxyPlan? = nil
    /// The CA file that verifies an `https` proxy; nil: the same trust as servers.
    public var proxyCABundlePath: String? = nil
    /// Called once, before the client's first request is sent (the host's log sink is set by then): the place to log
    /// the route and trust in force.
    public var beforeFirstRequest: (@Sendable () -> Void)? = nil
    /// Headers added to every request (e.g. x-client-SKU).
    public var defaultHeaders: [(name: String, value: String)] = []
    /// Add a fresh `client-request-id` (UUID v4) header to each request that does not carry one.
    public var addClientRequestID: Bool = true
    /// Idle handles (each keeps its connections) kept for reuse.
    public var maxIdleHandles: Int = 4

    public init() {}
}
