/// What the silent-token path (`SilentTokenFlow`, `SilentTokenDriver`) asks of the token service: storing a refresh's
/// answer, and the rules it shares with the rest of the service.
extension TokenService {
    /// Accepts a refresh's answer and stores it: the rotated refresh token replaces the one presented (if the entry
    /// still holds that one), a refreshed ID token naming the same account replaces the account's. Signed out, or
    /// signed in again (another session), while the refresh was on the wire: nothing is kept. A rotated refresh token
    /// that cannot be written is kept in memory and reported (`unwritten`): the next process would present the old one.
    func storeRefreshed(
        _ response: TokenResponse,
        account accountID: String,
        scopes: [String],
        presented rt: RefreshToken,
        _ session: UInt64,
        server: ServerAPI
    ) throws(NativeAuthError) -> AccessToken {
        let (account, token) = try accept(
            response,
            requestedScopes: scopes,
            server: server,
            policy: IDTokenPolicy(strict: false)
        )
        do {
            try cache.update { d in
                guard var entry = d.accounts[accountID], entry.session == session else { return }
                if let newRT = response.refreshToken, entry.refreshToken == rt { entry.refreshToken = newRT }
                if let account, account.homeAccountID == accountID, account.idToken != nil {
                    entry.account = account
                }
                entry.store(token)
                d.accounts[accountID] = entry
            }
        } catch {
            throw Self.unwritten(error, rotated: response.refreshToken.map { !($0 == rt) } ?? false)
        }
        return token
    }

    /// A refresh whose tokens could not be written (they are kept in memory: this client goes on with them, and
    /// writes them with its next change that can be written). When the server rotated the refresh token, the file
    /// still holds the redeemed one: the error says the sign-in may need renewing should this process end first.
    static func unwritten(_ error: NativeAuthError, rotated: Bool) -> NativeAuthError {
        guard rotated, error.category == .storage else { return error }
        var e = error
        e.message =
            "\(error.message) The refreshed tokens are kept in memory and written at the next chance; if this "
            + "program ends before that, the sign-in may need renewing (the server replaced the refresh token the "
            + "file still holds)."
        return e
    }

    /// What an app passes as `login_hint` to sign this account in again: the ID token's `login_hint` claim when it
    /// has one (Entra issues it for this purpose), else the username.
    static func loginHint(_ account: Account) -> String? {
        if let hint = account.claims["login_hint"]?.stringValue, !hint.isEmpty { return hint }
        return account.username.isEmpty ? nil : account.username
    }

    /// The server could not answer (no connection, timeout, 5xx, throttling): no verdict on the token.
    static func serverUnavailable(_ e: NativeAuthError) -> Bool {
        switch e.code {
        case .network, .timeout, .throttled: return true
        case .server: return (e.server?.httpStatus ?? 0) >= 500 || e.server?.httpStatus == nil
        default: return false
        }
    }
}

extension TokenCache {
    /// See `TokenStore.reserveWrite`.
    func reserveWrite() throws(NativeAuthError) { try store.reserveWrite() }

    /// See `TokenStore.releaseReservedWrite`.
    func releaseReservedWrite() { store.releaseReservedWrite() }
}
