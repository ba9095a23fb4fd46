import NativeAuthJSON

/// An error answer in the service's envelope (`error`, `error_description` with trace lines, `error_codes`,
/// `timestamp`, `trace_id`, `correlation_id`, `error_uri`, `suberror`). The errors the emulator answers are named in
/// `ServiceErrorCatalogue.swift`; only user-injected ones (`token_errors`, faults) are built elsewhere.
struct ServiceError: Error {
    var status = 400
    var error: String
    var codes: [Int]
    var text: String
    var suberror: String? = nil
    var extra: [String: JSONValue] = [:]

    init(
        _ error: String,
        _ codes: [Int],
        _ text: String,
        suberror: String? = nil,
        status: Int = 400,
        extra: [String: JSONValue] = [:]
    ) {
        self.error = error
        self.codes = codes
        self.text = text
        self.suberror = suberror
        self.status = status
        self.extra = extra
    }

    /// The same error carrying the members of `extra` too (a continuation token, required attributes, …).
    func with(_ extra: [String: JSONValue]) -> ServiceError {
        var e = self
        e.extra.merge(extra) { _, new in new }
        return e
    }

    /// The answer: the envelope, with the request's trace and correlation ids and time.
    func response(_ ctx: RequestContext) -> EmulatorResponse {
        let ts = serviceTimestamp(ctx.now)
        var body = extra
        body["error"] = .string(error)
        body["error_description"] = .string(
            "\(text)\r\nTrace ID: \(ctx.traceID)\r\nCorrelation ID: \(ctx.correlationID)\r\nTimestamp: \(ts)"
        )
        body["error_codes"] = .array(codes.map { .int(Int64($0)) })
        body["timestamp"] = .string(ts)
        body["trace_id"] = .string(ctx.traceID)
        body["correlation_id"] = .string(ctx.correlationID)
        if let code = codes.first { body["error_uri"] = .string("\(ctx.baseURL)/error?code=\(code)") }
        if let suberror { body["suberror"] = .string(suberror) }
        return .json(.object(body), status: status)
    }
}
