/// The messages of a browser sign-in's loopback redirect (RFC 8252 §7.3): what reached the listener and what it
/// answers. Value types only: the listener itself (sockets) is in NativeAuthNet, behind Core's `RedirectListener`.

/// A request that reached the loopback listener: the authorization response of a browser sign-in (RFC 8252 §7.3),
/// or the one-time start page that sends the browser on to the provider.
public struct RedirectRequest: Sendable {
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The query's parameters (GET), or the form's (a `form_post` POST).
    public var parameters: [String: String]
    /// The request's cookies by name (the first of a repeated name).
    public var cookies: [String: String]

    public init(method: String, path: String, parameters: [String: String], cookies: [String: String] = [:]) {
        self.method = method
        self.path = path
        self.parameters = parameters
        self.cookies = cookies
    }
}

/// What the listener answers a request with, and whether the wait is over.
public struct RedirectReply: Sendable {
    public enum Ending: Sendable, Equatable {
        /// The wait goes on.
        case none
        /// The authorization response itself: answered, then the listener closes and the wait returns it.
        case accepted
        /// Something that ends the sign-in (a start page fetched twice): answered, then the listener closes.
        case stopped
    }

    public var status: Int
    public var html: String
    /// Extra headers (`Location`, `Set-Cookie`). A value with a control character is never written: the reply
    /// becomes a 500 instead.
    public var headers: [(name: String, value: String)]
    public var ending: Ending

    public var accepted: Bool { ending == .accepted }

    public init(status: Int, html: String, headers: [(name: String, value: String)] = [], ending: Ending = .none) {
        self.status = status
        self.html = html
        self.headers = headers
        self.ending = ending
    }

    public init(status: Int, html: String, accepted: Bool) {
        self.init(status: status, html: html, ending: accepted ? .accepted : .none)
    }
}

/// How a wait on a loopback listener ended.
public enum RedirectWaitOutcome: Sendable {
    case accepted(RedirectRequest)
    /// The decision function ended the wait without an authorization response (`RedirectReply.Ending.stopped`).
    case stopped(RedirectRequest)
    case timedOut
    case cancelled
}

public enum LoopbackHost: Sendable {
    /// 127.0.0.1 only (a `http://127.0.0.1` redirect URI).
    case ipv4
    /// 127.0.0.1 and ::1 on the same port (a `http://localhost` redirect URI: a browser may try either).
    case localhost
}
