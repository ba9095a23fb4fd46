internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON

/// Sending: form requests, the retry policy, DPoP proofs and nonces.
extension ServerAPI {
    /// What the server answered, decoded once.
    enum Answer {
        /// HTTP 200 with a JSON object.
        case ok(JSONValue)
        /// HTTP 200 `{"challenge_type":"redirect"}`: the web fallback.
        case redirect(reason: String?)
        /// An error envelope, with the whole body for flow data such as a continuation token.
        case error(ServerErrorEnvelope, body: JSONValue)
    }

    enum FormField {
        case text(String, String)
        case secret(String, Secret)
    }

    /// The body of a successful answer; a redirect answered at `site` (`nativeStep` where the client's challenge
    /// types decide: the starts and the first factor's challenges) or a mapped error is thrown.
    func ok(
        _ answer: Answer,
        _ context: ErrorContext,
        _ site: RedirectSite = .other
    ) throws(NativeAuthError) -> JSONValue {
        switch answer {
        case .ok(let body): return body
        case .redirect(let reason): throw browserRequired(reason, at: site)
        case .error(let envelope, _): throw NativeAuthError.from(envelope, context: context)
        }
    }

    func post(_ endpoint: Endpoint, _ fields: [FormField]) throws(NativeAuthError) -> Answer {
        try post(
            url: configuration.authority.endpoint(endpoint.rawValue),
            name: endpoint.rawValue,
            fields,
            telemetry: TelemetryOperation.of(endpoint)
        )
    }

    /// POSTs `fields` (client_id first) as a form and decodes the answer. Every such request carries a secret (a
    /// continuation token, a password, a code or a refresh token), so it is never sent twice where the server may
    /// have seen it (see `send`). The body is wiped once the exchange is over. With an Entra authority the request
    /// carries the server telemetry of `operation`, and its outcome is counted for the next (ServerTelemetry.swift).
    func post(
        url: String,
        name: String,
        _ fields: [FormField],
        telemetry operation: TelemetryOperation?,
        dpop: DPoPBinding? = nil
    ) throws(NativeAuthError) -> Answer {
        var body: [UInt8] = []
        for (i, field) in ([FormField.text("client_id", configuration.clientID)] + fields).enumerated() {
            if i > 0 { body.append(UInt8(ascii: "&")) }
            switch field {
            case .text(let name, let value):
                FormEncoding.append(name, to: &body)
                body.append(UInt8(ascii: "="))
                FormEncoding.append(value, to: &body)
            case .secret(let name, let secret):
                FormEncoding.append(name, to: &body)
                body.append(UInt8(ascii: "="))
                secret.withUnsafeBytes { FormEncoding.append(bytes: $0, to: &body) }
            }
        }
        let operation = configuration.authorityType.isEntra ? operation : nil
        var request = HTTPRequest(
            method: "POST",
            url: url,
            headers: [("Content-Type", "application/x-www-form-urlencoded")] + telemetryHeaders(operation),
            body: body
        )
        body.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } }
        defer { request.wipeBody() }
        var response: HTTPResponse
        do {
            response = try send(request, name: name, resendable: false, dpop: dpop)
        } catch {
            countTelemetry(operation, error)
            throw error
        }
        defer { response.wipeBody() }
        let answer = decode(response, name: name)
        countTelemetry(operation, answer)
        return answer
    }

    /// Sends with the retry policy:
    /// - nothing reached the server (connect failure, connect timeout): one retry after 0.5 s;
    /// - a 429 or 503 with a `Retry-After` of at most `retry_after_max_s`: wait it out, retry once; a longer one, or
    ///   one still answered after the retry, is the error `throttled` with `retry_after_s`;
    /// - a 5xx: one retry after 0.5 s (a POST was answered, so the server has seen it; one retry at most);
    /// - a timeout or a connection broken after the request went out: a GET is retried once; a POST, which carries
    ///   a secret, is not — presenting a refresh token twice can revoke its whole family on servers with reuse
    ///   detection (the transport does not resend it either: its body cannot be rewound).
    /// - with a DPoP proof (`dpop`): each attempt carries a fresh proof, and a nonce challenge is answered by one
    ///   more attempt with the server's nonce (`wantsNonceRetry`), which counts against none of the retries above.
    func send(
        _ request: HTTPRequest,
        name: String,
        resendable: Bool,
        dpop: DPoPBinding? = nil
    ) throws(NativeAuthError) -> HTTPResponse {
        var request = withAppHeaders(request)
        var attempt = 0
        var nonceRetried = false
        let target: DPoPTarget? = dpop == nil ? nil : try DPoPTarget(request.url)
        while true {
            attempt += 1
            if let dpop, let target { try attachProof(dpop, target: target, to: &request) }
            let started = clock.now()
            let response: HTTPResponse
            do {
                response = try transport.send(request)
            } catch {
                try retryAfterFailure(error, request, name: name, attempt: attempt, resendable: resendable)
                continue
            }
            let ms = Int((clock.now() - started) * 1000)
            logger.log(
                .verbose,
                "\(request.method) \(name) -> \(response.status) (\(ms) ms)",
                correlationID: correlationID
            )
            if let target, wantsNonceRetry(response, origin: target.origin, retried: nonceRetried) {
                nonceRetried = true
                attempt -= 1
                logger.log(.info, "\(name): the server asked for a DPoP nonce; sending once more with it")
                continue
            }
            if let wait = try retryAfterWait(response, name: name, attempt: attempt) {
                pause(wait)
                continue
            }
            if attempt == 1 && (response.status >= 500 || (resendable && response.status == 429)) {
                pause(0.5)
                continue
            }
            return response
        }
    }

    /// The request with the app's own headers, when it goes to the authority's origin (never to another origin a
    /// discovery document names, never to APIs: those are sent elsewhere).
    private func withAppHeaders(_ request: HTTPRequest) -> HTTPRequest {
        var request = request
        request.headers.append(("client-request-id", correlationID))
        if !configuration.requestHeaders.isEmpty || !flowHeaders.isEmpty,
            (try? HTTPURL(request.url))?.origin == configuration.authority.parsed.origin
        {
            let own = Set(flowHeaders.map { $0.name.lowercased() })
            let headers = configuration.requestHeaders.filter { !own.contains($0.name.lowercased()) } + flowHeaders
            request.headers += headers.map { ($0.name, $0.value) }
        }
        return request
    }

    /// After a transport failure: returns (having paused) when the attempt may be made again, else throws the error.
    private func retryAfterFailure(
        _ error: HTTPError,
        _ request: HTTPRequest,
        name: String,
        attempt: Int,
        resendable: Bool
    ) throws(NativeAuthError) {
        logger.log(
            .warning,
            "\(request.method) \(name) failed: \(error.kind.rawValue)",
            correlationID: correlationID
        )
        let nothingSent = error.kind == .connect || error.kind == .connectTimeout
        if attempt == 1 && (nothingSent || (resendable && (error.kind == .network || error.kind == .timeout))) {
            pause(0.5)
            return
        }
        var e = NativeAuthError(error)
        if error.kind != .cancelled { e.server = ServerErrorDetails(correlationID: correlationID) }
        throw e
    }

    /// A 429 or 503 with a `Retry-After`: the seconds to wait before the one retry, or the error `throttled` when the
    /// wait is too long or the retry was made; nil for any other answer.
    private func retryAfterWait(_ response: HTTPResponse, name: String, attempt: Int) throws(NativeAuthError) -> Double?
    {
        guard response.status == 429 || response.status == 503,
            let header = response.header("retry-after"),
            let wait = RetryAfter.seconds(header, now: clock.now())
        else { return nil }
        guard attempt == 1, wait <= configuration.retryAfterMaxSeconds else {
            var e = NativeAuthError(
                .throttled,
                "The server asked to wait \(Int(wait.rounded(.up))) s before trying again."
            )
            e.server = ServerErrorDetails(
                correlationID: correlationID,
                httpStatus: response.status,
                retryAfter: header
            )
            e.retryAfterSeconds = Int(wait.rounded(.up))
            throw e
        }
        logger.log(
            .info,
            "\(name): waiting \(Int(wait.rounded(.up))) s (Retry-After)",
            correlationID: correlationID
        )
        return wait
    }

    /// Waits before a retry, in slices that end early when the started call is cancelled (its retry is then
    /// refused by the transport before anything is sent).
    private func pause(_ seconds: Double) {
        guard let call = CallCancellation.current else { return clock.sleep(seconds) }
        var left = seconds
        while left > 1e-9 && !call.isCancelled {
            let slice = min(left, 0.05)
            clock.sleep(slice)
            left -= slice
        }
    }
}
