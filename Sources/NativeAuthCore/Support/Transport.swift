public import NativeAuthHTTP

/// How the core reaches the network. The production transport is NativeAuthNet's libcurl client, wired in by the
/// composition root (the C ABI's `ClientFactory`); tests use a fake.
public protocol Transport: Sendable {
    func send(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse
}

/// A loopback listener a browser sign-in (or a sign-out's start page) waits on (RFC 8252 loopback redirect). The
/// production listener is NativeAuthNet's; it is used by one thread at a time (a flow is checked out).
public protocol RedirectListener: AnyObject, Sendable {
    /// The port it listens on (the kernel's choice when 0 was asked for).
    var port: UInt16 { get }
    var isOpen: Bool { get }
    /// Serves requests until `decide` ends the wait, `deadline` passes (seconds on `now`'s clock), or `isCancelled`
    /// says so (checked at least every 50 ms).
    func wait(
        deadline: Double,
        now: () -> Double,
        isCancelled: () -> Bool,
        decide: (RedirectRequest) -> RedirectReply
    ) -> RedirectWaitOutcome
    /// Closes every socket (idempotent).
    func shutdown()
}

/// Opens loopback listeners (the seam the composition root fills; tests give fakes).
public protocol RedirectListeners: Sendable {
    /// Listens on `host` (127.0.0.1, or 127.0.0.1 and ::1) on `port` (0: an ephemeral one); nil when it cannot.
    func listen(host: LoopbackHost, port: UInt16) -> (any RedirectListener)?
}

extension NativeAuthError {
    /// Maps a transport failure to the library's error codes (`network`, `timeout`, `tls`, `invalid_argument`).
    public init(_ e: HTTPError) {
        switch e.kind {
        case .timeout, .connectTimeout: self.init(.timeout, e.message)
        case .tls: self.init(.tls, e.message)
        case .invalidURL: self.init(.invalidArgument, e.message)
        case .responseTooLarge: self.init(.server, e.message)
        case .internal: self.init(.internal, e.message)
        case .connect, .network: self.init(.network, e.message)
        case .cancelled: self = .callCancelled(e.message)
        }
    }
}
