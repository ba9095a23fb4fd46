internal import NativeAuthHTTP

/// The library version (also in `include/nativeauth.h` as NA_VERSION_*).
public enum NativeAuthVersion {
    public static let major = 0
    public static let minor = 1
    public static let patch = 0
    public static let string: StaticString = "0.1.0"
    /// The ABI version: the SONAME major (`libnativeauth.so.1`).
    public static let abi: Int32 = 1
    /// Sent as `x-client-SKU`: this library's own name — we never present ourselves as MSAL.
    public static let sku = "NativeAuth.Linux"
}

/// One configured client: flows, token cache, API calls. Typed values in, typed values out; thread-safe (every method
/// may be called from many threads at once).
public final class NativeAuthClient: Sendable {
    public let configuration: ClientConfiguration
    public let logger: Logger
    let clock: any Clock
    /// The transport for calls to the app's own APIs (no identity headers).
    let apiTransport: any Transport
    let flows = FlowRegistry()
    let tokens: TokenService
    let context: FlowContext

    public init(
        configuration: ClientConfiguration,
        transport: any Transport,
        apiTransport: (any Transport)? = nil,
        clock: any Clock = SystemClock(),
        store: any TokenStore = MemoryTokenStore(),
        logger: Logger? = nil,
        renderer: (@Sendable (AccessToken) -> RenderedToken?)? = nil
    ) {
        self.configuration = configuration
        let logger = logger ?? Logger(level: configuration.logLevel)
        self.logger = logger
        self.clock = clock
        self.apiTransport = apiTransport ?? transport
        let server = ServerAPI(configuration: configuration, transport: transport, clock: clock, logger: logger)
        tokens = TokenService(
            server: server,
            cache: TokenCache(store: store, renderer: renderer),
            clock: clock,
            logger: logger
        )
        context = FlowContext(server: server, tokens: tokens, clock: clock, logger: logger)
    }

    // MARK: - Native authentication

    /// `na_sign_in`.
    public func signIn(_ request: SignInRequest) throws(NativeAuthError) -> FlowResult {
        let transition: Transition
        do {
            transition = try SignInFlow.start(request, context)
        } catch {
            var e = error.error
            if let retry = error.retry { e.flow = try flows.create(retry, now: clock.now()) }
            throw e
        }
        return try begin(transition, type: .signIn)
    }

    /// `na_sign_up`.
    public func signUp(_ request: SignUpRequest) throws(NativeAuthError) -> FlowResult {
        try begin(SignUpFlow.start(request, context), type: .signUp)
    }

    /// `na_reset_password`.
    public func resetPassword(_ request: ResetPasswordRequest) throws(NativeAuthError) -> FlowResult {
        try begin(ResetPasswordFlow.start(request, context), type: .resetPassword)
    }

    /// `na_flow_submit`: one action on a flow a previous result returned. A failed step leaves the flow as it was
    /// when a retry makes sense (the error then names the flow); otherwise the flow ends.
    public func submit(flow id: FlowID, _ action: FlowAction) throws(NativeAuthError) -> FlowResult {
        let flow = try flows.checkout(id, now: clock.now())
        let transition: Transition
        do {
            transition = try flow.apply(action, context)
        } catch {
            let keep = keepsFlow(error)
            flows.checkin(id, keep ? flow : nil, now: clock.now())
            var e = error
            if keep { e.flow = id }
            throw e
        }
        flows.checkin(id, transition.next, now: clock.now())
        return FlowResult(
            flowType: transition.next?.type ?? flow.type,
            flow: transition.next == nil ? nil : id,
            status: transition.status
        )
    }

    /// A `na_flow_submit` request refused before its flow was touched (an empty code, a missing password): the
    /// error names the flow only when it is open, since only then can the caller retry it with a corrected value.
    public func refused(_ error: NativeAuthError, flow id: FlowID) -> NativeAuthError {
        var e = error
        e.flow = flows.isOpen(id, now: clock.now()) ? id : nil
        return e
    }

    /// Forgets a flow (`cancel`).
    public func cancel(flow id: FlowID) {
        flows.remove(id)
    }

    /// Stores the flow a start step left, if any.
    private func begin(_ transition: Transition, type: FlowType) throws(NativeAuthError) -> FlowResult {
        guard let next = transition.next else {
            return FlowResult(flowType: type, flow: nil, status: transition.status)
        }
        let id = try flows.create(next, now: clock.now())
        return FlowResult(flowType: next.type, flow: id, status: transition.status)
    }

    // MARK: - Tokens, APIs, account

    /// `na_get_access_token`.
    public func accessToken(_ request: TokenRequest) throws(NativeAuthError) -> TokenResult {
        try tokens.accessToken(request)
    }

    /// Changes whenever the token cache changes (see `TokenResult.cacheGeneration`).
    public var cacheGeneration: UInt64 { tokens.cache.generation }

    /// The client's clock (seconds since the epoch).
    public func now() -> Double { clock.now() }

    /// The signed-in account.
    public func account() throws(NativeAuthError) -> Account {
        guard let account = tokens.account() else { throw NativeAuthError(.noAccount, "No user is signed in.") }
        return account
    }

    /// Forgets the account, its tokens and any open flows (local, as MSAL's native sign-out). Returns whether an
    /// account was signed in.
    public func signOut() -> Bool {
        let had = tokens.removeAll()
        flows.removeAll()
        logger.log(.info, had ? "signed out" : "sign-out: no account was signed in")
        return had
    }

    /// `na_call_api`: gets the token (cache first), sends it as `Authorization: Bearer`, and on a 401 `invalid_token`
    /// refreshes once and retries once. An HTTP error status from the API is an answer, not an error.
    public func callAPI(_ request: APIRequest) throws(NativeAuthError) -> APIResponse {
        var token = try tokens.accessToken(request.token).token
        var response = try send(request, token)
        if response.status == 401, (response.header("www-authenticate") ?? "").contains("invalid_token") {
            logger.log(.info, "API answered 401 invalid_token; refreshing once")
            var forced = request.token
            forced.forceRefresh = true
            token = try tokens.accessToken(forced).token
            response = try send(request, token)
        }
        return APIResponse(status: response.status, headers: response.headers, body: response.body)
    }

    private func send(_ r: APIRequest, _ token: AccessToken) throws(NativeAuthError) -> HTTPResponse {
        var request = HTTPRequest(
            method: r.method,
            url: r.url,
            headers: r.headers + [("Authorization", "Bearer " + token.value.unsafeExposed)],
            body: r.body
        )
        defer { request.headers.removeAll() }
        do {
            let response = try apiTransport.send(request)
            logger.log(.verbose, "\(r.method) API -> \(response.status)")
            return response
        } catch {
            throw NativeAuthError(error)
        }
    }
}
