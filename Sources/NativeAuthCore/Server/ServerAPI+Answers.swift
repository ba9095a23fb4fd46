internal import NativeAuthHTTP
internal import NativeAuthJSON

extension ServerAPI {
    /// Decodes an answer once: a JSON object of HTTP 200 (or the web fallback's `redirect`), else the error envelope
    /// with the whole body for flow data (a continuation token, attributes).
    func decode(_ response: HTTPResponse, name: String) -> Answer {
        let correlation = correlationID.isEmpty ? response.header("client-request-id") : correlationID
        // The identity server answers JSON: a body it labels as something else (an HTML error page of a proxy, a
        // captive portal) is not read as an answer, whatever it contains.
        let contentType = response.header("content-type")?.lowercased()
        let labelledJSON = contentType.map { $0.contains("json") } ?? true
        let body = labelledJSON ? ((try? JSONValue.parse(response.body)) ?? .null) : .null
        if response.status == 200 {
            guard case .object = body else {
                let details = ServerErrorDetails(correlationID: correlation, httpStatus: 200)
                return .error(
                    ServerErrorEnvelope(details: details, invalidAttributes: []),
                    body: .null
                )
            }
            if body["challenge_type"]?.stringValue == "redirect" {
                return .redirect(reason: body["redirect_reason"]?.stringValue)
            }
            return .ok(body)
        }
        let details = ServerErrorDetails(
            error: body["error"]?.stringValue,
            suberror: body["suberror"]?.stringValue,
            errorCodes: body["error_codes"]?.arrayValue?.compactMap(\.intValue) ?? [],
            correlationID: correlation,
            traceID: body["trace_id"]?.stringValue ?? response.header("x-ms-request-id"),
            httpStatus: response.status,
            retryAfter: response.header("retry-after")
        )
        if let error = details.error {
            let sub = details.suberror.map { " / " + $0 } ?? ""
            let code = details.errorCodes.first.map { " (\($0))" } ?? ""
            logger.log(.info, "\(name) answered \(error)\(sub)\(code)", correlationID: details.correlationID)
        }
        var envelope = ServerErrorEnvelope(
            details: details,
            invalidAttributes: body["invalid_attributes"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        )
        if details.errorCodes.contains(90100) {
            envelope.invalidParameter = InvalidParameter(description: body["error_description"]?.stringValue)
        }
        // A claims challenge (conditional access): what the interactive sign-in must ask for.
        envelope.claims = body["claims"]?.stringValue.flatMap { $0.isEmpty || $0.utf8.count > 8192 ? nil : $0 }
        return .error(envelope, body: body)
    }
}
