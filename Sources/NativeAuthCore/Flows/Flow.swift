/// A library-held flow: one of the state machines, each in its own file. None does I/O: `on` answers what the
/// driver (`FlowDriver`) must do next.
enum Flow: Sendable {
    case signIn(SignInFlow)
    case signUp(SignUpFlow)
    case resetPassword(ResetPasswordFlow)
    case strongAuth(StrongAuthFlow)
    case interactive(InteractiveFlow)
    case deviceCode(DeviceCodeFlow)

    /// MFA and registration continue a sign-in, so they report `sign_in`.
    var type: FlowType {
        switch self {
        case .signIn, .strongAuth: return .signIn
        case .signUp: return .signUp
        case .resetPassword: return .resetPassword
        case .interactive: return .interactive
        case .deviceCode: return .deviceCode
        }
    }

    /// The user the flow signs in, when it knows (the `login_hint` of a `browser_required` fallback).
    var username: String? {
        switch self {
        case .signIn(let f): return f.username
        case .signUp(let f): return f.username
        case .resetPassword(let f): return f.username
        default: return nil
        }
    }

    /// When the flow ends by itself (a browser or device-code sign-in's own lifetime), if it does.
    var expiresAt: Double? {
        switch self {
        case .interactive(let f): return f.expiresAt
        case .deviceCode(let f): return f.expiresAt
        default: return nil
        }
    }

    mutating func on(_ event: FlowEvent, at now: Double) -> FlowEffect {
        switch self {
        case .signIn(var f):
            defer { self = .signIn(f) }
            return f.on(event, at: now)
        case .signUp(var f):
            defer { self = .signUp(f) }
            return f.on(event, at: now)
        case .resetPassword(var f):
            defer { self = .resetPassword(f) }
            return f.on(event, at: now)
        case .strongAuth(var f):
            defer { self = .strongAuth(f) }
            return f.on(event, at: now)
        case .interactive(var f):
            defer { self = .interactive(f) }
            return f.on(event, at: now)
        case .deviceCode(var f):
            defer { self = .deviceCode(f) }
            return f.on(event, at: now)
        }
    }
}

/// Whether a sign-in may be stored when its answer arrives: not if the user signed out since `signOutEpoch`, nor if
/// the flow was cancelled (`fence`; nil for the first call of a flow, which no one can cancel yet).
struct SignInAdmission: Sendable {
    var signOutEpoch: UInt64
    var fence: FlowFence?
    /// The started call this step runs in (`na_start`), whose cancel is ordered with the storing too.
    var call: CallCancellation? = nil
}

/// What a flow needs to take a step: the server (its requests carry the flow's correlation id), the token service
/// that keeps a sign-in's tokens, the clock, the logger, and whether the app cancelled the flow meanwhile.
struct FlowContext: Sendable {
    let server: ServerAPI
    let tokens: TokenService
    let clock: any Clock
    let logger: Logger
    /// Where browser sign-ins listen for their redirect.
    let listeners: any RedirectListeners
    /// The browser (the app's callback, else the system's), looked up when a flow opens it.
    let browser: any BrowserLauncher
    var isCancelled: @Sendable () -> Bool = { false }
    /// What decides whether a sign-in this call completes may still be stored: the sign-out epoch when the call
    /// began, and the flow's fence against a cancel (see `TokenService.acceptSignIn`).
    var epoch = SignInAdmission(signOutEpoch: 0, fence: nil)

    var correlationID: String { server.correlationID }

    /// This context for one call of a flow.
    func with(
        correlationID: String,
        requestHeaders: [RequestHeader] = [],
        fence: FlowFence? = nil,
        isCancelled: @escaping @Sendable () -> Bool = { false }
    ) -> FlowContext {
        var server = server.with(correlationID: correlationID)
        server.flowHeaders = requestHeaders
        var c = FlowContext(
            server: server,
            tokens: tokens,
            clock: clock,
            logger: logger,
            listeners: listeners,
            browser: browser
        )
        c.isCancelled = isCancelled
        c.epoch = SignInAdmission(
            signOutEpoch: tokens.cache.signOutEpoch,
            fence: fence,
            call: CallCancellation.current
        )
        return c
    }

    func log(_ level: LogLevel, _ message: @autoclosure () -> LogMessage) {
        logger.log(level, message(), correlationID: correlationID)
    }

    /// Waits `seconds`, in short slices so that a cancel from another thread ends the wait promptly (`cancelled`).
    func sleep(_ seconds: Double) throws(NativeAuthError) {
        var left = seconds
        while left > 0 {
            if isCancelled() { throw NativeAuthError(.cancelled, "The flow was cancelled.") }
            let slice = min(left, 0.05)
            clock.sleep(slice)
            left -= slice
        }
        if isCancelled() { throw NativeAuthError(.cancelled, "The flow was cancelled.") }
    }
}
