internal import NativeAuthCrypto
public import NativeAuthJSON
import Synchronization

/// One account's entries.
public struct AccountEntry: Sendable {
    public var account: Account
    public var refreshToken: RefreshToken?
    /// The scopes the sign-in asked for: what `na_get_access_token` without scopes means (MSAL iOS's
    /// `getAccessToken()` without scopes returns the sign-in's token).
    public var signInScopes: [String] = []
    /// Which sign-in this entry comes from: a refresh that began under an earlier sign-in of the same account
    /// stores nothing into a later one.
    public var session: UInt64 = 0
    /// By `ScopeKey.key`.
    public var accessTokens: [String: AccessToken] = [:]

    public init(account: Account, refreshToken: RefreshToken?) {
        self.account = account
        self.refreshToken = refreshToken
    }

    /// The token for `key`: the exact scope set (one hash lookup), else any usable token whose scopes include the
    /// request (MSAL's superset match), the one that lives longest.
    func accessToken(for key: ScopeKey, at now: Double) -> AccessToken? {
        if let exact = accessTokens[key.key], exact.isUsable(at: now) { return exact }
        // An empty set (OIDC scopes only) is a subset of everything: it matches only its own exact entry, never a
        // token cached later for some API.
        guard !key.set.isEmpty else { return nil }
        return accessTokens.values.filter { key.set.isSubset(of: $0.key.set) && $0.isUsable(at: now) }
            .max { $0.expiresOn < $1.expiresOn }
    }

    /// MSAL's overlap rule on save: a new token replaces cached ones whose scopes intersect it. One key per account
    /// (DPoP): tokens bound to another key than the new one's — a new sign-in's new key, or none — go too.
    public mutating func store(_ token: AccessToken) {
        accessTokens = accessTokens.filter {
            $0.value.key.set.isDisjoint(with: token.key.set) && !($0.value.key.set.isEmpty && token.key.set.isEmpty)
                && Self.sameBinding($0.value.dpopKey, token.dpopKey)
        }
        accessTokens[token.key.key] = token
    }

    /// The account's DPoP key: its refresh token's, else its access tokens' (nil: a bearer account).
    public var dpopKey: DPoPKey? {
        refreshToken?.dpopKey ?? accessTokens.values.lazy.compactMap(\.dpopKey).first
    }

    /// Whether two tokens are bound alike: both bearer, or both to one key.
    public static func sameBinding(_ a: DPoPKey?, _ b: DPoPKey?) -> Bool {
        guard let a else { return b == nil }
        return a.same(as: b)
    }
}
