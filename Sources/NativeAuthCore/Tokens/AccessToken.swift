internal import NativeAuthCrypto
public import NativeAuthJSON
import Synchronization

/// A cached access token (immutable; shared by reference, so serving one from the cache copies one pointer).
public final class AccessToken: Sendable {
    public let value: Secret
    /// The scopes as the server granted them.
    public let scopes: [String]
    public let key: ScopeKey
    public let expiresOn: Double
    public let refreshOn: Double?
    public let cachedAt: Double
    /// The server's `ext_expires_in` as a time: while the server is unavailable (5xx, no connection) a token past its
    /// expiry is still served until then, as MSAL iOS does with extended lifetimes.
    public let extExpiresOn: Double?
    /// The DPoP key the token is bound to (`token_type` DPoP: sent as `Authorization: DPoP` with a proof of it), or
    /// nil for a bearer token.
    public let dpopKey: DPoPKey?

    /// `"DPoP"` or `"Bearer"`.
    public var tokenType: String { dpopKey == nil ? "Bearer" : "DPoP" }

    public convenience init(
        value: Secret,
        scopes: [String],
        expiresOn: Double,
        refreshOn: Double?,
        cachedAt: Double,
        extExpiresOn: Double? = nil,
        dpopKey: DPoPKey? = nil
    ) {
        self.init(
            value: value,
            scopes: scopes,
            key: ScopeKey(scopes),
            expiresOn: expiresOn,
            refreshOn: refreshOn,
            cachedAt: cachedAt,
            extExpiresOn: extExpiresOn,
            dpopKey: dpopKey
        )
    }

    /// A token whose `key` is already known (it must be `ScopeKey(scopes)`): a store loading many tokens of the same
    /// scope sets computes each key once.
    public init(
        value: Secret,
        scopes: [String],
        key: ScopeKey,
        expiresOn: Double,
        refreshOn: Double?,
        cachedAt: Double,
        extExpiresOn: Double? = nil,
        dpopKey: DPoPKey? = nil
    ) {
        self.value = value
        self.scopes = scopes
        self.key = key
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn
        self.cachedAt = cachedAt
        self.extExpiresOn = extExpiresOn
        self.dpopKey = dpopKey
    }

    public var validity: TokenValidity {
        TokenValidity(expiresOn: expiresOn, cachedAt: cachedAt, refreshOn: refreshOn)
    }

    public func isUsable(at now: Double) -> Bool { validity.isUsable(at: now) }
    public func wantsRefresh(at now: Double) -> Bool { validity.wantsRefresh(at: now) }
}

/// When a cached token may be served.
public struct TokenValidity: Sendable {
    public var expiresOn: Double
    public var cachedAt: Double
    public var refreshOn: Double?

    /// MSAL's expiry buffer: a token is served only while more than 5 minutes of its lifetime remain, whatever
    /// that lifetime (MSAL's common core `MSIDAccessToken` has `s_expirationBuffer = 300`; MSAL Python's
    /// `acquire_token_silent` treats `expires_on - now < 5*60` as expired). A token issued for 5 minutes or less is
    /// therefore never served from the cache. A token "cached" in the future (a clock set back) is not served either.
    public static let expiryBuffer = 300.0

    public func isUsable(at now: Double) -> Bool {
        now < expiresOn - Self.expiryBuffer && cachedAt <= now + 1
    }

    /// Past the server's `refresh_in`: refresh early.
    public func wantsRefresh(at now: Double) -> Bool {
        guard let refreshOn else { return false }
        return now >= refreshOn
    }

    /// Served from the cache as it is: usable, and not due for an early refresh.
    public func isServable(at now: Double) -> Bool { isUsable(at: now) && !wantsRefresh(at: now) }
}
