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

    private func isMine(_ f: EntryFields, clientBound: Bool = true) -> Bool {
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

    /// The accounts of this client found in `cache`. ID token claims are decoded when first asked for.
    func accounts(in cache: UnifiedCache) -> [String: AccountEntry] {
        struct Found {
            var home: String
            var rt: (secret: FieldText, scopes: String?, target: String?, modified: Double)?
            /// The DPoP key the refresh token is bound to (its thumbprint), for one of the DPoP section.
            var rtKeyID: String? = nil
            var idTokens: [(realm: String, secret: FieldText)] = []
            var accounts: [(realm: String, username: String?)] = []
            var accessTokens: [Int] = []
            var dpopAccessTokens: [Int] = []
            /// The account's DPoP key entries: their `secret` and `key_id`.
            var dpopKeys: [(secret: FieldText, keyID: String?)] = []
        }
        var found: [Found] = []
        var slot: [String: Int] = [:]
        let refreshTokens = cache.sections[Self.refreshToken] ?? []
        let idTokens = cache.sections[Self.idToken] ?? []
        found.reserveCapacity(refreshTokens.count)
        slot.reserveCapacity(refreshTokens.count)
        func at(_ home: String) -> Int {
            if let k = slot[home] { return k }
            slot[home] = found.count
            found.append(Found(home: home))
            return found.count - 1
        }

        // Bearer refresh tokens (MSAL's section), then DPoP-bound ones (this library's own): the newest wins.
        for (list, bound) in [(refreshTokens, false), (cache.sections[Self.dpopRefreshToken] ?? [], true)] {
            list.withUnsafeBufferPointer { entries in
                for e in entries.indices {
                    guard let home = entries[e].fields.home, !home.isEmpty, let secret = entries[e].fields.secret,
                        isMine(entries[e].fields), !bound || entries[e].fields.keyID != nil
                    else { continue }
                    let modified = entries[e].fields.lastModified ?? 0
                    let k = at(home)
                    if let current = found[k].rt, current.modified > modified { continue }
                    found[k].rt = (secret, entries[e].fields.signInScopes, entries[e].fields.target, modified)
                    found[k].rtKeyID = bound ? entries[e].fields.keyID : nil
                }
            }
        }
        idTokens.withUnsafeBufferPointer { entries in
            for e in entries.indices {
                guard let home = entries[e].fields.home, !home.isEmpty, let secret = entries[e].fields.secret,
                    isMine(entries[e].fields)
                else { continue }
                found[at(home)].idTokens.append((entries[e].fields.realm ?? "", secret))
            }
        }
        (cache.sections[Self.account] ?? []).withUnsafeBufferPointer { entries in
            for e in entries.indices {
                guard let home = entries[e].fields.home, let k = slot[home],
                    isMine(entries[e].fields, clientBound: false)
                else { continue }
                found[k].accounts.append((entries[e].fields.realm ?? "", entries[e].fields.username))
            }
        }
        let accessTokens = cache.sections[Self.accessToken] ?? []
        accessTokens.withUnsafeBufferPointer { entries in
            for e in entries.indices {
                guard let home = entries[e].fields.home, let k = slot[home], !entries[e].fields.bound,
                    isMine(entries[e].fields)
                else { continue }
                found[k].accessTokens.append(e)
            }
        }
        let dpopAccessTokens = cache.sections[Self.dpopAccessToken] ?? []
        for (e, entry) in dpopAccessTokens.enumerated() {
            guard let home = entry.fields.home, let k = slot[home], entry.fields.keyID != nil, isMine(entry.fields)
            else { continue }
            found[k].dpopAccessTokens.append(e)
        }
        for entry in cache.sections[Self.dpopKey] ?? [] {
            guard let home = entry.fields.home, let k = slot[home], isMine(entry.fields),
                let secret = entry.fields.secret
            else { continue }
            found[k].dpopKeys.append((secret, entry.fields.keyID))
        }

        var out: [String: AccountEntry] = [:]
        out.reserveCapacity(found.count)
        // Scope sets repeat across accounts (one app, the same APIs): each target is split and keyed once.
        var targets: [String: (scopes: [String], key: ScopeKey)] = [:]
        func scopes(_ target: String?) -> (scopes: [String], key: ScopeKey) {
            let t = target ?? ""
            if let known = targets[t] { return known }
            let scopes = Self.split(t)
            let made = (scopes, ScopeKey(scopes))
            targets[t] = made
            return made
        }
        var signInScopes: [String: [String]] = [:]
        for f in found {
            // The realm: the Account entry's (the one with an ID token first), else the ID token's.
            let realm: String
            if f.accounts.count == 1, f.idTokens.count == 1, f.accounts[0].realm == f.idTokens[0].realm {
                realm = f.accounts[0].realm
            } else {
                let withIDToken = f.accounts.filter { a in f.idTokens.contains { $0.realm == a.realm } }
                realm =
                    withIDToken.map(\.realm).min() ?? f.accounts.map(\.realm).min() ?? f.idTokens.map(\.realm).min()
                    ?? ""
            }
            let idToken = (f.idTokens.first { $0.realm == realm } ?? f.idTokens.first).map { cache.string($0.secret) }
            var username = f.accounts.first { $0.realm == realm }?.username ?? ""
            if username.isEmpty, let idToken, let jwt = try? JWT(decoding: idToken) {
                let c = jwt.claims
                username =
                    c["preferred_username"]?.stringValue ?? c["email"]?.stringValue ?? c["sub"]?.stringValue ?? ""
            }
            let utf8 = f.home.utf8
            let utid = utf8.firstIndex(of: UInt8(ascii: ".")).map { String(f.home[utf8.index(after: $0)...]) }
            let account = Account(
                homeAccountID: f.home,
                username: username,
                tenantID: utid ?? realm,
                environment: environment,
                idToken: idToken,
                claimsFromIDToken: true,
                realm: realm
            )
            // The account's DPoP key, when the file keeps one that is a P-256 key; tokens bound to another key (or to
            // a key the file does not keep) are of no use here and are not loaded.
            let dpopKey = Self.dpopKey(f.dpopKeys, boundTo: f.rtKeyID, cache)
            var refreshToken = f.rt.map { RefreshToken(cache.secret($0.secret)) }
            if let bound = f.rtKeyID {
                refreshToken = refreshToken.flatMap { rt in
                    dpopKey.flatMap { $0.thumbprint == bound ? RefreshToken(rt.secret, dpopKey: $0) : nil }
                }
            }
            var entry = AccountEntry(account: account, refreshToken: refreshToken)
            if let rt = f.rt {
                let text = rt.scopes ?? "\u{0}" + (rt.target ?? "")
                if let known = signInScopes[text] {
                    entry.signInScopes = known
                } else {
                    let list =
                        rt.scopes.map { Self.split($0) }
                        ?? Self.split(rt.target).filter { !Self.oidcScopes.contains($0.lowercased()) }
                    signInScopes[text] = list
                    entry.signInScopes = list
                }
            }
            let lowerRealm = realm.lowercased()
            // A sign-in's tokens are all bearer or all bound to its key: those of the refresh token's kind are read.
            for e in f.accessTokens where f.rt == nil || f.rtKeyID == nil {
                let t = accessTokens[e].fields
                guard t.realm == realm || (t.realm ?? "").lowercased() == lowerRealm, let secret = t.secret,
                    let expiresOn = t.expiresOn
                else { continue }
                let (list, key) = scopes(t.target)
                let token = AccessToken(
                    value: cache.secret(secret),
                    scopes: list,
                    key: key,
                    expiresOn: expiresOn,
                    refreshOn: t.refreshOn,
                    cachedAt: t.cachedAt ?? 0,
                    extExpiresOn: t.extendedExpiresOn
                )
                // Two entries for one scope set (written by different SDKs): the one that lives longest.
                if let other = entry.accessTokens[key.key], other.expiresOn >= token.expiresOn { continue }
                entry.accessTokens[key.key] = token
            }
            if let dpopKey, f.rt == nil || f.rtKeyID != nil {
                for token in dpopTokens(f.dpopAccessTokens, of: dpopAccessTokens, realm: realm, key: dpopKey, cache) {
                    if let other = entry.accessTokens[token.key.key], other.expiresOn >= token.expiresOn { continue }
                    entry.accessTokens[token.key.key] = token
                }
            }
            out[f.home] = entry
        }
        return out
    }

    // MARK: - Writing

    /// Whether two views of one account would be written alike (tokens compared by identity: a token is immutable,
    /// and one the change did not touch is the same object).
    static func same(_ a: AccountEntry?, _ b: AccountEntry?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        // The same bits are the same value (an entry nobody touched shares every buffer with its copy): the common
        // case of a write that changes one account among many, answered without comparing fields.
        if withUnsafeBytes(of: a, { x in withUnsafeBytes(of: b) { y in x.elementsEqual(y) } }) { return true }
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

    /// Where the entries of the accounts in `ids` are (any client of this authority): section and position, by
    /// `home_account_id`.
    private func index(_ cache: UnifiedCache, _ ids: Set<String>) -> [String: [(section: String, at: Int)]] {
        var out: [String: [(section: String, at: Int)]] = [:]
        for section in [Self.accessToken, Self.refreshToken, Self.idToken, Self.account] + Self.dpopSections {
            for (at, e) in (cache.sections[section] ?? []).enumerated() {
                guard let home = e.fields.home, ids.contains(home), isMine(e.fields, clientBound: false) else {
                    continue
                }
                out[home, default: []].append((section, at))
            }
        }
        return out
    }

    /// Writes the accounts in `ids` as `after` has them into `cache` (removing those `after` lacks); entries of
    /// other clients, other authorities and other SDKs stay as they are, byte for byte, and so do fields this library
    /// does not know on the entries it rewrites.
    func apply(_ after: [String: AccountEntry], ids: Set<String>, to cache: inout UnifiedCache, now: Double) {
        guard !ids.isEmpty else { return }
        let located = index(cache, ids)
        var edit = Edit(cache: cache, owner: owner)
        for id in ids {
            let all = located[id] ?? []
            let mine = all.filter { place in
                place.section == Self.account
                    || isMine(cache.sections[place.section]?[place.at].fields ?? EntryFields())
            }
            if let entry = after[id] {
                write(entry, replacing: mine, into: &edit, now: now)
                continue
            }
            // Signed out: this client's credentials go; the account entry (shared by every client of the authority)
            // goes when no other client's credential names it.
            let others = all.contains { place in
                place.section != Self.account && !mine.contains { $0.section == place.section && $0.at == place.at }
            }
            for place in mine where place.section != Self.account || !others { edit.remove(place) }
        }
        cache = edit.result()
    }

    /// Changes to a document: entries replaced in place, added or removed.
    struct Edit {
        var cache: UnifiedCache
        let owner: EntryOwner
        /// Positions removed, by section.
        var removed: [String: Set<Int>] = [:]
        var added: [String: [CacheEntry]] = [:]

        init(cache: UnifiedCache, owner: EntryOwner) {
            self.cache = cache
            self.owner = owner
        }

        static func id(_ section: String, _ at: Int) -> String { "\(section)\u{0}\(at)" }

        func entry(_ place: (section: String, at: Int)) -> CacheEntry? {
            guard let list = cache.sections[place.section], place.at < list.count else { return nil }
            return list[place.at]
        }

        mutating func remove(_ place: (section: String, at: Int)) {
            removed[place.section, default: []].insert(place.at)
        }

        /// Sets the entry `key` of `section` to `fields` laid over what it holds (unknown fields kept); `existing`
        /// is where an entry of that key is, if any.
        mutating func set(
            _ section: String,
            _ key: String,
            _ fields: [String: JSONValue],
            existing: (section: String, at: Int)?,
            dropping: [String] = []
        ) {
            var object = existing.flatMap { entry($0) }.map { cache.object($0) } ?? [:]
            for k in dropping { object[k] = nil }
            for (k, v) in fields { object[k] = v }
            let value = JSONValue.object(object).serializedBytes() ?? Array("{}".utf8)
            let new = CacheEntry(
                key: .bytes(Array(key.utf8)),
                rawKey: nil,
                value: .bytes(value),
                fields: EntryFields(object, owner: owner)
            )
            if let existing, var list = cache.sections[existing.section], existing.at < list.count {
                cache.sections[existing.section] = nil
                list[existing.at] = new
                cache.sections[existing.section] = list
                removed[existing.section]?.remove(existing.at)
            } else {
                added[section, default: []].append(new)
            }
        }

        func result() -> UnifiedCache {
            var out = cache
            for (section, places) in removed {
                guard let list = cache.sections[section], !places.isEmpty else { continue }
                out.sections[section] = nil
                var kept: [CacheEntry] = []
                kept.reserveCapacity(list.count)
                for at in list.indices where !places.contains(at) { kept.append(list[at]) }
                out.sections[section] = kept
            }
            for (section, list) in added { out.sections[section, default: []].append(contentsOf: list) }
            return out
        }
    }

    private func write(
        _ entry: AccountEntry,
        replacing mine: [(section: String, at: Int)],
        into edit: inout Edit,
        now: Double
    ) {
        let a = entry.account
        let home = a.homeAccountID
        let realm = a.realm
        var keep = Set<String>()
        var byKey: [String: (section: String, at: Int)] = [:]
        for place in mine {
            if let e = edit.entry(place) { byKey[place.section + "\u{0}" + edit.cache.string(e.key)] = place }
        }
        func find(_ section: String, _ key: String) -> (section: String, at: Int)? { byKey[section + "\u{0}" + key] }

        // Account (shared by the authority's clients).
        let accountKey = "\(home)-\(environment)-\(realm)".lowercased()
        let existingAccount = find(Self.account, accountKey)
        var accountFields: [String: JSONValue] = [
            "home_account_id": .string(home), "environment": .string(environment), "realm": .string(realm),
            "username": .string(a.username),
        ]
        let old = existingAccount.flatMap { edit.entry($0)?.fields }
        if old?.hasAuthorityType != true { accountFields["authority_type"] = "MSSTS" }
        if old?.hasLocalAccountID != true {
            let local = a.claims["oid"]?.stringValue ?? a.claims["sub"]?.stringValue
            accountFields["local_account_id"] = .string(
                local ?? home.split(separator: ".").first.map(String.init) ?? ""
            )
        }
        if old?.username != a.username || old?.realm != realm || old?.home != home || existingAccount == nil
            || accountFields.count > 4
        {
            edit.set(Self.account, accountKey, accountFields, existing: existingAccount)
        }
        if let existingAccount { keep.insert(Edit.id(existingAccount.section, existingAccount.at)) }

        // IdToken.
        if let idToken = a.idToken {
            let key = "\(home)-\(environment)-idtoken-\(clientID)-\(realm)-".lowercased()
            let existing = find(Self.idToken, key)
            let same = existing.flatMap { edit.entry($0)?.fields.secret }.map { edit.cache.string($0) == idToken }
            if same != true {
                edit.set(
                    Self.idToken,
                    key,
                    [
                        "credential_type": "IdToken", "secret": .string(idToken), "home_account_id": .string(home),
                        "environment": .string(environment), "realm": .string(realm), "client_id": .string(clientID),
                    ],
                    existing: existing
                )
            }
            if let existing { keep.insert(Edit.id(existing.section, existing.at)) }
        } else {
            for place in mine where place.section == Self.idToken { keep.insert(Edit.id(place.section, place.at)) }
        }

        // RefreshToken: the existing entry keeps its key (and target); a new one is filed under the sign-in's scopes.
        // A DPoP-bound one goes to this library's own section (MSAL would present it without a proof).
        if let rt = entry.refreshToken {
            let secret = rt.secret.unsafeExposed
            let (section, credential) = Self.refreshTokenSection(rt.dpopKey)
            // The latest of this client's refresh tokens for the account (the others are removed below).
            let existing = mine.filter { $0.section == section }
                .max { (edit.entry($0)?.fields.lastModified ?? 0) < (edit.entry($1)?.fields.lastModified ?? 0) }
            var fields: [String: JSONValue] = [
                "credential_type": .string(credential), "home_account_id": .string(home),
                "environment": .string(environment), "client_id": .string(clientID),
                Self.signInScopesField: .string(entry.signInScopes.joined(separator: " ")),
                "secret": .string(secret),
            ]
            fields.merge(Self.bindingFields(rt.dpopKey)) { _, new in new }
            if let existing, let e = edit.entry(existing) {
                let oldSecret = e.fields.secret.map { edit.cache.string($0) }
                if oldSecret != secret { fields["last_modification_time"] = Self.stamp(now) }
                if e.fields.target == nil { fields["target"] = .string(Self.target(entry.signInScopes)) }
                if oldSecret != secret || e.fields.signInScopes != entry.signInScopes.joined(separator: " ")
                    || e.fields.keyID != rt.dpopKey?.thumbprint
                {
                    edit.set(section, edit.cache.string(e.key), fields, existing: existing)
                }
                keep.insert(Edit.id(existing.section, existing.at))
            } else {
                let target = Self.target(entry.signInScopes + ["openid", "profile", "offline_access"])
                fields["target"] = .string(target)
                fields["last_modification_time"] = Self.stamp(now)
                let key = "\(home)-\(environment)-\(credential)-\(clientID)--\(target)".lowercased()
                edit.set(section, key, fields, existing: nil)
            }
        }
        if let key = entry.dpopKey { writeKey(key, home: home, mine: mine, into: &edit, keep: &keep) }

        // AccessTokens: one entry per cached scope set.
        for token in entry.accessTokens.values {
            let target = Self.target(token.scopes)
            let (section, credential) = Self.accessTokenSection(token.dpopKey)
            let key = "\(home)-\(environment)-\(credential)-\(clientID)-\(realm)-\(target)".lowercased()
            let existing = find(section, key)
            if let existing { keep.insert(Edit.id(existing.section, existing.at)) }
            if let existing, let e = edit.entry(existing)?.fields, let s = e.secret,
                e.expiresOn == token.expiresOn.rounded(.down), edit.cache.string(s) == token.value.unsafeExposed
            {
                continue  // unchanged
            }
            var fields: [String: JSONValue] = [
                "credential_type": .string(credential), "secret": .string(token.value.unsafeExposed),
                "home_account_id": .string(home), "environment": .string(environment), "client_id": .string(clientID),
                "target": .string(target), "realm": .string(realm), "token_type": .string(token.tokenType),
                "cached_at": Self.stamp(token.cachedAt), "expires_on": Self.stamp(token.expiresOn),
                "extended_expires_on": Self.stamp(token.extExpiresOn ?? token.expiresOn),
            ]
            fields.merge(Self.bindingFields(token.dpopKey)) { _, new in new }
            if let r = token.refreshOn { fields["refresh_on"] = Self.stamp(r) }
            edit.set(
                section,
                key,
                fields,
                existing: existing,
                dropping: token.refreshOn == nil ? ["refresh_on"] : []
            )
        }

        // Entries of this client and account that the view no longer has (ATs of other realms stay).
        for place in mine where place.section != Self.account && !keep.contains(Edit.id(place.section, place.at)) {
            guard let e = edit.entry(place) else { continue }
            if place.section == Self.accessToken || place.section == Self.dpopAccessToken,
                (e.fields.realm ?? "").lowercased() != realm.lowercased()
            {
                continue
            }
            edit.remove(place)
        }

        // AppMetadata, as MSAL writes it for every client that signs in.
        let metaKey = "appmetadata-\(environment)-\(clientID)"
        let metaKeyText = Array(metaKey.utf8)
        if !(edit.cache.sections[Self.appMetadata] ?? []).contains(where: { edit.cache.string($0.key) == metaKey }),
            !(edit.added[Self.appMetadata] ?? []).contains(where: {
                if case .bytes(metaKeyText) = $0.key { true } else { false }
            })
        {
            edit.set(
                Self.appMetadata,
                metaKey,
                ["client_id": .string(clientID), "environment": .string(environment)],
                existing: nil
            )
        }
    }
}
