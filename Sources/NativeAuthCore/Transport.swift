public import NativeAuthHTTP

/// How the core reaches the network. The production transport is `CurlHTTPClient`; tests use a fake.
public protocol Transport: Sendable {
    func send(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse
}

extension CurlHTTPClient: Transport {}

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
        }
    }
}
