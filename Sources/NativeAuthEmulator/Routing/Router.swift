import NativeAuthJSON

/// One request as a handler sees it: the request, its context, and what the route's path captured.
struct Call: Sendable {
    let request: EmulatorRequest
    let context: RequestContext
    /// `{name}` segments of the route's pattern, and "mount": the segment the mount matched (e.g. the tenant).
    var parameters: [String: String] = [:]

    var now: Double { context.now }

    /// A POST's form fields, else the query.
    var form: [String: String] { request.method == "POST" ? (request.form ?? [:]) : request.query }

    /// The body as JSON: `{}` when empty, `null` when not JSON (the controls' bodies).
    var jsonBody: JSONValue {
        request.body.isEmpty ? JSONValue.object([:]) : ((try? JSONValue.parse(request.body)) ?? .null)
    }
}

/// An endpoint's handler. A thrown `ServiceError` is answered in the service's envelope, anything else as AADSTS50000.
typealias Handler = @Sendable (Call) throws -> EmulatorResponse

/// One endpoint: the methods it answers (any when empty) and its path below its mount, e.g. "oauth2/v2.0/token" or
/// "users/{email}".
struct Route: Sendable {
    let methods: Set<String>
    let pattern: [Substring]
    let handler: Handler

    init(_ methods: Set<String>, _ path: String, _ handler: @escaping Handler) {
        self.methods = methods
        pattern = path.split(separator: "/")
        self.handler = handler
    }

    /// The captured parameters when `method` and `segments` match.
    func match(_ method: String, _ segments: ArraySlice<Substring>) -> [String: String]? {
        guard methods.isEmpty || methods.contains(method), pattern.count == segments.count else { return nil }
        var parameters: [String: String] = [:]
        for (p, s) in zip(pattern, segments) {
            if p.hasPrefix("{") && p.hasSuffix("}") {
                parameters[String(p.dropFirst().dropLast())] = String(s)
            } else if p != s {
                return nil
            }
        }
        return parameters
    }
}

/// (method, path) → handler for the routes under one mount: the first matching route answers, else `fallback`. When
/// `refuse` answers a call, no route sees it.
struct RouteTable: Sendable {
    let routes: [Route]
    let fallback: Handler
    var refuse: (@Sendable (Call) -> EmulatorResponse?)? = nil

    func handle(_ call: Call, _ segments: ArraySlice<Substring>) throws -> EmulatorResponse {
        if let refusal = refuse?(call) { return refusal }
        for route in routes {
            if let parameters = route.match(call.request.method, segments) {
                var c = call
                c.parameters.merge(parameters) { _, new in new }
                return try route.handler(c)
            }
        }
        return try fallback(call)
    }
}

/// The emulator's URL space: mounts tried in order, then `fallback`. Paths are matched by their non-empty segments
/// ("/a//b/" is "a/b").
struct Router: Sendable {
    enum Mount: Sendable {
        /// Requests whose first segment satisfies the predicate, routed on the rest by the table.
        case segment(@Sendable (Substring) -> Bool, RouteTable)
        /// Exactly this path, any method.
        case path(String, Handler)
        /// Whatever handler the closure finds for the request (e.g. the configured sample APIs).
        case lookup(@Sendable (EmulatorRequest) -> Handler?)

        static func prefix(_ first: String, _ table: RouteTable) -> Mount { .segment({ $0 == first }, table) }
    }

    let mounts: [Mount]
    let fallback: Handler

    func handle(_ call: Call) throws -> EmulatorResponse {
        let segments = call.request.path.split(separator: "/", omittingEmptySubsequences: true)
        for mount in mounts {
            switch mount {
            case .segment(let matches, let table):
                guard let first = segments.first, matches(first) else { continue }
                var c = call
                c.parameters["mount"] = String(first)
                return try table.handle(c, segments.dropFirst())
            case .path(let path, let handler):
                if call.request.path == path { return try handler(call) }
            case .lookup(let find):
                if let handler = find(call.request) { return try handler(call) }
            }
        }
        return try fallback(call)
    }
}
