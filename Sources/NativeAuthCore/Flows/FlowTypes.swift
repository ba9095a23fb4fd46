/// The opaque name of a library-held flow ("f_…"), as results carry it.
public struct FlowID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// Which native-auth flow a result belongs to.
public enum FlowType: String, Sendable {
    case signIn = "sign_in"
    case signUp = "sign_up"
    case resetPassword = "reset_password"
    case interactive
    case deviceCode = "device_code"
}

/// What the app may do to a flow (`na_flow_submit`).
public enum FlowAction: Sendable {
    case submitCode(Secret)
    case resendCode
    case submitPassword(Secret)
    case submitAttributes([String: String])
    /// MFA: send a code to one of the methods (default: the first).
    case requestChallenge(methodID: String?)
    /// Strong-auth registration: the contact to register (`methodID` defaults to the flow's first method).
    case registerMethod(contact: String, methodID: String?)
    /// After sign-up or password reset: sign in with the flow's continuation token.
    case signIn(scopes: [String]?, claims: ClaimsRequest?)
    /// Browser and device-code sign-in: wait for the redirect or the approval, at most `timeoutMs` this call.
    case wait(timeoutMs: Int?)
    /// Browser sign-in: the redirect, as an app that captured it itself received it.
    case submitRedirect(String)

    /// The action without its arguments (what a flow reports it is waiting for).
    public enum Kind: String, Sendable, CaseIterable {
        case submitCode = "submit_code"
        case resendCode = "resend_code"
        case submitPassword = "submit_password"
        case submitAttributes = "submit_attributes"
        case requestChallenge = "request_challenge"
        case registerMethod = "register_method"
        case signIn = "sign_in"
        case wait
        case submitRedirect = "submit_redirect"
        case cancel
    }
}

/// A one-time code the server sent.
public struct CodeChallenge: Sendable, Equatable {
    /// The masked address the code went to ("o***a@co**o.com").
    public var sentTo: String
    public var channel: String
    public var codeLength: Int64
    /// Seconds before a resend is allowed, when the server says.
    public var resendInterval: Int64?
}

/// A strong-authentication method (MFA, or one to register).
public struct AuthMethod: Sendable, Equatable {
    public var id: String
    public var challengeType: String?
    public var channel: String?
    public var loginHint: String?
}

/// A sign-up attribute the server asks for.
public struct RequiredAttribute: Sendable, Equatable {
    public var name: String
    public var type: String
    public var required: Bool
    public var regex: String?
}

/// Where a flow stands after a call.
public enum FlowStatus: Sendable {
    case signedIn(Account, AccessToken)
    case codeRequired(CodeChallenge)
    case passwordRequired
    case attributesRequired([RequiredAttribute])
    case mfaRequired([AuthMethod])
    case registrationRequired([AuthMethod])
    case signUpCompleted
    case passwordResetCompleted
    /// A browser sign-in waits for its redirect (`"browser":"none"`).
    case browserPending(BrowserPending)
    /// A device-code sign-in waits for the user to enter the code.
    case deviceCodeRequired(DeviceCodeInfo)

    /// The status's name as result documents spell it (their `"status"`; also in traces): the one spelling.
    public var name: String {
        switch self {
        case .signedIn: return "signed_in"
        case .codeRequired: return "code_required"
        case .passwordRequired: return "password_required"
        case .attributesRequired: return "attributes_required"
        case .mfaRequired: return "mfa_required"
        case .registrationRequired: return "registration_required"
        case .signUpCompleted: return "sign_up_completed"
        case .passwordResetCompleted: return "password_reset_completed"
        case .browserPending: return "browser_pending"
        case .deviceCodeRequired: return "device_code_required"
        }
    }
}

/// A browser sign-in waiting for its redirect.
public struct BrowserPending: Sendable, Equatable {
    public var authorizationURL: String
    public var redirectURI: String
    /// Seconds until the sign-in expires.
    public var expiresIn: Int64
}

/// What a device-code sign-in shows the user.
public struct DeviceCodeInfo: Sendable, Equatable {
    public var userCode: String
    public var verificationURI: String
    public var verificationURIComplete: String?
    /// Seconds until the code expires.
    public var expiresIn: Int64
    /// Seconds between polls.
    public var interval: Int64
    /// The server's instructions, or the library's when it sent none.
    public var message: String
}

/// The answer of a flow call: its status, and the flow to continue (nil when it ended).
public struct FlowResult: Sendable {
    public var flowType: FlowType
    public var flow: FlowID?
    public var status: FlowStatus
}

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

extension FlowAction {
    public var kind: Kind {
        switch self {
        case .submitCode: return .submitCode
        case .resendCode: return .resendCode
        case .submitPassword: return .submitPassword
        case .submitAttributes: return .submitAttributes
        case .requestChallenge: return .requestChallenge
        case .registerMethod: return .registerMethod
        case .signIn: return .signIn
        case .wait: return .wait
        case .submitRedirect: return .submitRedirect
        }
    }
}
