internal import NativeAuthCore
internal import NativeAuthCrypto
internal import NativeAuthJSON

/// The mapping between MSAL's unified cache format and the core's `[String: AccountEntry]`, for one client
/// (`client_id`) of one authority host (`environment`). Matches MSAL for Python 1.39's `token_cache.py`:
///
/// - keys are lower-cased: AccessToken `<home_account_id>-<environment>-accesstoken-<client_id>-<realm>-<target>`,
///   RefreshToken `<home_account_id>-<environment>-refreshtoken-<client_id>--<target>`, IdToken
///   `<home_account_id>-<environment>-idtoken-<client_id>-<realm>-`, Account `<home_account_id>-<environment>-<realm>`,
///   AppMetadata `appmetadata-<environment>-<client_id>`;
/// - `target` is the granted scopes sorted (by code point, as Python's `sorted`) and space-joined, case kept;
/// - `cached_at`, `expires_on`, `extended_expires_on`, `refresh_on` and `last_modification_time` are strings of
///   integer epoch seconds;
/// - `environment` is the authority's host without a port, lower-cased; `realm` is the tenant segment of the token
///   endpoint.
///
/// An account is this client's when an RT or IdToken of this `client_id` and `environment` names its
/// `home_account_id`. What this library keeps beyond MSAL's schema is one extra field on its RefreshToken entries:
/// `nativeauth_sign_in_scopes` (the sign-in's scopes, space-joined; without it the RT's `target` less the OIDC scopes).
struct MSALCacheFormat: Sendable {
    let environment: String
    let clientID: String

    static let accessToken = "AccessToken"
    static let refreshToken = "RefreshToken"
    static let idToken = "IdToken"
    static let account = "Account"
    static let appMetadata = "AppMetadata"
    static let signInScopesField = "nativeauth_sign_in_scopes"
    static let oidcScopes: Set<String> = ["openid", "profile", "offline_access", "email"]

    init(environment: String, clientID: String) {
        self.environment = environment.lowercased()
        self.clientID = clientID
    }

    // MARK: - Reading

    /// Whether an entry is of this client (`clientBound`) of this authority.
    func isMine(_ f: EntryFields, clientBound: Bool = true) -> Bool {
        f.environmentMatches && (!clientBound || f.clientMatches)
    }

    var owner: EntryOwner { EntryOwner(environment: environment, clientID: clientID) }

    /// Epoch seconds from a string (as MSAL writes them) or a number.
    static func seconds(_ v: JSONValue?) -> Double? {
        switch v {
        case .string(let s)?:
            if let i = Int64(s) { return Double(i) }
            if let d = Double(s), d.isFinite { return d }
            return nil
        case .int(let i)?: return Double(i)
        case .double(let d)? where d.isFinite: return d
        default: return nil
        }
    }

    static func stamp(_ t: Double) -> JSONValue {
        guard t.isFinite, t > -9.0e18, t < 9.0e18 else { return .string("0") }
        return .string(String(Int64(t.rounded(.down))))
    }

    /// Scopes in MSAL's `target` order: sorted by code point (Python's `sorted` on str), space-joined.
    static func target(_ scopes: [String]) -> String {
        var seen = Set<String>()
        let unique = scopes.filter { !$0.isEmpty && seen.insert($0).inserted }
        return unique.sorted { $0.unicodeScalars.lexicographicallyPrecedes($1.unicodeScalars) }.joined(separator: " ")
    }

    static func split(_ target: String?) -> [String] {
        guard let target, !target.isEmpty else { return [] }
        var out: [String] = []
        let utf8 = target.utf8
        return utf8.withContiguousStorageIfAvailable { b -> [String] in
            var start = 0
            for i in 0...b.count where i == b.count || b[i] == 0x20 {
                if i > start {
                    out.append(String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self))
                }
                start = i + 1
            }
            return out
        } ?? target.split(separator: " ").map(String.init)
    }
}
