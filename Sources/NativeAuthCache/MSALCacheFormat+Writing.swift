internal import NativeAuthCore
internal import NativeAuthJSON

/// Writing: the accounts that changed, into a document.
extension MSALCacheFormat {
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
    private func index(_ cache: MSALCacheFormat.Document, _ ids: Set<String>) -> [String: [(section: String, at: Int)]]
    {
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
    func apply(_ after: [String: AccountEntry], ids: Set<String>, to cache: inout MSALCacheFormat.Document, now: Double)
    {
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

    /// Where this client's entries of one account are, by section and key.
    struct Placed {
        let mine: [(section: String, at: Int)]
        private var byKey: [String: (section: String, at: Int)] = [:]

        init(_ mine: [(section: String, at: Int)], in edit: Edit) {
            self.mine = mine
            for place in mine {
                if let e = edit.entry(place) { byKey[place.section + "\u{0}" + edit.cache.string(e.key)] = place }
            }
        }

        func find(_ section: String, _ key: String) -> (section: String, at: Int)? { byKey[section + "\u{0}" + key] }
    }

    /// Writes one account's view over this client's entries of it (`mine`): entries that did not change stay as
    /// they are, those the view no longer has go.
    private func write(
        _ entry: AccountEntry,
        replacing mine: [(section: String, at: Int)],
        into edit: inout Edit,
        now: Double
    ) {
        let placed = Placed(mine, in: edit)
        var keep = Set<String>()
        writeAccount(entry.account, placed, into: &edit, keep: &keep)
        writeIDToken(entry.account, placed, into: &edit, keep: &keep)
        if let rt = entry.refreshToken { writeRefreshToken(rt, of: entry, placed, into: &edit, keep: &keep, now: now) }
        if let key = entry.dpopKey {
            writeKey(key, home: entry.account.homeAccountID, mine: mine, into: &edit, keep: &keep)
        }
        writeAccessTokens(entry, placed, into: &edit, keep: &keep)

        // Entries of this client and account that the view no longer has (ATs of other realms stay).
        let realm = entry.account.realm
        for place in mine where place.section != Self.account && !keep.contains(Edit.id(place.section, place.at)) {
            guard let e = edit.entry(place) else { continue }
            if place.section == Self.accessToken || place.section == Self.dpopAccessToken,
                (e.fields.realm ?? "").lowercased() != realm.lowercased()
            {
                continue
            }
            edit.remove(place)
        }
        writeAppMetadata(into: &edit)
    }

    /// The Account entry (shared by the authority's clients).
    private func writeAccount(_ a: Account, _ placed: Placed, into edit: inout Edit, keep: inout Set<String>) {
        let home = a.homeAccountID
        let realm = a.realm
        let accountKey = "\(home)-\(environment)-\(realm)".lowercased()
        let existingAccount = placed.find(Self.account, accountKey)
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
    }

    /// The IdToken entry (kept as it is when the view has no ID token).
    private func writeIDToken(_ a: Account, _ placed: Placed, into edit: inout Edit, keep: inout Set<String>) {
        let home = a.homeAccountID
        let realm = a.realm
        if let idToken = a.idToken {
            let key = "\(home)-\(environment)-idtoken-\(clientID)-\(realm)-".lowercased()
            let existing = placed.find(Self.idToken, key)
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
            for place in placed.mine where place.section == Self.idToken {
                keep.insert(Edit.id(place.section, place.at))
            }
        }
    }

    /// The RefreshToken entry: the existing entry keeps its key (and target); a new one is filed under the sign-in's
    /// scopes. A DPoP-bound one goes to this library's own section (MSAL would present it without a proof).
    private func writeRefreshToken(
        _ rt: RefreshToken,
        of entry: AccountEntry,
        _ placed: Placed,
        into edit: inout Edit,
        keep: inout Set<String>,
        now: Double
    ) {
        let home = entry.account.homeAccountID
        let secret = rt.secret.unsafeExposed
        let (section, credential) = Self.refreshTokenSection(rt.dpopKey)
        // The latest of this client's refresh tokens for the account (the others are removed below).
        let existing = placed.mine.filter { $0.section == section }
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

    /// The AccessToken entries: one per cached scope set.
    private func writeAccessTokens(
        _ entry: AccountEntry,
        _ placed: Placed,
        into edit: inout Edit,
        keep: inout Set<String>
    ) {
        let home = entry.account.homeAccountID
        let realm = entry.account.realm
        for token in entry.accessTokens.values {
            let target = Self.target(token.scopes)
            let (section, credential) = Self.accessTokenSection(token.dpopKey)
            let key = "\(home)-\(environment)-\(credential)-\(clientID)-\(realm)-\(target)".lowercased()
            let existing = placed.find(section, key)
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
    }

    /// AppMetadata, as MSAL writes it for every client that signs in.
    private func writeAppMetadata(into edit: inout Edit) {
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
