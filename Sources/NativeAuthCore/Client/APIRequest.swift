internal import NativeAuthHTTP
internal import NativeAuthJSON

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
        var seen = Set<String>()
        for (name, value) in headers {
            // A name that is not a token is not quoted back: it may be a whole line an app pasted, with a secret.
            guard !name.isEmpty, name.utf8.count <= 256, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw .invalidArgument(
                    "headers: a header name is a token of at most 256 characters (letters, digits, !#$%&'*+-.^_`|~)",
                    field: "headers"
                )
            }
            let field = "headers.\(name.prefix(64))"
            let lower = name.lowercased()
            // Names compare in any case (RFC 9110 §5.1): {"X-A": …, "x-a": …} would go out as two fields, which a
            // field that is not a list (User-Agent, Content-Type) may not be (§5.3).
            guard seen.insert(lower).inserted else {
                throw .invalidArgument("\(field): given twice (header names compare in any case)", field: field)
            }
            if lower == "authorization" || lower == "dpop" {
                throw .invalidArgument("\(field): the library sets it", field: field)
            }
            guard !Self.forbiddenHeaders.contains(lower) else {
                throw .invalidArgument("\(field): the library and libcurl set this header", field: field)
            }
            guard value.utf8.count <= 8192, value.utf8.allSatisfy(HeaderName.isValueByte) else {
                throw .invalidArgument(
                    "\(field): a header value of at most 8192 bytes without control characters (CR, LF, NUL, …)",
                    field: field
                )
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

    static func isTokenByte(_ b: UInt8) -> Bool { HeaderName.isTokenByte(b) }
}

/// What an API answered (an HTTP error status is an answer, not a library error).
public struct APIResponse: Sendable {
    public var status: Int
    /// Header names lower-cased; repeated fields kept in order.
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]
}
