/// The OpenID Connect scopes every token request carries (MSAL's defaults), in the order MSAL sends them.
let defaultOIDCScopes = ["openid", "profile", "offline_access"]
/// Scopes that never count when matching cached access tokens (MSAL removes them from the search set).
let oidcScopeSet: Set<String> = ["openid", "profile", "offline_access", "email"]

/// A set of scopes as the cache matches them: lower-cased, OIDC scopes removed. `key` is the set's canonical text
/// (sorted, space-joined), the cache's hash key.
public struct ScopeKey: Hashable, Sendable {
    public let set: Set<String>
    public let key: String

    public init(_ scopes: some Sequence<String>) {
        var set = Set<String>()
        for s in scopes {
            let lower = s.lowercased()
            if !oidcScopeSet.contains(lower) { set.insert(lower) }
        }
        self.set = set
        key = set.sorted().joined(separator: " ")
    }

    public static func == (a: ScopeKey, b: ScopeKey) -> Bool { a.key == b.key }
    public func hash(into h: inout Hasher) { h.combine(key) }
}

/// `requested ∪ openid profile offline_access`, the requested order kept, de-duplicated case-insensitively: the
/// `scope` parameter of every token request.
func requestScopes(_ requested: [String]) -> [String] {
    var seen = Set<String>()
    return (requested + defaultOIDCScopes).filter { seen.insert($0.lowercased()).inserted }
}
