internal import NativeAuthCrypto
internal import NativeAuthJSON

/// Device-code sign-in (RFC 8628) for machines without a browser: `start` asks the provider for a code the user
/// enters on another device; `wait` polls the token endpoint at the provider's interval (5 s more after each
/// `slow_down`) until the user approves, refuses, or the code expires.
struct DeviceCodeFlow: Sendable {
    let deviceCode: Secret
    var info: DeviceCodeInfo
    let scopes: [String]
    let tokenEndpoint: String
    let userinfoEndpoint: String?
    let expiresAt: Double
    /// Seconds between polls (grows with `slow_down`).
    var interval: Double
    /// When the next poll may go out.
    var nextPoll: Double

    static func start(_ request: DeviceCodeRequest, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        let metadata = try ctx.tokens.provider.requiredMetadata(ctx.server)
        guard let endpoint = metadata.deviceAuthorizationEndpoint else {
            throw NativeAuthError(.notSupported, "The provider does not offer device-code sign-in.")
        }
        let a = try ctx.server.deviceAuthorization(endpoint: endpoint, scopes: request.scopes)
        let now = ctx.clock.now()
        let info = DeviceCodeInfo(
            userCode: a.userCode,
            verificationURI: a.verificationURI,
            verificationURIComplete: a.verificationURIComplete,
            expiresIn: a.expiresIn,
            interval: a.interval,
            message: a.message ?? "To sign in, open \(a.verificationURI) and enter the code \(a.userCode)."
        )
        let flow = DeviceCodeFlow(
            deviceCode: a.deviceCode,
            info: info,
            scopes: request.scopes,
            tokenEndpoint: metadata.tokenEndpoint,
            userinfoEndpoint: metadata.userinfoEndpoint,
            expiresAt: now + Double(a.expiresIn),
            interval: Double(a.interval),
            nextPoll: now + Double(a.interval)
        )
        ctx.log(.info, "device-code sign-in started")
        return Transition(next: .deviceCode(flow), status: .deviceCodeRequired(info))
    }

    func apply(_ action: FlowAction, _ ctx: FlowContext) throws(NativeAuthError) -> Transition {
        guard case .wait(let timeoutMs) = action else { throw ctx.wrongStep(action, expected: .wait) }
        var flow = self
        let deadline = min(expiresAt, ctx.clock.now() + Double(timeoutMs ?? 900_000) / 1000)
        while true {
            let now = ctx.clock.now()
            if now >= expiresAt {
                return .ended(NativeAuthError(.flowExpired, "The device code expired before the user entered it."))
            }
            if flow.nextPoll > deadline {
                try ctx.sleep(max(0, deadline - now))
                flow.info.expiresIn = max(0, Int64((expiresAt - ctx.clock.now()).rounded(.up)))
                return Transition(next: .deviceCode(flow), status: .deviceCodeRequired(flow.info))
            }
            try ctx.sleep(max(0, flow.nextPoll - now))
            let poll: DeviceCodePoll
            do {
                poll = try ctx.server.pollDeviceCode(endpoint: tokenEndpoint, deviceCode: deviceCode)
            } catch {
                // A poll that could not reach the server keeps the flow: the app may wait again.
                guard keepsFlow(error) else { return .ended(error) }
                flow.nextPoll = ctx.clock.now() + flow.interval
                return .failed(after: .deviceCode(flow), error)
            }
            flow.nextPoll = ctx.clock.now() + flow.interval
            switch poll {
            case .pending:
                continue
            case .slowDown:
                flow.interval += 5
                flow.info.interval = Int64(flow.interval)
                flow.nextPoll = ctx.clock.now() + flow.interval
            case .denied:
                return .ended(NativeAuthError(.accessDenied, "The user refused the sign-in."))
            case .expired:
                return .ended(NativeAuthError(.flowExpired, "The device code expired before the user entered it."))
            case .tokens(let response):
                do {
                    return .ended(try signedIn(response, ctx))
                } catch {
                    return .ended(error)
                }
            }
        }
    }

    /// The account from the ID token, or — when the provider sent none (no `openid` scope, some providers) —
    /// from the userinfo endpoint.
    private func signedIn(_ r: TokenResponse, _ ctx: FlowContext) throws(NativeAuthError) -> FlowStatus {
        var policy = TokenService.IDTokenPolicy()
        if r.idToken == nil {
            guard let endpoint = userinfoEndpoint else {
                throw .unexpected("a device-code token answer without an ID token, and no userinfo_endpoint")
            }
            policy.userinfo = try ctx.server.userinfo(endpoint: endpoint, accessToken: r.accessToken)
        }
        let (account, token) = try ctx.tokens.acceptSignIn(
            r,
            requestedScopes: scopes,
            server: ctx.server,
            epoch: ctx.epoch,
            policy: policy
        )
        ctx.log(.info, "signed in with a device code")
        return .signedIn(account, token)
    }
}
