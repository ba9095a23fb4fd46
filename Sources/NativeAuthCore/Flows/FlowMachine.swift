internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON

// The vocabulary every flow speaks with its driver. A flow is a value-type state machine that does no I/O: each
// `mutating func on(_ event:at:) -> FlowEffect` looks at the event and its state, moves to its next state, and answers
// what the driver must do next — send one server request, wait, store a sign-in, open the browser, listen for the
// redirect, or answer the app. The driver (`FlowDriver`) performs effects and feeds the results back as events. Model:
// async-http-client's `RequestBag.StateMachine` (a state enum, one method per event returning an action).

/// One request a flow asks its driver to send. `ServerAPI` turns it into the wire request (the driver's `perform`).
enum ServerCall: Sendable {
    case initiate(username: String)
    /// A sign-in's challenge (`context` `.mfaChallenge` for the second factor, with the chosen method).
    case challenge(ContinuationToken, methodID: String?, context: ErrorContext)
    case token(NativeGrant, scopes: [String], claims: ClaimsRequest?)
    case introspect(ContinuationToken)
    case registerIntrospect(ContinuationToken)
    case registerChallenge(ContinuationToken, method: AuthMethod, target: String)
    case registerContinue(ContinuationToken, code: Secret?)
    case signUpStart(username: String, password: Secret?, attributes: [String: String]?)
    case signUpChallenge(ContinuationToken)
    case signUpContinue(ContinuationToken, SignUpSubmission)
    case resetStart(username: String)
    case resetChallenge(ContinuationToken)
    case resetContinue(ContinuationToken, code: Secret)
    case resetSubmit(ContinuationToken, newPassword: Secret)
    case resetPoll(ContinuationToken)
    /// OIDC discovery (fetched once per client; the browser and device-code flows cannot do without it).
    case discovery
    case deviceAuthorization(endpoint: String, scopes: [String])
    case pollDeviceCode(endpoint: String, deviceCode: Secret)
    case redeemCode(
        endpoint: String,
        code: Secret,
        verifier: Secret,
        redirectURI: String,
        scopes: [String],
        claims: ClaimsRequest?
    )
    /// The provider's signing key an ID token names (`jwks_uri`, fetched when the cached key set lacks it), answered
    /// `.signingKey`: a browser sign-in's ID token is checked against that key when the sign-in is stored.
    case signingKey(kid: String?)
    /// The userinfo endpoint with a new sign-in's access token (a DPoP-bound one with a proof of `dpopKey`).
    case userinfo(endpoint: String, accessToken: Secret, dpopKey: DPoPKey?)
    /// The token endpoint: discovery's (fetched once per client; Entra without it: the authority's), answered
    /// `.endpoint`. Sends discovery only while the client has not fetched it.
    case tokenEndpoint
    /// The refresh-token grant (the silent-token path), answered `.tokens`.
    case refresh(endpoint: String, refreshToken: RefreshToken, scopes: [String], claims: ClaimsRequest?)

    /// The call's name, for traces and tests ("token", "resetPoll", …).
    var name: String {
        switch self {
        case .initiate: return "initiate"
        case .challenge: return "challenge"
        case .token(let grant, _, _):
            switch grant {
            case .password: return "token(password)"
            case .oob: return "token(oob)"
            case .mfaOOB: return "token(mfa_oob)"
            case .continuation: return "token(continuation)"
            }
        case .introspect: return "introspect"
        case .registerIntrospect: return "registerIntrospect"
        case .registerChallenge: return "registerChallenge"
        case .registerContinue: return "registerContinue"
        case .signUpStart: return "signUpStart"
        case .signUpChallenge: return "signUpChallenge"
        case .signUpContinue: return "signUpContinue"
        case .resetStart: return "resetStart"
        case .resetChallenge: return "resetChallenge"
        case .resetContinue: return "resetContinue"
        case .resetSubmit: return "resetSubmit"
        case .resetPoll: return "resetPoll"
        case .discovery: return "discovery"
        case .deviceAuthorization: return "deviceAuthorization"
        case .pollDeviceCode: return "pollDeviceCode"
        case .redeemCode: return "redeemCode"
        case .signingKey: return "signingKey"
        case .userinfo: return "userinfo"
        case .tokenEndpoint: return "tokenEndpoint"
        case .refresh: return "refresh"
        }
    }
}

/// The typed answer to a `ServerCall` (one case per kind of answer).
enum ServerAnswer: Sendable {
    /// `initiate`, `signUpStart`, `resetStart`, `resetContinue`, `registerContinue`.
    case continuation(ContinuationToken)
    /// `challenge`, `signUpChallenge`.
    case challenge(Challenge)
    case token(TokenAnswer)
    /// `introspect`, `registerIntrospect`.
    case methods(ContinuationToken, [AuthMethod])
    case registerChallenge(RegisterChallenge)
    case signUpContinue(SignUpContinueAnswer)
    /// `resetChallenge`.
    case codeChallenge(ContinuationToken, CodeChallenge)
    /// `resetSubmit`: the poll token and the server's `poll_interval`.
    case resetSubmitted(ContinuationToken, interval: Int64?)
    case resetPoll(ResetPollStatus)
    case metadata(OIDCMetadata)
    case deviceAuthorization(DeviceAuthorization)
    case devicePoll(DeviceCodePoll)
    /// `redeemCode`.
    case tokens(TokenResponse)
    case userinfo(JSONValue)
    /// `signingKey`: the key (nil: the provider has none by that name, and the ID token's check says so).
    case signingKey(RSAPublicKey?)
    /// `tokenEndpoint`.
    case endpoint(String)
}

/// A stored sign-in: the account and its first token.
struct StoredSignIn: Sendable {
    var account: Account
    var token: AccessToken
}

/// What a flow reacts to. Indirect: each event is one boxed value, so an event never has bytes its case leaves
/// unwritten (valgrind flagged the tag tests of the inline multi-payload layout reading such bytes).
indirect enum FlowEvent: Sendable {
    /// The flow's first step.
    case start
    /// An action of the app (`na_flow_submit`).
    case action(FlowAction)
    /// The answer to the flow's last `send`, or why there is none.
    case answer(Result<ServerAnswer, NativeAuthError>)
    /// The flow's `wait` ended (a cancel ends the call in the driver instead).
    case waited
    /// The sign-in of the flow's `store` was stored, or was not.
    case stored(Result<StoredSignIn, NativeAuthError>)
    /// How opening the browser went (`openBrowser`); during a `listen`, that the command the library started failed
    /// before its page was fetched (`.failed`).
    case browserLaunched(BrowserLaunch)
    /// A loopback listener opened for the flow (`openListener`), or none could.
    case listenerOpened((any RedirectListener)?)
    /// How the wait on the loopback listener ended (`listen`).
    case redirect(RedirectWaitOutcome)
}

extension FlowEvent {
    /// The browser opened, or could not be (no reason known).
    static func browserOpened(_ opened: Bool) -> FlowEvent { .browserLaunched(opened ? .opened : .failed(reason: nil)) }
}

/// What a flow asks its driver to do next (indirect, as `FlowEvent`).
indirect enum FlowEffect: Sendable {
    case send(ServerCall)
    /// Wait this long (cancellable), then `.waited`.
    case wait(seconds: Double)
    /// Check and store a sign-in's tokens (the account added or replaced, its refresh token kept), then `.stored`.
    case store(TokenResponse, scopes: [String], policy: TokenService.IDTokenPolicy)
    /// Open the user's browser on this URL, then `.browserLaunched`.
    case openBrowser(String)
    /// Open a loopback listener, then `.listenerOpened`.
    case openListener(LoopbackHost, port: UInt16)
    /// Serve the session's listener until the redirect, the deadline (clock seconds) or a cancel, then `.redirect`.
    case listen(AuthorizationSession, until: Double)
    /// Answer the app with `status`. The flow goes on (its state is the next step) or has ended.
    case finish(FlowStatus, continues: Bool)
    /// Answer the app with `error`. With `keepsFlow`, the flow stays usable in the state it is in now (the one it
    /// had before the failed step, or the one a step that got part of the way reached); otherwise it has ended.
    case fail(NativeAuthError, keepsFlow: Bool)
    /// The flow goes on as another one — MFA or strong-auth registration after a sign-in's token step — answering
    /// `status`.
    case handOff(Flow, FlowStatus)

    /// The effect in a word or two, for traces and the flows' tests ("send token(password)", "fail flow_invalid
    /// kept", "finish signed_in").
    var trace: String {
        switch self {
        case .send(let call): return "send \(call.name)"
        case .wait(let seconds): return "wait \(seconds)"
        case .store: return "store"
        case .openBrowser: return "openBrowser"
        case .openListener: return "openListener"
        case .listen: return "listen"
        case .finish(let status, let continues): return "finish \(status.name)" + (continues ? "" : " ended")
        case .fail(let e, let keeps): return "fail \(e.code.rawValue)" + (keeps ? " kept" : "")
        case .handOff(let flow, let status): return "handOff \(flow.type.rawValue) \(status.name)"
        }
    }
}

extension NativeAuthError {
    /// The server gave no verdict on the step: it could not be reached, failed, or throttled. A flow usually stays
    /// usable after such an error (each flow decides in its own `on`).
    var isTransient: Bool {
        switch code {
        case .network, .timeout, .tls, .server, .throttled: return true
        // A started call cancelled before its request reached the server or while it was on the wire: as after a
        // broken connection, the step can be taken again.
        case .cancelled: return byCallCancel
        default: return false
        }
    }

    /// `flow_invalid` for an action a flow cannot take in its state (the flow stays as it was).
    static func wrongStep(_ action: FlowAction, expected: FlowAction.Kind) -> NativeAuthError {
        var e = NativeAuthError(
            .flowInvalid,
            "\(action.kind.rawValue) is not possible now: the flow is waiting for \(expected.rawValue)."
        )
        e.expected = expected
        return e
    }

    /// An answer of a kind the flow did not ask for (a bug in the driver's mapping, or a server answering one call
    /// with another's shape).
    static func unexpectedAnswer(_ what: String) -> NativeAuthError {
        NativeAuthError(.internal, "A flow got an answer it did not ask for (\(what)).")
    }
}
