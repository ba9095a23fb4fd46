internal import NativeAuthCrypto
public import NativeAuthJSON
import Synchronization

/// A signed-in account.
public struct Account: Sendable, Equatable {
    /// `<uid>.<utid>` from the token response's `client_info`.
    public var homeAccountID: String
    /// `preferred_username`, else `email`, else `sub` of the ID token.
    public var username: String
    public var tenantID: String
    /// The authority's host.
    public var environment: String
    public var idToken: String?
    /// The ID token's claims (decoded, not verified: they came over TLS straight from the token endpoint).
    public var claims: JSONValue {
        get { lazyClaims?.value ?? storedClaims }
        set {
            storedClaims = newValue
            lazyClaims = nil
        }
    }
    private var storedClaims: JSONValue
    /// Claims decoded from `idToken` when first read (accounts loaded from a persistent cache).
    private var lazyClaims: LazyClaims?
    /// The realm MSAL's unified token cache files this account's tokens under: the tenant segment of the token
    /// endpoint (OIDC discovery's, as MSAL Python's `Authority.tenant`), else of the authority.
    public var realm: String = ""

    public init(
        homeAccountID: String,
        username: String,
        tenantID: String,
        environment: String,
        idToken: String?,
        claims: JSONValue,
        realm: String = ""
    ) {
        self.homeAccountID = homeAccountID
        self.username = username
        self.tenantID = tenantID
        self.environment = environment
        self.idToken = idToken
        self.storedClaims = claims
        self.realm = realm
    }

    /// An account whose claims are decoded from `idToken` when first read (a store loading many accounts pays for
    /// the decoding of those it serves only).
    public init(
        homeAccountID: String,
        username: String,
        tenantID: String,
        environment: String,
        idToken: String?,
        claimsFromIDToken: Bool,
        realm: String = ""
    ) {
        self.init(
            homeAccountID: homeAccountID,
            username: username,
            tenantID: tenantID,
            environment: environment,
            idToken: idToken,
            claims: .object([:]),
            realm: realm
        )
        if claimsFromIDToken, let idToken { lazyClaims = LazyClaims(idToken) }
    }

    public static func == (a: Account, b: Account) -> Bool {
        guard a.homeAccountID == b.homeAccountID, a.username == b.username, a.tenantID == b.tenantID,
            a.environment == b.environment, a.idToken == b.idToken, a.realm == b.realm
        else { return false }
        if let x = a.lazyClaims, let y = b.lazyClaims, x === y { return true }
        return a.claims == b.claims
    }
}

/// An ID token's claims, decoded once when first read.
final class LazyClaims: Sendable {
    private let token: String
    private let decoded = Mutex<JSONValue?>(nil)

    init(_ token: String) { self.token = token }

    var value: JSONValue {
        decoded.withLock { d in
            if let d { return d }
            let claims = (try? JWT(decoding: token))?.claims ?? .object([:])
            d = claims
            return claims
        }
    }
}
