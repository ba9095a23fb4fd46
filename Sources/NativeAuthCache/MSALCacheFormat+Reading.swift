internal import NativeAuthCore
internal import NativeAuthCrypto
internal import NativeAuthJSON

/// What the reading pass finds of one account of this client in the file: where its credentials are.
struct FoundAccount {
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

/// The accounts found so far, in the order found, and where each is by `home_account_id`.
struct FoundAccounts {
    var list: [FoundAccount] = []
    var slot: [String: Int] = [:]

    mutating func at(_ home: String) -> Int {
        if let k = slot[home] { return k }
        slot[home] = list.count
        list.append(FoundAccount(home: home))
        return list.count - 1
    }
}

/// Scope lists made from the file's text once each: scope sets repeat across accounts (one app, the same APIs).
struct ScopeMemo {
    private var targets: [String: (scopes: [String], key: ScopeKey)] = [:]
    private var signInScopes: [String: [String]] = [:]

    /// An access token's `target`, split and keyed.
    mutating func scopes(_ target: String?) -> (scopes: [String], key: ScopeKey) {
        let t = target ?? ""
        if let known = targets[t] { return known }
        let scopes = MSALCacheFormat.split(t)
        let made = (scopes, ScopeKey(scopes))
        targets[t] = made
        return made
    }

    /// A refresh token's sign-in scopes: its `nativeauth_sign_in_scopes`, else its `target` less the OIDC scopes.
    mutating func signInScopes(_ scopes: String?, target: String?) -> [String] {
        let text = scopes ?? "\u{0}" + (target ?? "")
        if let known = signInScopes[text] { return known }
        let list =
            scopes.map { MSALCacheFormat.split($0) }
            ?? MSALCacheFormat.split(target).filter { !MSALCacheFormat.oidcScopes.contains($0.lowercased()) }
        signInScopes[text] = list
        return list
    }
}

/// Reading: the accounts of this client in a document.
extension MSALCacheFormat {
    /// The accounts of this client found in `cache`. ID token claims are decoded when first asked for.
    func accounts(in cache: MSALCacheFormat.Document) -> [String: AccountEntry] {
        let found = gather(cache)
        var out: [String: AccountEntry] = [:]
        out.reserveCapacity(found.count)
        var memo = ScopeMemo()
        let accessTokens = cache.sections[Self.accessToken] ?? []
        let dpopAccessTokens = cache.sections[Self.dpopAccessToken] ?? []
        for f in found {
            out[f.home] = entry(f, cache, accessTokens: accessTokens, dpopAccessTokens: dpopAccessTokens, memo: &memo)
        }
        return out
    }

    /// One pass over the sections: the accounts that have a refresh token or an ID token of this client, and where
    /// their other entries are.
    private func gather(_ cache: MSALCacheFormat.Document) -> [FoundAccount] {
        var found = FoundAccounts()
        let refreshTokens = cache.sections[Self.refreshToken] ?? []
        let idTokens = cache.sections[Self.idToken] ?? []
        found.list.reserveCapacity(refreshTokens.count)
        found.slot.reserveCapacity(refreshTokens.count)

        // Bearer refresh tokens (MSAL's section), then DPoP-bound ones (this library's own): the newest wins.
        for (list, bound) in [(refreshTokens, false), (cache.sections[Self.dpopRefreshToken] ?? [], true)] {
            list.withUnsafeBufferPointer { entries in
                for e in entries.indices {
                    guard let home = entries[e].fields.home, !home.isEmpty, let secret = entries[e].fields.secret,
                        isMine(entries[e].fields), !bound || entries[e].fields.keyID != nil
                    else { continue }
                    let modified = entries[e].fields.lastModified ?? 0
                    let k = found.at(home)
                    if let current = found.list[k].rt, current.modified > modified { continue }
                    found.list[k].rt = (secret, entries[e].fields.signInScopes, entries[e].fields.target, modified)
                    found.list[k].rtKeyID = bound ? entries[e].fields.keyID : nil
                }
            }
        }
        idTokens.withUnsafeBufferPointer { entries in
            for e in entries.indices {
                guard let home = entries[e].fields.home, !home.isEmpty, let secret = entries[e].fields.secret,
                    isMine(entries[e].fields)
                else { continue }
                found.list[found.at(home)].idTokens.append((entries[e].fields.realm ?? "", secret))
            }
        }
        gatherOthers(cache, into: &found)
        return found.list
    }

    /// The Account entries, access tokens and DPoP keys of the accounts found.
    private func gatherOthers(_ cache: MSALCacheFormat.Document, into found: inout FoundAccounts) {
        (cache.sections[Self.account] ?? []).withUnsafeBufferPointer { entries in
            for e in entries.indices {
                guard let home = entries[e].fields.home, let k = found.slot[home],
                    isMine(entries[e].fields, clientBound: false)
                else { continue }
                found.list[k].accounts.append((entries[e].fields.realm ?? "", entries[e].fields.username))
            }
        }
        let accessTokens = cache.sections[Self.accessToken] ?? []
        accessTokens.withUnsafeBufferPointer { entries in
            for e in entries.indices {
                guard let home = entries[e].fields.home, let k = found.slot[home], !entries[e].fields.bound,
                    isMine(entries[e].fields)
                else { continue }
                found.list[k].accessTokens.append(e)
            }
        }
        let dpopAccessTokens = cache.sections[Self.dpopAccessToken] ?? []
        for (e, entry) in dpopAccessTokens.enumerated() {
            guard let home = entry.fields.home, let k = found.slot[home], entry.fields.keyID != nil,
                isMine(entry.fields)
            else { continue }
            found.list[k].dpopAccessTokens.append(e)
        }
        for entry in cache.sections[Self.dpopKey] ?? [] {
            guard let home = entry.fields.home, let k = found.slot[home], isMine(entry.fields),
                let secret = entry.fields.secret
            else { continue }
            found.list[k].dpopKeys.append((secret, entry.fields.keyID))
        }
    }

    /// The account as the file has it: its realm (the Account entry's, the one with an ID token first, else the ID
    /// token's), its ID token, and a username (the Account entry's, else from the ID token's claims).
    private func account(_ f: FoundAccount, _ cache: MSALCacheFormat.Document) -> Account {
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
        return Account(
            homeAccountID: f.home,
            username: username,
            tenantID: utid ?? realm,
            environment: environment,
            idToken: idToken,
            claimsFromIDToken: true,
            realm: realm
        )
    }

    /// The core's view of one account found: the account, its refresh token and sign-in scopes, its access tokens.
    private func entry(
        _ f: FoundAccount,
        _ cache: MSALCacheFormat.Document,
        accessTokens: [CacheEntry],
        dpopAccessTokens: [CacheEntry],
        memo: inout ScopeMemo
    ) -> AccountEntry {
        let account = account(f, cache)
        let realm = account.realm
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
        if let rt = f.rt { entry.signInScopes = memo.signInScopes(rt.scopes, target: rt.target) }
        let lowerRealm = realm.lowercased()
        // A sign-in's tokens are all bearer or all bound to its key: those of the refresh token's kind are read.
        for e in f.accessTokens where f.rt == nil || f.rtKeyID == nil {
            let t = accessTokens[e].fields
            guard t.realm == realm || (t.realm ?? "").lowercased() == lowerRealm, let secret = t.secret,
                let expiresOn = t.expiresOn
            else { continue }
            let (list, key) = memo.scopes(t.target)
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
        return entry
    }
}
