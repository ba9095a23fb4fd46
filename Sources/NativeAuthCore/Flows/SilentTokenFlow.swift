internal import NativeAuthCrypto

/// `na_get_access_token` after a cache miss (or a hit it must not serve: past `refresh_in`, forced, claims), as a
/// state machine in the style of the other flows: a state enum, `on(_:at:)` answering the next effect, no I/O. The
/// hit itself stays a direct lookup in `TokenService.accessToken`, before any machine starts. `SilentTokenDriver`
/// performs the effects.
///
/// The path, and the rules it keeps:
/// - read the account's entry: no refresh token answers `interaction_required` (or the early-refresh token);
/// - a started call's refresh runs on a thread of its own (`runInBackground` … `endBackground`): once its request was
///   sent (`commitSend`, the point of no return), a cancel of the call no longer loses its answer;
/// - one refresh per client (`joinGate`): a caller finds a usable token (`hit`), leads the refresh, or shares the
///   leader's result (a leader's `cancelled` before sending is not shared: the gate makes waiters look again);
/// - one refresh across the processes sharing the store (`lockStore` … `unlockStore`), the store re-read under the
///   lock (`reread`): a token another process stored meanwhile answers (a forced refresh: one stored no earlier than
///   the call began that differs from the one it replaces; a claims request never takes a cached token);
/// - the newest refresh token is read under the lock, the token endpoint resolved (discovery, once per client), the
///   write reserved before the redeem (a full disk refuses before anything is sent), then the grant sent;
/// - a dead refresh token is dropped only if the file still holds it (compare-then-delete); a newer one is tried once;
/// - the answer is stored; then the lock, the gate and the thread are released, in that order;
/// - on the calling thread: declined scopes fail the call; a failed early refresh serves the cached token; a server
///   that gives no verdict lets a token in its extended lifetime answer.
struct SilentTokenFlow: Sendable {
    typealias Outcome = RefreshGate.Outcome

    /// What the call asks for, resolved before the machine starts.
    struct Request: Sendable {
        var account: String
        var scopes: [String]
        var key: ScopeKey
        var claims: ClaimsRequest?
        var forceRefresh: Bool
        /// The cached token past its `refresh_in` (an early refresh): the answer if the refresh fails.
        var fallback: AccessToken?
        /// The token the call would have been served (a forced refresh wants it replaced), and when the call began.
        var replaced: AccessToken?
        var began: Double
        /// Entra, or a generic OpenID Connect provider (whose `invalid_scope` on refresh asks for a sign-in).
        var isEntra: Bool
    }

    /// One try of the grant: the refresh token presented, the session of the entry it came from, the endpoint.
    struct Attempt: Sendable {
        var refreshToken: RefreshToken
        var session: UInt64
        var endpoint: String = ""
    }

    enum State: Sendable {
        case idle
        case readingEntry
        /// Waiting for the refresh's thread (the caller's copy), or just started on it (the thread's copy).
        case detached
        case joining
        case locking
        case rereading
        case readingRefreshToken
        case resolvingEndpoint(Attempt)
        case reserving(Attempt)
        case committing(Attempt)
        case refreshing(Attempt)
        case dropping(Attempt, NativeAuthError)
        case storing
        case unlocking(Result<Outcome, NativeAuthError>)
        case leaving(Result<Outcome, NativeAuthError>)
        case ending
        case extending(NativeAuthError)
        case done
    }

    let request: Request
    private(set) var state: State = .idle
    /// The account (for the `login_hint` of an interaction error), once read.
    private(set) var account: Account? = nil
    /// The in-process single-flight key: account, refresh token, scopes and claims.
    private(set) var gateKey = ""
    /// Whether a dead refresh token was already retried with a newer one.
    private(set) var retried = false

    init(_ request: Request) { self.request = request }

    /// Whether a token another call or process stored meanwhile answers this call through the gate.
    var canShare: Bool { !request.forceRefresh && request.fallback == nil && request.claims == nil }

    mutating func on(_ event: SilentEvent, at now: Double) -> SilentEffect {
        switch (state, event) {
        case (.idle, .start):
            state = .readingEntry
            return .readEntry(account: request.account)
        case (.readingEntry, .entry(let entry)):
            return onEntry(entry)
        case (.detached, .background):
            state = .joining
            return .joinGate(key: gateKey, canShare: canShare)
        case (.joining, .gate(let answer)):
            return onGate(answer)
        case (.locking, .locked(.success)):
            state = .rereading
            return .reread(request.key, account: request.account)
        case (.locking, .locked(.failure(let e))):
            return leave(.failure(e))
        case (.rereading, .found(let token)):
            return onFound(token, at: now)
        case (.readingRefreshToken, .refreshToken(let held)):
            guard let held else { return unlock(.failure(Self.noRefreshToken())) }
            state = .resolvingEndpoint(Attempt(refreshToken: held.token, session: held.session))
            return .send(.tokenEndpoint)
        case (.resolvingEndpoint(var attempt), .answer(.success(.endpoint(let endpoint)))):
            attempt.endpoint = endpoint
            state = .reserving(attempt)
            return .reserveWrite
        case (.reserving(let attempt), .reserved(.success)):
            state = .committing(attempt)
            return .commitSend
        case (.committing(let attempt), .committed(.success)):
            state = .refreshing(attempt)
            return .send(
                .refresh(
                    endpoint: attempt.endpoint,
                    refreshToken: attempt.refreshToken,
                    scopes: request.scopes,
                    claims: request.claims
                )
            )
        case (.resolvingEndpoint, .answer(.failure(let e))), (.reserving, .reserved(.failure(let e))),
            (.committing, .committed(.failure(let e))):
            return unlock(.failure(e))
        case (.refreshing(let attempt), .answer(let answer)):
            return onRefreshed(answer, attempt)
        case (.dropping(let attempt, let e), .dropped(let newer)):
            guard !retried, let newer, !(newer == attempt.refreshToken) else { return unlock(.failure(e)) }
            retried = true
            state = .readingRefreshToken
            return .readRefreshToken(account: request.account, retry: true)
        case (.storing, .stored(let r)):
            return unlock(r.map { ($0, false) })
        case (.unlocking(let r), .unlocked):
            return leave(r)
        case (.leaving(let r), .leftGate):
            state = .ending
            return .endBackground(r)
        case (.detached, .backgroundEnded(let r)):
            return onEnded(r)
        case (.extending(let e), .extended(let token)):
            state = .done
            guard let token else { return .fail(hinted(e)) }
            return .finish(TokenResult(token: token, fromCache: true), .extended(e.code))
        default:
            state = .done
            return .fail(NativeAuthError(.internal, "The token refresh got an event it did not expect."))
        }
    }

    private mutating func onEntry(_ entry: (refreshToken: RefreshToken?, account: Account)?) -> SilentEffect {
        guard let entry else {
            state = .done
            return .fail(NativeAuthError(.noAccount, "No such account is signed in."))
        }
        account = entry.account
        guard let rt = entry.refreshToken else {
            state = .done
            if let fallback = request.fallback {
                return .finish(TokenResult(token: fallback, fromCache: true), .cached)
            }
            return .fail(hinted(Self.noRefreshToken()))
        }
        let fingerprint = rt.secret.withUnsafeBytes { Base64.urlEncode(SHA256.hash($0)) }
        gateKey = [request.account, fingerprint, request.key.key, request.claims?.json ?? ""].joined(separator: "|")
        state = .detached
        return .runInBackground
    }

    private mutating func onGate(_ answer: Result<GateAnswer, NativeAuthError>) -> SilentEffect {
        state = .ending
        switch answer {
        case .failure(let e): return .endBackground(.failure(e))
        case .success(.hit(let token)): return .endBackground(.success((token, true)))
        case .success(.shared(let r)): return .endBackground(r)
        case .success(.lead):
            state = .locking
            return .lockStore
        }
    }

    /// Under the lock, after the re-read: a token stored meanwhile that serves this call, or the refresh.
    private mutating func onFound(_ token: AccessToken?, at now: Double) -> SilentEffect {
        if let t = token {
            let anyServable = request.claims == nil && !request.forceRefresh
            if anyServable, !t.wantsRefresh(at: now) {
                return unlock(.success((t, true)), note: "another process refreshed this token meanwhile; served")
            }
            // The cache file keeps whole seconds.
            if request.forceRefresh, request.claims == nil, t.cachedAt >= request.began.rounded(.down),
                request.replaced.map({ !($0.value == t.value) }) ?? true
            {
                return unlock(.success((t, true)), note: "another process refreshed this token after the call began")
            }
        }
        state = .readingRefreshToken
        return .readRefreshToken(account: request.account, retry: false)
    }

    private mutating func onRefreshed(
        _ answer: Result<ServerAnswer, NativeAuthError>,
        _ attempt: Attempt
    ) -> SilentEffect {
        switch answer {
        case .success(.tokens(let response)):
            state = .storing
            return .store(
                response,
                account: request.account,
                scopes: request.scopes,
                presented: attempt.refreshToken,
                session: attempt.session
            )
        case .success:
            return unlock(.failure(.unexpectedAnswer("refresh")))
        case .failure(let error):
            // Generic OpenID Connect providers refuse to widen a grant on refresh (RFC 6749 §6: the scope may not
            // exceed the original grant): for the app that is one more interactive sign-in, with these scopes.
            if !request.isEntra, error.code == .invalidScope {
                var e = NativeAuthError(
                    .interactionRequired,
                    "The provider does not extend this sign-in to these scopes; sign in interactively for them.",
                    server: error.server
                )
                e.claims = error.claims
                return unlock(.failure(e))
            }
            guard error.meansRefreshTokenIsDead else { return unlock(.failure(error)) }
            // Compare, then delete: only the token that was refused.
            state = .dropping(attempt, error)
            return .dropRefreshToken(account: request.account, attempt.refreshToken)
        }
    }

    /// The calling thread, once the refresh (its own, or the one it shared) ended.
    private mutating func onEnded(_ r: Result<Outcome, NativeAuthError>) -> SilentEffect {
        state = .done
        var result = r
        if case .success(let outcome) = r, let declined = Self.declined(outcome.token, requested: request.scopes) {
            result = .failure(declined)
        }
        switch result {
        case .success(let outcome):
            return .finish(TokenResult(token: outcome.token, fromCache: outcome.fromCache), .refreshed)
        case .failure(let error):
            if let fallback = request.fallback, error.code != .reentrantCall, error.code != .cancelled {
                return .finish(TokenResult(token: fallback, fromCache: true), .fallback(error.code))
            }
            if TokenService.serverUnavailable(error), !request.forceRefresh, request.claims == nil {
                state = .extending(error)
                return .extendedLookup(request.key, account: request.account)
            }
            return .fail(hinted(error))
        }
    }

    private mutating func unlock(_ r: Result<Outcome, NativeAuthError>, note: String? = nil) -> SilentEffect {
        state = .unlocking(r)
        return .unlockStore(note: note)
    }

    private mutating func leave(_ r: Result<Outcome, NativeAuthError>) -> SilentEffect {
        state = .leaving(r)
        return .leaveGate(r)
    }

    /// An interaction error carries the account's `login_hint`.
    private func hinted(_ error: NativeAuthError) -> NativeAuthError {
        var e = error
        if e.code.category == .interaction, e.loginHint == nil, let account {
            e.loginHint = TokenService.loginHint(account)
        }
        return e
    }

    static func noRefreshToken() -> NativeAuthError {
        NativeAuthError(.interactionRequired, "No refresh token is cached; the user must sign in again.")
    }

    /// MSAL's declined-scopes rule (MSIDDefaultTokenResponseValidator): the token is cached under the scopes the
    /// server granted; if it granted fewer than asked (OIDC scopes aside), the caller gets `declined_scopes` with
    /// both lists instead of a token that lacks them.
    static func declined(_ token: AccessToken, requested: [String]) -> NativeAuthError? {
        let declined = requested.filter {
            !oidcScopeSet.contains($0.lowercased()) && !token.key.set.contains($0.lowercased())
        }
        guard !declined.isEmpty else { return nil }
        var e = NativeAuthError(
            .declinedScopes,
            "The server granted fewer scopes than requested; the token for the granted ones is cached."
        )
        e.declined = declined
        e.granted = token.scopes.filter { !oidcScopeSet.contains($0.lowercased()) }
        return e
    }
}
