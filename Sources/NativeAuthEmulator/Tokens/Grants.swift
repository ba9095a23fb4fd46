import Synchronization

/// The identity provider a browser request, code, session or token belongs to: the Entra tenant, or the generic
/// OpenID Connect provider served under `/oidc`.
enum IdP: String, Sendable {
    case entra, oidc
}

/// A refresh token issued, in its family (a grant: rotation keeps the family; revoking it ends them all).
struct RefreshTokenRecord {
    var family: String
    var user: String
    var clientID: String
    var expires: Double
    var used = false
    var idp: IdP = .entra
    /// The scopes of the grant (generic OIDC: a refresh may narrow them, never widen them).
    var scopes: [String] = []
    var authTime: Double = 0
    /// DPoP (RFC 9449 §5): the thumbprint of the key the refresh token is bound to; refreshing needs a proof of it.
    var jkt: String? = nil
}

/// An authorization code issued by the browser side, waiting for its (one) redemption with PKCE.
struct AuthCodeRecord {
    var user: String
    var clientID: String
    var redirectURI: String
    var challenge: String
    var scope: String
    var nonce: String?
    var expires: Double
    var family: String
    var idp: IdP = .entra
    var authTime: Double = 0
}

/// A generic-OIDC access token: opaque to clients, looked up by the sample APIs and the userinfo endpoint.
struct OpaqueAccessToken {
    var user: String
    var clientID: String
    var scopes: [String]
    var expires: Double
    var family: String?
    var id: String
    /// DPoP: the thumbprint of the key the token is bound to (`cnf.jkt`); nil for a bearer token.
    var jkt: String? = nil
}

/// What the token endpoints have granted: refresh tokens and their families, authorization codes, the generic
/// provider's access tokens, and which access tokens tests have expired.
struct GrantState {
    var refreshTokens: [String: RefreshTokenRecord] = [:]
    var revokedFamilies: Set<String> = []
    var authCodes: [String: AuthCodeRecord] = [:]
    /// Generic-OIDC access tokens.
    var opaqueAccessTokens: [String: OpaqueAccessToken] = [:]
    /// Every access token's id (JWT `uti`, or the opaque token's id) → its user, for `tokens/expire`.
    var accessTokenOwners: [String: String] = [:]
    /// Access tokens the sample APIs and userinfo treat as expired (`POST /_emulator/tokens/expire`).
    var expiredAccessTokens: Set<String> = []

    /// Revokes every refresh-token family of `user` (both identity providers); returns how many.
    mutating func revokeRefreshTokens(of user: String) -> Int {
        var families = Set<String>()
        for (_, rt) in refreshTokens where rt.user == user && !revokedFamilies.contains(rt.family) {
            families.insert(rt.family)
        }
        revokedFamilies.formUnion(families)
        return families.count
    }

    /// Revokes a generic-OIDC grant: its refresh tokens and its access tokens.
    mutating func revokeOIDCFamily(_ family: String) {
        revokedFamilies.insert(family)
        opaqueAccessTokens = opaqueAccessTokens.filter { $0.value.family != family }
    }

    /// Expires every access token of `email` (of anyone when nil); returns how many were not expired yet.
    mutating func expireAccessTokens(of email: String?) -> Int {
        let ids = accessTokenOwners.filter { email == nil || $0.value == email }.keys
        let before = expiredAccessTokens.count
        expiredAccessTokens.formUnion(ids)
        return expiredAccessTokens.count - before
    }

    /// Takes (removes) the authorization code `code` of `idp`; nil when there is none.
    mutating func takeAuthCode(_ code: String, idp: IdP) -> AuthCodeRecord? {
        guard authCodes[code]?.idp == idp else { return nil }
        return authCodes.removeValue(forKey: code)
    }
}

/// The grants, behind their own lock. Lock order: taken after a service's own state (native flows, browser, device
/// codes), before the leaves (directory, outbox, counters, logs), which code holding it may use.
final class Grants: Sendable {
    private let state = Mutex(GrantState())

    func withLock<T: Sendable, E: Error>(_ body: (inout GrantState) throws(E) -> T) throws(E) -> T {
        try state.withLock { s throws(E) -> T in try body(&s) }
    }

    func reset() { state.withLock { $0 = GrantState() } }

    /// The generic provider's access token `token`, and whether a test expired it.
    func opaqueAccessToken(_ token: String) -> (OpaqueAccessToken, expired: Bool)? {
        state.withLock { s in s.opaqueAccessTokens[token].map { ($0, s.expiredAccessTokens.contains($0.id)) } }
    }

    /// A test expired the access token with this id (`uti`).
    func isExpired(_ tokenID: String) -> Bool { state.withLock { $0.expiredAccessTokens.contains(tokenID) } }
}
