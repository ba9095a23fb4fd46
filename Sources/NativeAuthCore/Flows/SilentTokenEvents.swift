// The vocabulary of `SilentTokenFlow` and its driver (`SilentTokenDriver`): what the machine reacts to, and what it
// asks the driver to do. Both are indirect, as `FlowEvent` and `FlowEffect` are.

/// How the in-process single-flight answered a caller (see `RefreshGate.join`).
enum GateAnswer: Sendable {
    /// A usable token was cached meanwhile (only asked for when the call may share one).
    case hit(AccessToken)
    /// This caller makes the refresh; the driver holds the gate until `leaveGate`.
    case lead
    /// Another call's refresh for the same key ended: its result.
    case shared(Result<RefreshGate.Outcome, NativeAuthError>)
}

/// Why a silent-token call was answered with a token.
enum SilentServed: Sendable, Equatable {
    /// The refresh's answer, or a token another call or process stored meanwhile (`TokenResult.fromCache` tells).
    case refreshed
    /// The cached token past its `refresh_in`, with no refresh token to refresh it.
    case cached
    /// The cached token past its `refresh_in`, after the early refresh failed with this code.
    case fallback(NativeAuthError.Code)
    /// A token in its extended lifetime, the server being unavailable (this code).
    case extended(NativeAuthError.Code)

    var name: String {
        switch self {
        case .refreshed: return "refreshed"
        case .cached: return "cached"
        case .fallback: return "fallback"
        case .extended: return "extended"
        }
    }
}

indirect enum SilentEvent: Sendable {
    case start
    /// The account's refresh token and account (nil: no such account).
    case entry((refreshToken: RefreshToken?, account: Account)?)
    /// The machine now runs on the refresh's own thread (or, outside a started call, on the caller's).
    case background
    case gate(Result<GateAnswer, NativeAuthError>)
    /// The store's refresh lock taken (the store re-read under it), or why not.
    case locked(Result<Void, NativeAuthError>)
    /// What the re-read under the lock found: a usable token for the key, if any.
    case found(AccessToken?)
    /// The newest refresh token the store holds, and the session of its entry.
    case refreshToken((token: RefreshToken, session: UInt64)?)
    /// The answer to the last `send`.
    case answer(Result<ServerAnswer, NativeAuthError>)
    case reserved(Result<Void, NativeAuthError>)
    /// The call's point of no return passed, or the call was cancelled before it (nothing sent).
    case committed(Result<Void, NativeAuthError>)
    /// The refused refresh token was dropped, or the store holds a newer one (nil: none, or it was dropped).
    case dropped(newer: RefreshToken?)
    case stored(Result<AccessToken, NativeAuthError>)
    case unlocked
    case leftGate
    /// The refresh's thread ended (the calling thread's copy of the machine).
    case backgroundEnded(Result<RefreshGate.Outcome, NativeAuthError>)
    /// A token in its extended lifetime, if any.
    case extended(AccessToken?)
}

indirect enum SilentEffect: Sendable {
    /// Read the account's refresh token and account, then `.entry`.
    case readEntry(account: String)
    /// Run on until `endBackground` on a thread of the refresh's own for a started call (here otherwise), then
    /// `.backgroundEnded` on this thread; that thread starts with `.background`.
    case runInBackground
    /// Join the in-process single-flight (looking for a usable token first when `canShare`), then `.gate`.
    case joinGate(key: String, canShare: Bool)
    /// Take the store's cross-process refresh lock (re-reading the store under it), then `.locked`. The driver
    /// releases it at `unlockStore`, and whatever happens.
    case lockStore
    /// Look the key up again (the store as re-read under the lock), then `.found`.
    case reread(ScopeKey, account: String)
    /// Read the newest refresh token, then `.refreshToken` (`retry`: a newer one, after the last was refused).
    case readRefreshToken(account: String, retry: Bool)
    case send(ServerCall)
    /// Reserve the store's room for the write before a request that cannot be repeated, then `.reserved`.
    case reserveWrite
    /// Pass the started call's point of no return, then `.committed`.
    case commitSend
    /// Compare, then delete: drop `refreshToken` if the store still holds it, then `.dropped`.
    case dropRefreshToken(account: String, RefreshToken)
    /// Accept and store a refresh's answer, unless the entry changed session meanwhile, then `.stored`.
    case store(TokenResponse, account: String, scopes: [String], presented: RefreshToken, session: UInt64)
    /// Release the store's refresh lock (and the write reservation), then `.unlocked`.
    case unlockStore(note: String?)
    /// Release the gate with the result its waiters share, then `.leftGate`.
    case leaveGate(Result<RefreshGate.Outcome, NativeAuthError>)
    /// The refresh's thread ends with this result.
    case endBackground(Result<RefreshGate.Outcome, NativeAuthError>)
    /// Look for a token in its extended lifetime, then `.extended`.
    case extendedLookup(ScopeKey, account: String)
    case finish(TokenResult, SilentServed)
    case fail(NativeAuthError)

    /// The effect in a word or two, for traces and tests ("joinGate", "send refresh", "finish fallback").
    var trace: String {
        func outcome(_ r: Result<RefreshGate.Outcome, NativeAuthError>) -> String {
            switch r {
            case .success(let o): return o.fromCache ? "cached" : "refreshed"
            case .failure(let e): return e.code.rawValue
            }
        }
        switch self {
        case .readEntry: return "readEntry"
        case .runInBackground: return "runInBackground"
        case .joinGate(_, let canShare): return canShare ? "joinGate sharing" : "joinGate"
        case .lockStore: return "lockStore"
        case .reread: return "reread"
        case .readRefreshToken(_, let retry): return retry ? "readRefreshToken retry" : "readRefreshToken"
        case .send(let call): return "send \(call.name)"
        case .reserveWrite: return "reserveWrite"
        case .commitSend: return "commitSend"
        case .dropRefreshToken: return "dropRefreshToken"
        case .store: return "store"
        case .unlockStore: return "unlockStore"
        case .leaveGate(let r): return "leaveGate \(outcome(r))"
        case .endBackground(let r): return "endBackground \(outcome(r))"
        case .extendedLookup: return "extendedLookup"
        case .finish(_, let why): return "finish \(why.name)"
        case .fail(let e): return "fail \(e.code.rawValue)"
        }
    }
}
