internal import NativeAuthCore
internal import NativeAuthJSON

/// DPoP-bound tokens (RFC 9449) and their key in the unified cache file.
///
/// MSAL for Python 1.39 serves any entry of its `AccessToken` section that matches the account, client, realm and
/// scopes — `token_cache.py`'s `search` filters on neither `token_type` nor `key_id` (it adds `key_id` to the query
/// only when the app itself asks for a key-bound token), and `acquire_token_silent` hands the secret out as the
/// app's token — and presents any `RefreshToken` entry of the account without a proof. A DPoP-bound token in those
/// sections would be used as a bearer token (and the refresh token refused, or worse, dropped). So this library keeps
/// DPoP-bound credentials in sections of its own, which MSAL never reads (and, like every section it does not know,
/// writes back as they were):
///
/// - `NativeAuthDPoPAccessToken`: entries shaped as `AccessToken`'s, with `"token_type":"DPoP"` and `key_id` (the
///   key's RFC 7638 thumbprint), keyed `<home_account_id>-<environment>-nativeauthdpopaccesstoken-<client_id>-<realm>-
///   <target>`;
/// - `NativeAuthDPoPRefreshToken`: shaped as `RefreshToken`'s, with `token_type` and `key_id`;
/// - `NativeAuthDPoPKey`: one entry per account, `<home_account_id>-<environment>-nativeauthdpopkey-<client_id>`,
///   with `key_id`, `kty` `EC`, `crv` `P-256` and `secret`, the private scalar `d` (base64url). It is in the file
///   beside the refresh token it protects — so sealed under the cache's key when the file is encrypted, plaintext
///   0600 otherwise — and goes with the account at sign-out.
///
/// The Account and IdToken entries stay MSAL's: MSAL for Python lists the account, finds no token it may use, and asks
/// for an interactive sign-in. Tokens whose `key_id` is not the thumbprint of the account's key (or whose key the file
/// does not hold, or holds in a form that is not a P-256 private key) are not loaded.
extension MSALCacheFormat {
    static let dpopAccessToken = "NativeAuthDPoPAccessToken"
    static let dpopRefreshToken = "NativeAuthDPoPRefreshToken"
    static let dpopKey = "NativeAuthDPoPKey"
    static let dpopSections = [dpopAccessToken, dpopRefreshToken, dpopKey]

    /// The section of an access token bound to `key` (none: MSAL's), and the credential type its key names.
    static func accessTokenSection(_ key: DPoPKey?) -> (section: String, credential: String) {
        key == nil ? (accessToken, accessToken) : (dpopAccessToken, dpopAccessToken)
    }

    static func refreshTokenSection(_ key: DPoPKey?) -> (section: String, credential: String) {
        key == nil ? (refreshToken, refreshToken) : (dpopRefreshToken, dpopRefreshToken)
    }

    /// The fields that say what a token is bound to.
    static func bindingFields(_ key: DPoPKey?) -> [String: JSONValue] {
        guard let key else { return [:] }
        return ["token_type": "DPoP", "key_id": .string(key.thumbprint)]
    }

    /// The DPoP access tokens at `indices` of `entries` that are of `realm` and bound to `key`.
    func dpopTokens(
        _ indices: [Int],
        of entries: [CacheEntry],
        realm: String,
        key: DPoPKey,
        _ cache: MSALCacheFormat.Document
    ) -> [AccessToken] {
        var out: [AccessToken] = []
        for e in indices where e < entries.count {
            let t = entries[e].fields
            guard t.realm?.lowercased() == realm.lowercased(), t.keyID == key.thumbprint, let secret = t.secret,
                let expiresOn = t.expiresOn
            else { continue }
            out.append(
                AccessToken(
                    value: cache.secret(secret),
                    scopes: Self.split(t.target),
                    expiresOn: expiresOn,
                    refreshOn: t.refreshOn,
                    cachedAt: t.cachedAt ?? 0,
                    extExpiresOn: t.extendedExpiresOn,
                    dpopKey: key
                )
            )
        }
        return out
    }

    /// Writes the account's key entry (unless the file already holds this key) and keeps it.
    func writeKey(
        _ key: DPoPKey,
        home: String,
        mine: [(section: String, at: Int)],
        into edit: inout Edit,
        keep: inout Set<String>
    ) {
        let name = "\(home)-\(environment)-\(Self.dpopKey)-\(clientID)".lowercased()
        let existing = mine.first { place in
            place.section == Self.dpopKey && edit.entry(place).map { edit.cache.string($0.key) == name } == true
        }
        if let existing { keep.insert(Edit.id(existing.section, existing.at)) }
        if let existing, edit.entry(existing)?.fields.keyID == key.thumbprint { return }
        guard let secret = key.exportForCache() else { return }
        edit.set(
            Self.dpopKey,
            name,
            [
                "credential_type": .string(Self.dpopKey), "home_account_id": .string(home),
                "environment": .string(environment), "client_id": .string(clientID), "kty": "EC", "crv": "P-256",
                "key_id": .string(key.thumbprint), "secret": .string(secret.unsafeExposed),
            ],
            existing: existing
        )
    }
}

extension MSALCacheFormat {
    /// The account's key among its key entries: the one its refresh token is bound to (by `key_id`), else the first;
    /// restored only when it is a P-256 private key whose thumbprint is its entry's `key_id` (an entry another process
    /// altered is no key). One restoration per account, whatever the file holds.
    static func dpopKey(
        _ entries: [(secret: FieldText, keyID: String?)],
        boundTo rtKeyID: String?,
        _ cache: MSALCacheFormat.Document
    ) -> DPoPKey? {
        guard let chosen = entries.first(where: { rtKeyID != nil && $0.keyID == rtKeyID }) ?? entries.first,
            let keyID = chosen.keyID, let key = DPoPKey.restore(cacheText: cache.secret(chosen.secret)),
            key.thumbprint == keyID
        else { return nil }
        return key
    }
}
