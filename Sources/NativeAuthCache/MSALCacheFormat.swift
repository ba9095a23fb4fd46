internal import NativeAuthCore
internal import NativeAuthCrypto
internal import NativeAuthJSON

/// MSAL's unified token cache document, as MSAL for Python's `SerializableTokenCache` writes it: top-level sections
/// (`AccessToken`, `RefreshToken`, `IdToken`, `Account`, `AppMetadata`, and whatever other SDKs add), each an object of
/// entries by cache key. Everything is kept as read, so entries and fields this library does not understand are
/// written back unchanged.
struct UnifiedCache: Sendable {
    /// Object-valued top-level members, by name: section → cache key → entry.
    var sections: [String: [String: JSONValue]] = [:]
    /// Top-level members that are not objects (kept as they are).
    var other: [String: JSONValue] = [:]

    init() {}

    /// Reads a document; nil when it is not a JSON object.
    init?(parsing bytes: UnsafeRawBufferPointer) {
        guard let root = try? JSONValue.parse(bytes: bytes), case .object(let members) = root else { return nil }
        for (name, value) in members {
            if case .object(let entries) = value { sections[name] = entries } else { other[name] = value }
        }
    }

    /// The document as JSON text (compact, keys sorted); nil only when memory ran out.
    func serialized() -> [UInt8]? {
        var root = other
        for (name, entries) in sections { root[name] = .object(entries) }
        return JSONValue.object(root).serializedBytes()
    }
}

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

    private func isMine(_ e: [String: JSONValue], clientBound: Bool = true) -> Bool {
        guard let env = e["environment"]?.stringValue, env.lowercased() == environment else { return false }
        guard clientBound else { return true }
        guard let c = e["client_id"]?.stringValue else { return false }
        return c == clientID || c.lowercased() == clientID.lowercased()
    }

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

    private static func split(_ target: String?) -> [String] {
        (target ?? "").split(separator: " ").map(String.init)
    }

    /// The accounts of this client found in `cache`.
    func accounts(in cache: UnifiedCache) -> [String: AccountEntry] {
        struct Found {
            var rt: (secret: String, scopes: [String], modified: Double)?
            var idTokens: [String: String] = [:]  // by realm
            var accounts: [String: [String: JSONValue]] = [:]  // by realm
            var accessTokens: [(realm: String, entry: [String: JSONValue])] = []
        }
        var found: [String: Found] = [:]

        for (_, value) in cache.sections[Self.refreshToken] ?? [:] {
            guard case .object(let e) = value, isMine(e), let home = e["home_account_id"]?.stringValue, !home.isEmpty,
                let secret = e["secret"]?.stringValue, !secret.isEmpty
            else { continue }
            let modified = Self.seconds(e["last_modification_time"]) ?? 0
            if let current = found[home]?.rt, current.modified > modified { continue }
            let scopes: [String]
            if let own = e[Self.signInScopesField]?.stringValue {
                scopes = Self.split(own)
            } else {
                scopes = Self.split(e["target"]?.stringValue).filter { !Self.oidcScopes.contains($0.lowercased()) }
            }
            found[home, default: Found()].rt = (secret, scopes, modified)
        }
        for (_, value) in cache.sections[Self.idToken] ?? [:] {
            guard case .object(let e) = value, isMine(e), let home = e["home_account_id"]?.stringValue, !home.isEmpty,
                let secret = e["secret"]?.stringValue
            else { continue }
            found[home, default: Found()].idTokens[e["realm"]?.stringValue ?? ""] = secret
        }
        for (_, value) in cache.sections[Self.account] ?? [:] {
            guard case .object(let e) = value, isMine(e, clientBound: false),
                let home = e["home_account_id"]?.stringValue, found[home] != nil
            else { continue }
            found[home]?.accounts[e["realm"]?.stringValue ?? ""] = e
        }
        for (_, value) in cache.sections[Self.accessToken] ?? [:] {
            guard case .object(let e) = value, isMine(e), let home = e["home_account_id"]?.stringValue,
                found[home] != nil, e["ext_cache_key"] == nil, e["key_id"] == nil
            else { continue }
            found[home]?.accessTokens.append((e["realm"]?.stringValue ?? "", e))
        }

        var out: [String: AccountEntry] = [:]
        out.reserveCapacity(found.count)
        for (home, f) in found {
            // The realm: the Account entry's (the one with an ID token first), else the ID token's.
            let realm =
                f.accounts.keys.filter { f.idTokens[$0] != nil }.min() ?? f.accounts.keys.min() ?? f.idTokens.keys.min()
                ?? ""
            let idToken = f.idTokens[realm] ?? f.idTokens.values.first
            var claims: JSONValue = .object([:])
            if let idToken, let jwt = try? JWT(decoding: idToken) { claims = jwt.claims }
            let stored = f.accounts[realm]
            let username =
                stored?["username"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
                ?? claims["preferred_username"]?.stringValue ?? claims["email"]?.stringValue
                ?? claims["sub"]?.stringValue ?? ""
            let utid = home.split(separator: ".", maxSplits: 1).dropFirst().first.map(String.init)
            let tenant = claims["tid"]?.stringValue ?? utid ?? realm
            let account = Account(
                homeAccountID: home,
                username: username,
                tenantID: tenant,
                environment: stored?["environment"]?.stringValue ?? environment,
                idToken: idToken,
                claims: claims,
                realm: realm
            )
            var entry = AccountEntry(account: account, refreshToken: f.rt.map { RefreshToken(Secret($0.secret)) })
            entry.signInScopes = f.rt?.scopes ?? []
            for (atRealm, e) in f.accessTokens where atRealm.lowercased() == realm.lowercased() {
                guard let secret = e["secret"]?.stringValue, let expiresOn = Self.seconds(e["expires_on"]) else {
                    continue
                }
                let token = AccessToken(
                    value: Secret(secret),
                    scopes: Self.split(e["target"]?.stringValue),
                    expiresOn: expiresOn,
                    refreshOn: Self.seconds(e["refresh_on"]),
                    cachedAt: Self.seconds(e["cached_at"]) ?? 0,
                    extExpiresOn: Self.seconds(e["extended_expires_on"])
                )
                // Two entries for one scope set (written by different SDKs): the one that lives longest.
                if let other = entry.accessTokens[token.key.key], other.expiresOn >= token.expiresOn { continue }
                entry.accessTokens[token.key.key] = token
            }
            out[home] = entry
        }
        return out
    }

    // MARK: - Writing

    /// Whether two views of one account would be written alike (tokens compared by identity: a token is immutable,
    /// and one the change did not touch is the same object).
    static func same(_ a: AccountEntry?, _ b: AccountEntry?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        guard a.account == b.account, a.refreshToken == b.refreshToken, a.signInScopes == b.signInScopes,
            a.accessTokens.count == b.accessTokens.count
        else { return false }
        for (k, t) in a.accessTokens { guard let u = b.accessTokens[k], u === t else { return false } }
        return true
    }

    /// The accounts whose views differ between `before` and `after`.
    static func changed(_ before: [String: AccountEntry], _ after: [String: AccountEntry]) -> Set<String> {
        var ids = Set<String>()
        for (id, b) in before where !same(b, after[id]) { ids.insert(id) }
        for id in after.keys where before[id] == nil { ids.insert(id) }
        return ids
    }

    /// Where this client's entries of each account are: section and key, by `home_account_id` (lower-cased).
    private func index(_ cache: UnifiedCache) -> [String: [(section: String, key: String)]] {
        var out: [String: [(section: String, key: String)]] = [:]
        for section in [Self.accessToken, Self.refreshToken, Self.idToken] {
            for (key, value) in cache.sections[section] ?? [:] {
                guard case .object(let e) = value, isMine(e), let home = e["home_account_id"]?.stringValue else {
                    continue
                }
                out[home.lowercased(), default: []].append((section, key))
            }
        }
        return out
    }

    /// Writes the accounts in `ids` as `after` has them into `cache` (removing those `after` lacks); entries of
    /// other clients, other authorities and other SDKs stay as they are, and so do fields this library does not know
    /// on the entries it rewrites.
    func apply(_ after: [String: AccountEntry], ids: Set<String>, to cache: inout UnifiedCache, now: Double) {
        guard !ids.isEmpty else { return }
        let where_ = index(cache)
        var sections = cache.sections
        cache.sections = [:]  // one owner of each section while it changes (no copy-on-write copies)
        defer { cache.sections = sections }
        var removed: [String] = []
        for id in ids {
            let mine = where_[id.lowercased()] ?? []
            guard let entry = after[id] else {
                for (section, key) in mine { sections[section]?[key] = nil }
                removed.append(id)
                continue
            }
            write(entry, replacing: mine, into: &sections, now: now)
        }
        // An account entry is shared by every client of the authority: it goes when no credential names it any more.
        if !removed.isEmpty {
            let gone = Set(removed.map { $0.lowercased() })
            var named = Set<String>()
            for section in [Self.accessToken, Self.refreshToken, Self.idToken] {
                for (_, value) in sections[section] ?? [:] {
                    guard case .object(let e) = value, isMine(e, clientBound: false),
                        let home = e["home_account_id"]?.stringValue?.lowercased(), gone.contains(home)
                    else { continue }
                    named.insert(home)
                }
            }
            if var accounts = sections[Self.account] {
                for (key, value) in accounts {
                    guard case .object(let e) = value, isMine(e, clientBound: false),
                        let home = e["home_account_id"]?.stringValue?.lowercased(), gone.contains(home),
                        !named.contains(home)
                    else { continue }
                    accounts[key] = nil
                }
                sections[Self.account] = accounts
            }
        }
    }

    private func write(
        _ entry: AccountEntry,
        replacing mine: [(section: String, key: String)],
        into sections: inout [String: [String: JSONValue]],
        now: Double
    ) {
        let a = entry.account
        let home = a.homeAccountID
        let realm = a.realm
        func merged(_ section: String, _ key: String, _ fields: [String: JSONValue]) {
            var e = sections[section]?[key]?.objectValue ?? [:]
            for (k, v) in fields { e[k] = v }
            sections[section, default: [:]][key] = .object(e)
        }
        var keep = Set<String>()

        // Account (shared by the authority's clients).
        let accountKey = "\(home)-\(environment)-\(realm)".lowercased()
        var accountFields: [String: JSONValue] = [
            "home_account_id": .string(home), "environment": .string(environment), "realm": .string(realm),
            "username": .string(a.username),
        ]
        let existingAccount = sections[Self.account]?[accountKey]
        if existingAccount?["authority_type"]?.stringValue == nil { accountFields["authority_type"] = "MSSTS" }
        if existingAccount?["local_account_id"]?.stringValue == nil {
            let local = a.claims["oid"]?.stringValue ?? a.claims["sub"]?.stringValue
            accountFields["local_account_id"] = .string(
                local ?? home.split(separator: ".").first.map(String.init) ?? ""
            )
        }
        merged(Self.account, accountKey, accountFields)

        // IdToken.
        if let idToken = a.idToken {
            let key = "\(home)-\(environment)-idtoken-\(clientID)-\(realm)-".lowercased()
            merged(
                Self.idToken,
                key,
                [
                    "credential_type": "IdToken", "secret": .string(idToken), "home_account_id": .string(home),
                    "environment": .string(environment), "realm": .string(realm), "client_id": .string(clientID),
                ]
            )
            keep.insert(Self.idToken + "\u{0}" + key)
        } else {
            for (section, key) in mine where section == Self.idToken { keep.insert(section + "\u{0}" + key) }
        }

        // RefreshToken: the existing entry keeps its key (and target); a new one is filed under the sign-in's scopes.
        if let rt = entry.refreshToken {
            let existing = mine.first { $0.section == Self.refreshToken }
            let key: String
            var fields: [String: JSONValue] = [
                "credential_type": "RefreshToken", "home_account_id": .string(home),
                "environment": .string(environment), "client_id": .string(clientID),
                Self.signInScopesField: .string(entry.signInScopes.joined(separator: " ")),
            ]
            let secret = rt.secret.unsafeExposed
            if let existing, let old = sections[Self.refreshToken]?[existing.key]?.objectValue {
                key = existing.key
                if old["secret"]?.stringValue != secret { fields["last_modification_time"] = Self.stamp(now) }
                if old["target"] == nil { fields["target"] = .string(Self.target(entry.signInScopes)) }
            } else {
                let target = Self.target(entry.signInScopes + ["openid", "profile", "offline_access"])
                key = "\(home)-\(environment)-refreshtoken-\(clientID)--\(target)".lowercased()
                fields["target"] = .string(target)
                fields["last_modification_time"] = Self.stamp(now)
            }
            fields["secret"] = .string(secret)
            merged(Self.refreshToken, key, fields)
            keep.insert(Self.refreshToken + "\u{0}" + key)
        }

        // AccessTokens: one entry per cached scope set.
        for token in entry.accessTokens.values {
            let target = Self.target(token.scopes)
            let key = "\(home)-\(environment)-accesstoken-\(clientID)-\(realm)-\(target)".lowercased()
            keep.insert(Self.accessToken + "\u{0}" + key)
            if let old = sections[Self.accessToken]?[key]?.objectValue,
                old["secret"]?.stringValue == token.value.unsafeExposed,
                Self.seconds(old["expires_on"]) == token.expiresOn.rounded(.down)
            {
                continue  // unchanged
            }
            var fields: [String: JSONValue] = [
                "credential_type": "AccessToken", "secret": .string(token.value.unsafeExposed),
                "home_account_id": .string(home), "environment": .string(environment), "client_id": .string(clientID),
                "target": .string(target), "realm": .string(realm), "token_type": "Bearer",
                "cached_at": Self.stamp(token.cachedAt), "expires_on": Self.stamp(token.expiresOn),
                "extended_expires_on": Self.stamp(token.extExpiresOn ?? token.expiresOn),
            ]
            if let r = token.refreshOn { fields["refresh_on"] = Self.stamp(r) }
            var e = sections[Self.accessToken]?[key]?.objectValue ?? [:]
            if token.refreshOn == nil { e["refresh_on"] = nil }
            for (k, v) in fields { e[k] = v }
            sections[Self.accessToken, default: [:]][key] = .object(e)
        }

        // Entries of this client and account that the view no longer has (ATs of other realms stay).
        for (section, key) in mine where !keep.contains(section + "\u{0}" + key) {
            if section == Self.accessToken,
                let r = sections[section]?[key]?["realm"]?.stringValue, r.lowercased() != realm.lowercased()
            {
                continue
            }
            sections[section]?[key] = nil
        }

        // AppMetadata, as MSAL writes it for every client that signs in.
        let metaKey = "appmetadata-\(environment)-\(clientID)"
        if sections[Self.appMetadata]?[metaKey] == nil {
            sections[Self.appMetadata, default: [:]][metaKey] = [
                "client_id": .string(clientID), "environment": .string(environment),
            ]
        }
    }
}
