internal import NativeAuthCrypto

/// Performs `SilentTokenFlow`'s effects — the token path's part of the driver: the only place its cache is read and
/// written, its gate joined, its store locked, its requests sent — feeding each result back until the flow answers.
/// Resources the flow takes are released by the driver whatever happens: the store's lock from `lockStore` until
/// `unlockStore` (or the end of the drive that took it), the write reservation until the lock is released, the
/// gate's lead until `leaveGate` (or the end of the drive that took it).
struct SilentTokenDriver: Sendable {
    let tokens: TokenService
    /// The server, its requests carrying the call's correlation id.
    let server: ServerAPI
    /// Seconds since the epoch: the end of the waits (for another call's refresh, for the refresh lock).
    let deadline: Double

    init(tokens: TokenService, correlationID: String?) throws(NativeAuthError) {
        let chosen: String
        if let correlationID {
            chosen = correlationID
        } else {
            do { chosen = try SecureRandom.uuid() } catch {
                throw NativeAuthError(.internal, "The system random generator failed.")
            }
        }
        self.tokens = tokens
        server = tokens.server.with(correlationID: chosen)
        deadline = SystemClock().now() + Double(server.configuration.requestTimeoutMs) / 1000 * 2
    }

    private var cache: TokenCache { tokens.cache }
    private func now() -> Double { tokens.clock.now() }
    private func log(_ level: LogLevel, _ message: @autoclosure () -> LogMessage) {
        tokens.logger.log(level, message(), correlationID: server.correlationID)
    }

    /// Runs `flow` from its start to its answer.
    func run(_ flow: SilentTokenFlow) throws(NativeAuthError) -> TokenResult {
        var flow = flow
        let first = flow.on(.start, at: now())
        switch drive(&flow, from: first) {
        case .finish(let result, let why):
            switch why {
            case .fallback(let code): log(.warning, "early refresh failed (\(code)); serving the cached token")
            case .extended(let code):
                log(.warning, "the server is unavailable (\(code)); serving a token in its extended lifetime")
            case .refreshed, .cached: break
            }
            return result
        case .fail(let e): throw e
        default: throw NativeAuthError(.internal, "The token refresh ended out of order.")
        }
    }

    /// Performs effects until one that ends a section: `finish` or `fail` (the call), `endBackground` (the drive on
    /// the refresh's thread). What this drive took and the flow did not give back — a gate lead, a write
    /// reservation, the store's lock — is given back when it returns, in that order.
    func drive(_ flow: inout SilentTokenFlow, from first: SilentEffect) -> SilentEffect {
        var effect = first
        var held = Held()
        defer { held.giveBack(self) }
        while true {
            let event: SilentEvent
            switch effect {
            case .finish, .fail, .endBackground:
                return effect
            case .lockStore:
                event = .locked(
                    Result { () throws(NativeAuthError) in
                        held.lock = try cache.acquireRefreshLock(deadline: deadline, isCancelled: tokens.isCancelled)
                    }
                )
            case .unlockStore(let note):
                held.unlock(self)
                if let note { log(.verbose, "\(note)") }
                event = .unlocked
            case .runInBackground:
                event = .backgroundEnded(inBackground(flow))
            case .joinGate(let key, let canShare):
                event = .gate(join(key, canShare: canShare, flow.request, lease: &held.lease))
            case .leaveGate(let r):
                if let lease = held.lease { tokens.gate.leave(lease, r) }
                held.lease = nil
                event = .leftGate
            case .reserveWrite:
                if held.reserved { cache.releaseReservedWrite() }
                held.reserved = false
                event = .reserved(Result { () throws(NativeAuthError) in try cache.reserveWrite() })
                if case .success = event.reservedResult { held.reserved = true }
            default:
                event = perform(effect)
            }
            effect = flow.on(event, at: now())
        }
    }

    /// What a drive holds for the flow.
    private struct Held {
        var lease: RefreshGate.Lease? = nil
        var reserved = false
        var lock: (any RefreshLockHold)? = nil

        /// The reservation, then the lock (a reservation is never kept past the lock it was made under).
        mutating func unlock(_ driver: SilentTokenDriver) {
            if reserved { driver.cache.releaseReservedWrite() }
            reserved = false
            lock?.release()
            lock = nil
        }

        mutating func giveBack(_ driver: SilentTokenDriver) {
            unlock(driver)
            if let lease {
                driver.tokens.gate.leave(lease, .failure(NativeAuthError(.internal, "a refresh left the gate")))
            }
            lease = nil
        }
    }

    /// The effects that need nothing but the cache, the call and the server.
    private func perform(_ effect: SilentEffect) -> SilentEvent {
        switch effect {
        case .readEntry(let id):
            return .entry(cache.read { d in d.accounts[id].map { ($0.refreshToken, $0.account) } })
        case .reread(let key, let id):
            guard case .hit(let t, _, _) = cache.lookup(key, account: .named(id), at: now()) else { return .found(nil) }
            return .found(t)
        case .readRefreshToken(let id, let retry):
            if retry { log(.info, "the refresh token was refused, and a newer one is cached; trying that once") }
            let held = cache.read { d in d.accounts[id].flatMap { e in e.refreshToken.map { ($0, e.session) } } }
            return .refreshToken(held.map { (token: $0.0, session: $0.1) })
        case .commitSend:
            return .committed(Result { () throws(NativeAuthError) in try BackgroundRefreshes.sending() })
        case .send(let call):
            if case .refresh(_, _, let scopes, _) = call {
                log(.info, "refreshing an access token for \(ScopeKey(scopes).set.count) scope(s)")
            }
            return .answer(Result { () throws(NativeAuthError) in try Self.perform(call, server: server, tokens) })
        case .dropRefreshToken(let id, let rt):
            let newer = try? cache.update { d -> RefreshToken? in
                guard let held = d.accounts[id]?.refreshToken else { return nil }
                guard held == rt else { return held }
                d.accounts[id]?.refreshToken = nil
                return nil
            }
            return .dropped(newer: newer ?? nil)
        case .store(let response, let id, let scopes, let presented, let session):
            return .stored(
                Result { () throws(NativeAuthError) in
                    try tokens.storeRefreshed(
                        response,
                        account: id,
                        scopes: scopes,
                        presented: presented,
                        session,
                        server: server
                    )
                }
            )
        case .extendedLookup(let key, let id):
            return .extended(cache.extendedLookup(key, account: id, at: now()))
        default:
            return .answer(.failure(NativeAuthError(.internal, "The token refresh asked for \(effect.trace).")))
        }
    }

    /// Joins the gate for the flow (a lead is kept in `lease`).
    private func join(
        _ key: String,
        canShare: Bool,
        _ request: SilentTokenFlow.Request,
        lease: inout RefreshGate.Lease?
    ) -> Result<GateAnswer, NativeAuthError> {
        let answer = Result { () throws(NativeAuthError) -> RefreshGate.Join in
            try tokens.gate.join(
                key: key,
                deadline: deadline,
                isCancelled: tokens.isCancelled,
                waiting: { log(.verbose, "waiting for a token refresh another call is making") },
                check: { () -> AccessToken? in
                    guard canShare,
                        case .hit(let t, _, _) = cache.lookup(request.key, account: .named(request.account), at: now())
                    else { return nil }
                    return t
                }
            )
        }
        switch answer {
        case .failure(let e): return .failure(e)
        case .success(.hit(let t)): return .success(.hit(t))
        case .success(.shared(let r)): return .success(.shared(r))
        case .success(.lead(let held)):
            lease = held
            return .success(.lead)
        }
    }

    /// Runs the flow's refresh section on a thread of its own for a started call (see `BackgroundRefreshes`), here
    /// otherwise; answers its result.
    private func inBackground(_ flow: SilentTokenFlow) -> Result<RefreshGate.Outcome, NativeAuthError> {
        let driver = self
        return Result { () throws(NativeAuthError) -> RefreshGate.Outcome in
            try tokens.background.run(logger: tokens.logger) { () throws(NativeAuthError) -> RefreshGate.Outcome in
                var copy = flow
                let first = copy.on(.background, at: driver.now())
                switch driver.drive(&copy, from: first) {
                case .endBackground(let r): return try r.get()
                case .fail(let e): throw e
                default: throw NativeAuthError(.internal, "The token refresh's thread ended out of order.")
                }
            }
        }
    }

    /// Sends the token path's server calls.
    static func perform(
        _ call: ServerCall,
        server: ServerAPI,
        _ tokens: TokenService
    ) throws(NativeAuthError) -> ServerAnswer {
        try perform(call, server: server, provider: tokens.provider)
    }

    static func perform(
        _ call: ServerCall,
        server: ServerAPI,
        provider: OIDCProvider
    ) throws(NativeAuthError) -> ServerAnswer {
        switch call {
        case .tokenEndpoint:
            return .endpoint(try provider.tokenEndpoint(server))
        case .refresh(let endpoint, let refreshToken, let scopes, let claims):
            return .tokens(
                try server.refresh(endpoint: endpoint, refreshToken: refreshToken, scopes: scopes, claims: claims)
            )
        default:
            throw NativeAuthError(.internal, "The token path cannot send \(call.name).")
        }
    }
}

extension SilentEvent {
    fileprivate var reservedResult: Result<Void, NativeAuthError>? {
        if case .reserved(let r) = self { return r }
        return nil
    }
}
