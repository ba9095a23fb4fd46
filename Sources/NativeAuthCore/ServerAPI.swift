public import NativeAuthJSON
internal import NativeAuthHTTP

/// The native-auth and OAuth endpoints this library calls (spec §1.2), as suffixes of the authority.
public enum Endpoint: String, Sendable {
    case initiate = "/oauth2/v2.0/initiate"
    case challenge = "/oauth2/v2.0/challenge"
    case introspect = "/oauth2/v2.0/introspect"
    case token = "/oauth2/v2.0/token"
    case signUpStart = "/signup/v1.0/start"
    case signUpChallenge = "/signup/v1.0/challenge"
    case signUpContinue = "/signup/v1.0/continue"
    case resetStart = "/resetpassword/v1.0/start"
    case resetChallenge = "/resetpassword/v1.0/challenge"
    case resetContinue = "/resetpassword/v1.0/continue"
    case resetSubmit = "/resetpassword/v1.0/submit"
    case resetPoll = "/resetpassword/v1.0/poll_completion"
    case registerIntrospect = "/register/v1.0/introspect"
    case registerChallenge = "/register/v1.0/challenge"
    case registerContinue = "/register/v1.0/continue"
}

/// What the server answered, decoded once.
public enum ServerAnswer: Sendable {
    /// HTTP 200 with a JSON object.
    case ok(JSONValue)
    /// HTTP 200 `{"challenge_type":"redirect"}`: the web fallback (spec §3).
    case redirect(reason: String?)
    /// An error envelope (spec §1.6) with the whole body, for flow data such as `continuation_token`.
    case error(ServerErrorDetails, body: JSONValue)
}

/// The protocol client: builds form requests, sends them through the transport with the retry policy, and decodes
/// answers. Knows nothing of flows.
struct ServerAPI: Sendable {
    let configuration: ClientConfiguration
    let transport: any Transport
    let clock: any Clock
    let logger: Logger
    /// The longest `Retry-After` the library waits for before retrying once; longer ones fail at once.
    static let maxRetryAfter = 10.0

    func url(_ endpoint: Endpoint) -> String { configuration.authority.endpoint(endpoint.rawValue) }

    /// POSTs `fields` (client_id added) to `endpoint` and decodes the answer.
    func post(_ endpoint: Endpoint, _ fields: [(String, String)]) throws(NativeAuthError) -> ServerAnswer {
        try post(url: url(endpoint), name: endpoint.rawValue, fields)
    }

    func post(url: String, name: String, _ fields: [(String, String)]) throws(NativeAuthError) -> ServerAnswer {
        let request = HTTPRequest.form(url: url, fields: [("client_id", configuration.clientID)] + fields)
        let response = try send(request, name: name)
        return decode(response, name: name)
    }

    /// GETs a JSON document (OIDC discovery).
    func getJSON(url: String, name: String) throws(NativeAuthError) -> JSONValue {
        let response = try send(HTTPRequest(url: url), name: name)
        guard response.status == 200, let doc = try? JSONValue.parse(response.body), case .object = doc else {
            throw NativeAuthError(.server, "Unexpected answer from \(name) (HTTP \(response.status)).",
                                  server: ServerErrorDetails(correlationID: response.header("client-request-id"), httpStatus: response.status))
        }
        return doc
    }

    /// Sends with the retry policy (spec §1.5): one retry after a network error or a 5xx (after 0.5 s), and after a
    /// 429/503 honouring `Retry-After` up to `maxRetryAfter` seconds.
    func send(_ request: HTTPRequest, name: String) throws(NativeAuthError) -> HTTPResponse {
        var attempt = 0
        while true {
            attempt += 1
            let started = clock.now()
            let response: HTTPResponse
            do {
                response = try transport.send(request)
            } catch {
                logger.log(.warning, "\(request.method) \(name) failed: \(error.kind.rawValue)")
                if attempt == 1 && (error.kind == .network || error.kind == .connect) {
                    clock.sleep(0.5)
                    continue
                }
                throw NativeAuthError(error)
            }
            let ms = Int((clock.now() - started) * 1000)
            logger.log(.verbose, "\(request.method) \(name) -> \(response.status) (\(ms) ms)", correlationID: response.header("client-request-id"))
            if attempt == 1 && (response.status >= 500 || response.status == 429) {
                let retryAfter = response.header("retry-after").flatMap { Double($0.trimmedSpaces) }
                if let ra = retryAfter, ra > Self.maxRetryAfter {
                    return response  // too long to wait inside a blocking call: report it
                }
                if response.status == 429 && retryAfter == nil { return response }
                clock.sleep(retryAfter ?? 0.5)
                continue
            }
            return response
        }
    }

    func decode(_ response: HTTPResponse, name: String) -> ServerAnswer {
        let correlation = response.header("client-request-id")
        let body = (try? JSONValue.parse(response.body)) ?? .null
        if response.status == 200 {
            guard case .object = body else {
                return .error(ServerErrorDetails(correlationID: correlation, httpStatus: 200), body: .null)
            }
            if body["challenge_type"]?.stringValue == "redirect" { return .redirect(reason: body["redirect_reason"]?.stringValue) }
            return .ok(body)
        }
        var details = ServerErrorDetails(error: body["error"]?.stringValue, suberror: body["suberror"]?.stringValue,
                                         errorCodes: body["error_codes"]?.arrayValue?.compactMap(\.intValue) ?? [],
                                         correlationID: body["correlation_id"]?.stringValue ?? correlation,
                                         traceID: body["trace_id"]?.stringValue ?? response.header("x-ms-request-id"),
                                         httpStatus: response.status)
        if let ra = response.header("retry-after") { details.retryAfter = ra }
        if details.error != nil {
            logger.log(.info, "\(name) answered \(details.error ?? "")\(details.suberror.map { " / " + $0 } ?? "") \(details.errorCodes.first.map { "(\($0))" } ?? "")",
                       correlationID: details.correlationID)
        }
        return .error(details, body: body)
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmedSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
