internal import NativeAuthJSON

/// Device-code sign-in (RFC 8628) for machines without a browser: `start` asks the provider for a code the user
/// enters on another device; `wait` polls the token endpoint at the provider's interval (5 s more after each
/// `slow_down`) until the user approves, refuses, the code expires, or the call's own deadline comes first.
struct DeviceCodeFlow: Sendable {
    /// The device authorization and the polling schedule.
    struct Device: Sendable {
        let deviceCode: Secret
        var info: DeviceCodeInfo
        let tokenEndpoint: String
        let userinfoEndpoint: String?
        let expiresAt: Double
        /// Seconds between polls (grows with `slow_down`).
        var interval: Double
        /// When the next poll may go out.
        var nextPoll: Double
    }

    enum State: Sendable {
        case new
        case discovering
        case authorizing(OIDCMetadata)
        case waiting(Device)
        /// Until the next poll (`poll`), or until the call's deadline.
        case sleeping(Device, deadline: Double, poll: Bool)
        case polling(Device, deadline: Double)
        /// The token answer had no ID token: the account comes from the userinfo endpoint.
        case fetchingUserinfo(TokenResponse, Device)
        case storing
        case ended
    }

    let scopes: [String]
    private(set) var state: State

    init(_ request: DeviceCodeRequest) {
        scopes = request.scopes
        state = .new
    }

    init(scopes: [String], state: State) {
        self.scopes = scopes
        self.state = state
    }

    /// When the device code expires, once the flow has one.
    var expiresAt: Double? {
        switch state {
        case .waiting(let d), .sleeping(let d, _, _), .polling(let d, _), .fetchingUserinfo(_, let d):
            return d.expiresAt
        default: return nil
        }
    }

    static func keeps(_ e: NativeAuthError) -> Bool { e.isTransient }

    mutating func on(_ event: FlowEvent, at now: Double) -> FlowEffect {
        switch (state, event) {
        case (.new, .start):
            state = .discovering
            return .send(.discovery)
        case (.discovering, .answer(.success(.metadata(let metadata)))):
            return discovered(metadata)
        case (.authorizing(let metadata), .answer(.success(.deviceAuthorization(let a)))):
            return authorized(a, metadata, now)
        case (.discovering, .answer(.failure(let e))), (.authorizing, .answer(.failure(let e))):
            state = .ended
            return .fail(e, keepsFlow: false)

        case (.waiting(let device), .action(.wait(let timeoutMs))):
            return next(device, deadline: min(device.expiresAt, now + Double(timeoutMs ?? 900_000) / 1000), now)
        case (.waiting, .action(let action)):
            return .fail(.wrongStep(action, expected: .wait), keepsFlow: true)
        case (.sleeping(let device, let deadline, true), .waited):
            state = .polling(device, deadline: deadline)
            return .send(.pollDeviceCode(endpoint: device.tokenEndpoint, deviceCode: device.deviceCode))
        case (.sleeping(var device, _, false), .waited):
            // The call's deadline came before the next poll: the same pending state again, flow intact.
            guard now < device.expiresAt else { return expired() }
            device.info.expiresIn = max(0, Int64((device.expiresAt - now).rounded(.up)))
            state = .waiting(device)
            return .finish(.deviceCodeRequired(device.info), continues: true)

        case (.polling(let device, let deadline), .answer(.success(.devicePoll(let poll)))):
            return polled(poll, device, deadline: deadline, now)
        case (.polling(let device, _), .answer(.failure(let e))):
            return pollFailed(e, device, now)
        case (.fetchingUserinfo(let response, _), .answer(.success(.userinfo(let claims)))):
            return store(response, userinfo: claims)
        case (.fetchingUserinfo, .answer(.failure(let e))):
            state = .ended
            return .fail(e, keepsFlow: false)
        case (.storing, .stored(.success(let s))):
            state = .ended
            return .finish(.signedIn(s.account, s.token), continues: false)
        case (.storing, .stored(.failure(let e))):
            state = .ended
            return .fail(e, keepsFlow: false)
        default:
            state = .ended
            return .fail(.unexpectedAnswer("device code"), keepsFlow: false)
        }
    }

    /// Discovery answered: ask for a device code, when the provider offers them.
    private mutating func discovered(_ metadata: OIDCMetadata) -> FlowEffect {
        guard let endpoint = metadata.deviceAuthorizationEndpoint else {
            state = .ended
            return .fail(
                NativeAuthError(.notSupported, "The provider does not offer device-code sign-in."),
                keepsFlow: false
            )
        }
        state = .authorizing(metadata)
        return .send(.deviceAuthorization(endpoint: endpoint, scopes: scopes))
    }

    /// The device code came: the app shows it (`device_code_required`) and waits.
    private mutating func authorized(_ a: DeviceAuthorization, _ metadata: OIDCMetadata, _ now: Double) -> FlowEffect {
        let info = DeviceCodeInfo(
            userCode: a.userCode,
            verificationURI: a.verificationURI,
            verificationURIComplete: a.verificationURIComplete,
            expiresIn: a.expiresIn,
            interval: a.interval,
            message: a.message ?? "To sign in, open \(a.verificationURI) and enter the code \(a.userCode)."
        )
        let device = Device(
            deviceCode: a.deviceCode,
            info: info,
            tokenEndpoint: metadata.tokenEndpoint,
            userinfoEndpoint: metadata.userinfoEndpoint,
            expiresAt: now + Double(a.expiresIn),
            interval: Double(a.interval),
            nextPoll: now + Double(a.interval)
        )
        state = .waiting(device)
        return .finish(.deviceCodeRequired(info), continues: true)
    }

    /// A poll's answer: pending, slow down, refused, expired, or the tokens (with the userinfo still to fetch when
    /// they have no ID token).
    private mutating func polled(
        _ poll: DeviceCodePoll,
        _ device: Device,
        deadline: Double,
        _ now: Double
    ) -> FlowEffect {
        var device = device
        device.nextPoll = now + device.interval
        switch poll {
        case .pending:
            return next(device, deadline: deadline, now)
        case .slowDown:
            device.interval += 5
            device.info.interval = Int64(device.interval)
            device.nextPoll = now + device.interval
            return next(device, deadline: deadline, now)
        case .denied:
            state = .ended
            return .fail(NativeAuthError(.accessDenied, "The user refused the sign-in."), keepsFlow: false)
        case .expired:
            return expired()
        case .tokens(let response):
            guard response.idToken == nil else { return store(response, userinfo: nil) }
            guard let endpoint = device.userinfoEndpoint else {
                state = .ended
                return .fail(
                    .unexpected("a device-code token answer without an ID token, and no userinfo_endpoint"),
                    keepsFlow: false
                )
            }
            state = .fetchingUserinfo(response, device)
            return .send(
                .userinfo(endpoint: endpoint, accessToken: response.accessToken, dpopKey: response.dpopKey)
            )
        }
    }

    /// A poll that failed: one that could not reach the server keeps the flow (the app may wait again).
    private mutating func pollFailed(_ e: NativeAuthError, _ device: Device, _ now: Double) -> FlowEffect {
        var device = device
        // A poll that could not reach the server keeps the flow: the app may wait again.
        guard Self.keeps(e) else {
            state = .ended
            return .fail(e, keepsFlow: false)
        }
        device.nextPoll = now + device.interval
        state = .waiting(device)
        return .fail(e, keepsFlow: true)
    }

    /// Sleeps until the next poll, or — when it comes after the call's deadline — until the deadline.
    private mutating func next(_ device: Device, deadline: Double, _ now: Double) -> FlowEffect {
        guard now < device.expiresAt else { return expired() }
        if device.nextPoll > deadline {
            state = .sleeping(device, deadline: deadline, poll: false)
            return .wait(seconds: max(0, deadline - now))
        }
        state = .sleeping(device, deadline: deadline, poll: true)
        return .wait(seconds: max(0, device.nextPoll - now))
    }

    private mutating func expired() -> FlowEffect {
        state = .ended
        return .fail(
            NativeAuthError(.flowExpired, "The device code expired before the user entered it."),
            keepsFlow: false
        )
    }

    /// The account comes from the ID token, or — when the provider sent none (no `openid` scope, some providers) —
    /// from the userinfo endpoint's claims.
    private mutating func store(_ response: TokenResponse, userinfo: JSONValue?) -> FlowEffect {
        state = .storing
        var policy = TokenService.IDTokenPolicy()
        policy.userinfo = userinfo
        return .store(response, scopes: scopes, policy: policy)
    }
}
