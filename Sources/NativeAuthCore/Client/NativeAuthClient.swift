internal import NativeAuthCrypto
public import NativeAuthHTTP
import Synchronization

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
    /// The app's browser launcher (`na_client_set_browser_callback`), else the system's, looked up when a browser
    /// is opened; replacing it waits for invocations already running (see `BrowserSlot`).
    private let browsers: BrowserSlot
    /// Where the token cache is persisted (`MemoryTokenStore` keeps nothing).
    public let store: any TokenStore
    /// Set when the host frees the client: waits of calls still running end with `cancelled`.
    private let closing: ClosingFlag

    public init(
        configuration: ClientConfiguration,
        transport: any Transport,
        apiTransport: (any Transport)? = nil,
        clock: any Clock = SystemClock(),
        store: any TokenStore = MemoryTokenStore(),
        logger: Logger? = nil,
        listeners: any RedirectListeners = NoRedirectListeners(),
        systemBrowser: any BrowserLauncher = NoBrowser()
    ) throws(NativeAuthError) {
        self.configuration = configuration
        let logger = logger ?? Logger(level: configuration.logLevel)
        self.logger = logger
        self.clock = clock
        self.store = store
        self.apiTransport = apiTransport ?? transport
        let server = ServerAPI(configuration: configuration, transport: transport, clock: clock, logger: logger)
        let closing = ClosingFlag()
        self.closing = closing
        tokens = TokenService(
            server: server,
            cache: try TokenCache(store: store),
            clock: clock,
            logger: logger,
            isCancelled: { closing.isSet || CallCancellation.currentIsCancelled }
        )
        browsers = BrowserSlot(system: systemBrowser)
        context = FlowContext(
            server: server,
            tokens: tokens,
            clock: clock,
            logger: logger,
            listeners: listeners,
            browser: browsers
        )
    }

    /// The host is freeing the client: calls still running stop waiting (for a refresh another call or process is
    /// making, for a flow's redirect or approval) and answer `cancelled`.
    public func close() {
        closing.set()
        flows.cancelAll()
    }

    /// Whether `close` was called.
    public var isClosing: Bool { closing.isSet }

    /// Waits until the token refreshes of cancelled started calls, finishing on threads of their own, have stored
    /// their tokens (see `BackgroundRefreshes`; each is bounded by the request timeout and the cache file's lock
    /// wait). Called when the host frees the client, after its started calls ended.
    public func waitForBackgroundRefreshes() { tokens.background.drain() }

    /// Runs `body` (the host freeing the client) so that, when the calling thread is finishing a refresh in the
    /// background (a log callback of it freed the client), the client's other frees do not wait for that refresh.
    public func whileFreeing<R>(_ body: () -> R) -> R { tokens.background.whileFreeing(body) }

    /// Replaces the browser launcher (nil: back to the system's). Waits until invocations of the old one running on
    /// other threads have returned: once this returns, the old launcher is never called again. Returns false,
    /// changing nothing, when called from inside this client's own launcher.
    @discardableResult
    public func setBrowserLauncher(_ l: (any BrowserLauncher)?) -> Bool {
        browsers.replace(l)
    }

    /// Native auth is Entra's: other providers answer `not_supported`.
    private func requireNativeAuth() throws(NativeAuthError) {
        guard configuration.authorityType.isEntra else {
            throw NativeAuthError(
                .notSupported,
                "Native authentication exists only on Microsoft Entra; this client's authority_type is oidc."
            )
        }
    }

    /// A `browser_required` error with the username the app can pass on as `login_hint`.
    private func hinted(_ e: NativeAuthError, _ username: String?) -> NativeAuthError {
        guard e.code == .browserRequired, e.loginHint == nil, let username else { return e }
        var x = e
        x.loginHint = username
        return x
    }

    // MARK: - Native authentication

    /// A correlation id for a new flow or call: the app's, or a fresh UUID.
    private func correlation(_ chosen: String?) throws(NativeAuthError) -> String {
        if let chosen { return chosen }
        do { return try SecureRandom.uuid() } catch {
            throw NativeAuthError(.internal, "The system random generator failed.")
        }
    }

    /// `na_sign_in`.
    public func signIn(_ request: SignInRequest) throws(NativeAuthError) -> FlowResult {
        try requireNativeAuth()
        return try begin(
            .signIn(SignInFlow(request)),
            type: .signIn,
            correlation: request.correlationID,
            headers: request.requestHeaders
        )
    }

    /// `na_sign_up`.
    public func signUp(_ request: SignUpRequest) throws(NativeAuthError) -> FlowResult {
        try requireNativeAuth()
        return try begin(
            .signUp(SignUpFlow(request)),
            type: .signUp,
            correlation: request.correlationID,
            headers: request.requestHeaders
        )
    }

    /// `na_reset_password`.
    public func resetPassword(_ request: ResetPasswordRequest) throws(NativeAuthError) -> FlowResult {
        try requireNativeAuth()
        return try begin(
            .resetPassword(ResetPasswordFlow(request)),
            type: .resetPassword,
            correlation: request.correlationID,
            headers: request.requestHeaders
        )
    }

    // MARK: - Browser and device code

    /// `na_sign_in_interactive`.
    public func signInInteractive(_ request: InteractiveRequest) throws(NativeAuthError) -> FlowResult {
        flows.purgeExpired(now: clock.now())
        let flow = InteractiveFlow(request, configuration: configuration, secrets: try AuthorizationSecrets.generate())
        return try begin(.interactive(flow), type: .interactive, correlation: request.correlationID)
    }

    /// `na_sign_in_device_code`.
    public func signInDeviceCode(_ request: DeviceCodeRequest) throws(NativeAuthError) -> FlowResult {
        flows.purgeExpired(now: clock.now())
        return try begin(.deviceCode(DeviceCodeFlow(request)), type: .deviceCode, correlation: request.correlationID)
    }

    /// A new flow's first call: its start event and effects. A flow that goes on (or stays usable after a failure,
    /// as a sign-in whose up-front password was wrong) is stored, and named by the result or the error.
    private func begin(
        _ flow: Flow,
        type: FlowType,
        correlation chosen: String?,
        headers: [RequestHeader] = []
    ) throws(NativeAuthError) -> FlowResult {
        let id = try correlation(chosen)
        let closing = self.closing
        let call = CallCancellation.current
        let driver = FlowDriver(
            ctx: context.with(
                correlationID: id,
                requestHeaders: headers,
                isCancelled: { closing.isSet || call?.isCancelled == true }
            )
        )
        switch driver.run(flow, .start) {
        case .answered(let status, let next):
            guard let next else { return FlowResult(flowType: type, flow: nil, status: status) }
            let flowID = try flows.create(next, correlationID: id, requestHeaders: headers, now: clock.now())
            return FlowResult(flowType: next.type, flow: flowID, status: status)
        case .failed(let error, let next):
            var e = hinted(error, flow.username)
            if let next {
                e.flow = try flows.create(next, correlationID: id, requestHeaders: headers, now: clock.now())
            }
            throw e
        }
    }

    /// `na_flow_submit`: one action on a flow a previous result returned. Its requests carry the flow's correlation
    /// id. A failed step leaves the flow usable when the flow says so (the error then names the flow); otherwise the
    /// flow ends. A flow cancelled while the call ran is forgotten when it returns.
    public func submit(flow id: FlowID, _ action: FlowAction) throws(NativeAuthError) -> FlowResult {
        // A blocking call gets a cancellation of its own (a started call has one): the flow's cancel fires it, so a
        // step on the wire answers `cancelled` at once (include/nativeauth.h, na_flow_submit "cancel").
        let call = CallCancellation.current ?? CallCancellation()
        let (flow, correlationID, headers, fence) = try flows.checkout(id, now: clock.now(), call: call)
        let flows = self.flows
        let closing = self.closing
        let outcome = CallCancellation.with(call) {
            FlowDriver(
                ctx: context.with(
                    correlationID: correlationID,
                    requestHeaders: headers,
                    fence: fence,
                    isCancelled: { flows.isCancelled(id) || closing.isSet || call.isCancelled }
                )
            ).run(flow, .action(action))
        }
        switch outcome {
        case .answered(let status, let next):
            let kept = flows.checkin(id, next, now: clock.now())
            if case .signedIn = status { flows.noteSignedIn(id, now: clock.now()) }
            return FlowResult(flowType: next?.type ?? flow.type, flow: next == nil || !kept ? nil : id, status: status)
        case .failed(let error, let next):
            let kept = flows.checkin(id, next, now: clock.now())
            var e = hinted(error, flow.username)
            if next != nil && kept { e.flow = id }
            throw e
        }
    }

    /// A `na_flow_submit` request refused before its flow was touched (an empty code, a missing password): the
    /// error names the flow only when it is open, since only then can the caller retry it with a corrected value.
    public func refused(_ error: NativeAuthError, flow id: FlowID) -> NativeAuthError {
        var e = error
        e.flow = flows.isOpen(id, now: clock.now()) ? id : nil
        return e
    }

    /// Cancels a flow (`cancel`): forgotten at once; a call waiting on it (polling, or later a browser or device
    /// code wait) stops with `cancelled`, and nothing it finishes afterwards revives the flow.
    /// Throws `flow_invalid` when the flow had already signed the user in (a cancel that lost the race with the
    /// step completing it, or came later): nothing was cancelled, and the app should treat the user as signed in.
    public func cancel(flow id: FlowID) throws(NativeAuthError) {
        try Self.pastCancelling()
        try flows.cancel(id, now: clock.now())
    }

    // MARK: - Tokens, APIs, account

    /// `na_get_access_token`. With `"dpop": true`, a bearer token (of an account signed in without DPoP, found in a
    /// shared cache) is never served: `interaction_required`.
    public func accessToken(_ request: TokenRequest) throws(NativeAuthError) -> TokenResult {
        let result = try tokens.accessToken(request)
        if configuration.dpop, result.token.dpopKey == nil { throw ServerAPI.signedInWithoutDPoP() }
        return result
    }

    /// Changes whenever the token cache changes (see `TokenResult.cacheGeneration`).
    public var cacheGeneration: UInt64 { tokens.cache.generation }

    /// The client's clock (seconds since the epoch).
    public func now() -> Double { clock.now() }

    /// The selected account (`.only`: the only one; several → `account_required`).
    public func account(_ selection: AccountSelection = .only) throws(NativeAuthError) -> Account {
        try tokens.account(selection)
    }

    /// Every signed-in account.
    public func accounts() -> [Account] { tokens.accounts() }

    /// What a sign-out did.
    public struct SignOutResult: Sendable {
        public var removed: [Account]
        /// The provider's end-session page for the account signed out, when it has one (and one account was).
        public var endSessionURL: String?
        /// Whether the browser was asked to open it.
        public var browserOpened: Bool
        /// The cache file could not be written: signed out in memory only.
        public var storeFailure: NativeAuthError?
    }

    /// Forgets the selected account's tokens (every account's with `all`), locally as MSAL's native sign-out; with
    /// `all`, or when no account is left, open flows are cancelled too. The result names the provider's end-session
    /// URL for the account (`id_token_hint`, `post_logout_redirect_uri`, `client_id`, and on Entra `logout_hint`);
    /// with `browser` `.system` it is opened too, through a one-time URL on 127.0.0.1 (`EndSessionHandoff`: the
    /// call waits up to 10 s for the browser to fetch it).
    public func signOut(_ request: SignOutRequest) throws(NativeAuthError) -> SignOutResult {
        try Self.pastCancelling()
        var result = SignOutResult(removed: [], endSessionURL: nil, browserOpened: false)
        do { result.removed = try tokens.signOut(request.account, all: request.all) } catch {
            guard error.category == .storage, let removed = error.accounts else { throw error }
            result.removed = removed  // the store could not write it: signed out in memory all the same
            result.storeFailure = error
        }
        if request.all || tokens.cache.read({ $0.accounts.isEmpty }) { flows.cancelAll() }
        logger.log(.info, result.removed.isEmpty ? "sign-out: no account was signed in" : "signed out")
        if result.removed.count == 1, let account = result.removed.first {
            let server = context.server.with(correlationID: (try? correlation(nil)) ?? "")
            if let endpoint = (try? tokens.provider.metadata(server))??.endSessionEndpoint {
                result.endSessionURL = server.endSessionURL(
                    endpoint: endpoint,
                    idTokenHint: account.idToken,
                    logoutHint: account.claims["login_hint"]?.stringValue
                )
            }
        }
        if request.browser == .system, let url = result.endSessionURL {
            let clock = self.clock
            result.browserOpened = EndSessionHandoff.open(
                url,
                with: browsers,
                listeners: context.listeners,
                now: { clock.now() },
                logger: logger
            )
        }
        return result
    }

    /// `na_call_api`: gets the token (cache first), sends it as `Authorization: Bearer` (a DPoP-bound one as
    /// `Authorization: DPoP`, with a proof: `sendDPoP`), and answers one challenge
    /// of the API's `401`: `invalid_token` — a new token (a forced refresh) — or a claims challenge
    /// (`insufficient_claims`) — a new token with those claims (never from the cache), or `interaction_required`
    /// carrying them for `na_sign_in_interactive` — then retries once. A second challenge is the API's answer. An
    /// HTTP error status from the API is an answer, not an error.
    public func callAPI(_ request: APIRequest) throws(NativeAuthError) -> APIResponse {
        var token = try accessToken(request.token).token
        var response = try send(request, token)
        guard response.status == 401, let challenge = APIChallenge(header: response.header("www-authenticate")) else {
            return APIResponse(status: response.status, headers: response.headers, body: response.body)
        }
        var again = request.token
        again.forceRefresh = true
        switch challenge {
        case .invalidToken:
            logger.log(.info, "API answered 401 invalid_token; refreshing once")
        case .insufficientClaims(let claims):
            logger.log(.info, "API answered 401 with a claims challenge; asking for a token with its claims, once")
            again.claims = claims
        }
        do {
            token = try accessToken(again).token
        } catch {
            // The interactive sign-in that can satisfy the challenge needs its claims (the server's own, else the
            // API's).
            var e = error
            if e.category == .interaction, e.claims == nil, case .insufficientClaims(let claims) = challenge {
                e.claims = claims.json
            }
            throw e
        }
        response = try send(request, token)
        return APIResponse(status: response.status, headers: response.headers, body: response.body)
    }

    private func send(_ r: APIRequest, _ token: AccessToken) throws(NativeAuthError) -> HTTPResponse {
        if let key = token.dpopKey { return try sendDPoP(r, token, key: key) }
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

extension NativeAuthClient {
    /// A step that cannot be taken back once begun (a sign-out, a flow's cancel): a started call running it is past
    /// cancelling from here on — or, cancelled already, ends now.
    static func pastCancelling() throws(NativeAuthError) {
        guard let call = CallCancellation.current, !call.commitNow() else { return }
        throw .callCancelled("The call was cancelled before it began.")
    }
}

/// A flag set once, read from any thread.
final class ClosingFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}

/// No loopback listener (a client built without NativeAuthNet, as some tests build it): browser sign-ins with a
/// loopback redirect URI answer `network`.
public struct NoRedirectListeners: RedirectListeners {
    public init() {}
    public func listen(host: LoopbackHost, port: UInt16) -> (any RedirectListener)? { nil }
}
