internal import Glibc
internal import NativeAuthCrypto
public import NativeAuthHTTP

/// What the client may answer with (native-auth `challenge_type`). `redirect` is always sent in addition.
public enum ChallengeType: String, Sendable, CaseIterable {
    case oob, password
}

/// Capabilities advertised to the server (`mfa_required`, `registration_required`).
public enum Capability: String, Sendable, CaseIterable {
    case mfaRequired = "mfa_required"
    case registrationRequired = "registration_required"
}

/// Where tokens are kept: in memory (the default), or in a file in MSAL's unified cache format — in plaintext,
/// encrypted (AES-256-GCM) with a key the host supplies, or with a key kept in a key store (`keyStore`). An encrypted
/// cache refuses a plaintext file unless `migratePlaintext` asks to encrypt it once.
public enum CacheSetting: Sendable, Equatable {
    case memory
    case file(path: String, key: Secret?, keyStore: KeyStoreSetting? = nil, migratePlaintext: Bool = false)
}

/// Where a file cache's key is kept when the host supplies none (`"key_store"`).
public struct KeyStoreSetting: Sendable, Equatable {
    public enum Choice: String, Sendable, CaseIterable {
        /// The user's Secret Service (GNOME Keyring, KWallet, KeePassXC) over D-Bus.
        case secretService = "secret_service"
        /// The user's persistent kernel keyring (no daemon; works over SSH; does not survive a reboot).
        case kernelKeyring = "kernel_keyring"
        /// The Secret Service if it answers within the bound, else the kernel keyring.
        case auto
    }

    public var choice: Choice
    /// The bound of every wait on the Secret Service (D-Bus), in milliseconds.
    public var timeoutMs: Int

    public init(choice: Choice, timeoutMs: Int = 2000) {
        self.choice = choice
        self.timeoutMs = timeoutMs
    }
}

/// What kind of server the authority is. `ciam` and `aad` are Microsoft Entra (External ID, and workforce tenants
/// at `login.microsoftonline.com`): native auth, `client_info`, Entra's issuer rules. `oidc` is any OpenID Connect
/// provider: browser and device-code sign-in only, discovery at `<authority>/.well-known/openid-configuration`, an
/// issuer equal to the authority, accounts keyed by (`iss`, `sub`).
public enum AuthorityType: String, Sendable, CaseIterable {
    case ciam, aad, oidc

    /// Microsoft Entra (either kind).
    public var isEntra: Bool { self != .oidc }
}

/// One of the app's own request headers (`request_headers`).
public struct RequestHeader: Sendable, Equatable {
    public let name: String
    public let value: String
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A validated client configuration (the C ABI decodes it from the document given to `na_client_new`).
public struct ClientConfiguration: Sendable {
    public var authority: Authority
    public var clientID: String
    /// In the order the SDKs send them: `oob`, `password` (then `redirect`, always).
    public var challengeTypes: [ChallengeType]
    public var capabilities: [Capability]
    /// `client_capabilities` (e.g. `cp1`: the app answers claims challenges): sent with every token and authorization
    /// request as `claims` `{"access_token":{"xms_cc":{"values":[…]}}}` merged with the request's own.
    public var clientCapabilities: [String]
    /// `request_headers`: the app's own `x-` headers (fraud and bot protection vendors), sent with every request to
    /// the authority's origin (native auth, token, discovery), never to APIs or other origins. Sorted by name.
    public var requestHeaders: [RequestHeader]
    public var redirectURI: String?
    public var authorityType: AuthorityType
    /// Where the provider sends the browser after a browser sign-out (`post_logout_redirect_uri`).
    public var postLogoutRedirectURI: String?
    /// The program that opens URLs when the app set no browser callback: an absolute path or a name on `PATH`,
    /// with optional arguments; the URL is appended (or replaces `%s`).
    public var browserCommand: String?
    public var connectTimeoutMs: Int
    public var requestTimeoutMs: Int
    /// The longest `Retry-After` (seconds) the library waits out inside a call before retrying once; a longer one
    /// answers `throttled`.
    public var retryAfterMaxSeconds: Double
    public var cache: CacheSetting
    public var logLevel: LogLevel
    /// The CA bundle in force and where it came from ("config", "SSL_CERT_FILE", "CURL_CA_BUNDLE" or "default").
    public var caBundle: String?
    public var caBundleSource: String
    /// `ca_bundle_system`: the configured `ca_bundle` is trusted in addition to the store in force without it.
    public var caBundleSystem: Bool
    /// `SSL_CERT_DIR`, when it is part of the store.
    public var caDirectory: String?
    /// What verifies servers (`Validate.trust`).
    public var trust: TrustStore
    /// Where requests go: the configuration's `proxy` and `no_proxy`, or the environment's, read when the client was
    /// made (`Validate.proxy`).
    public var proxy: ProxyPlan
    /// `proxy_ca_bundle`: the CA file that verifies an `https` proxy (nil: as servers are verified).
    public var proxyCABundle: String?
    /// The most threads running this client's started calls at once (`na_start`).
    public var asyncWorkers: Int
    /// The app's name and version, sent to the authority as `x-app-name` and `x-app-ver` (as MSAL iOS sends its
    /// bundle's); not sent when nil.
    public var appName: String?
    public var appVersion: String?
    /// `"dpop": true`: sign-ins get sender-constrained tokens (RFC 9449) bound to a key of the account (`DPoPKey`);
    /// `oidc` authorities only, whose discovery must offer ES256.
    public var dpop: Bool

    public init(
        authority: Authority,
        clientID: String,
        challengeTypes: [ChallengeType] = [.oob, .password],
        capabilities: [Capability] = [],
        clientCapabilities: [String] = [],
        requestHeaders: [RequestHeader] = [],
        redirectURI: String? = nil,
        authorityType: AuthorityType? = nil,
        postLogoutRedirectURI: String? = nil,
        browserCommand: String? = nil,
        connectTimeoutMs: Int = 10_000,
        requestTimeoutMs: Int = 30_000,
        retryAfterMaxSeconds: Double = 10,
        cache: CacheSetting = .memory,
        logLevel: LogLevel = .off,
        caBundle: String? = nil,
        caBundleSource: String = "default",
        caBundleSystem: Bool = false,
        caDirectory: String? = nil,
        trust: TrustStore? = nil,
        proxy: ProxyPlan = ProxyPlan(),
        proxyCABundle: String? = nil,
        asyncWorkers: Int = 4,
        appName: String? = nil,
        appVersion: String? = nil,
        dpop: Bool = false
    ) {
        self.authority = authority
        self.clientID = clientID
        self.challengeTypes = ChallengeType.allCases.filter(challengeTypes.contains)
        self.capabilities = Capability.allCases.filter(capabilities.contains)
        self.clientCapabilities = clientCapabilities
        self.requestHeaders = requestHeaders
        self.redirectURI = redirectURI
        self.authorityType = authorityType ?? (authority.parsed.host == "login.microsoftonline.com" ? .aad : .ciam)
        self.postLogoutRedirectURI = postLogoutRedirectURI
        self.browserCommand = browserCommand
        self.connectTimeoutMs = connectTimeoutMs
        self.requestTimeoutMs = requestTimeoutMs
        self.retryAfterMaxSeconds = retryAfterMaxSeconds
        self.cache = cache
        self.logLevel = logLevel
        self.caBundle = caBundle
        self.caBundleSource = caBundleSource
        self.caBundleSystem = caBundleSystem
        self.caDirectory = caDirectory
        self.trust = trust ?? caBundle.map(TrustStore.only) ?? .system
        self.proxy = proxy
        self.proxyCABundle = proxyCABundle
        self.asyncWorkers = asyncWorkers
        self.appName = appName
        self.appVersion = appVersion
        self.dpop = dpop
    }

    /// The redirect URI of browser sign-ins: the configured one, else `http://localhost` (Entra) or
    /// `http://127.0.0.1` (other providers, as RFC 8252 recommends); the listener's port is added when it has none.
    public var browserRedirectURI: String {
        redirectURI ?? (authorityType == .oidc ? "http://127.0.0.1" : "http://localhost")
    }

    /// The challenge types sent, in order, `redirect` last.
    public var challengeTypeNames: [String] { challengeTypes.map(\.rawValue) + ["redirect"] }

    /// A client id is 1-256 printable ASCII characters.
    public static func isValidClientID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 256 && id.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
    }
}

/// The checks of a configuration's values (the C ABI reads the members; requests are checked the same way). Errors
/// are `invalid_argument` naming the member.
extension Validate {
    public static func authorityType(_ name: String?) throws(NativeAuthError) -> AuthorityType? {
        guard let name else { return nil }
        guard let t = AuthorityType(rawValue: name) else {
            throw .invalidArgument("authority_type: must be ciam, aad or oidc", field: "authority_type")
        }
        return t
    }

    /// Exactly one of `authority` and `tenantSubdomain`.
    public static func authority(
        _ authority: String?,
        tenantSubdomain: String?,
        type: AuthorityType?
    ) throws(NativeAuthError) -> Authority {
        switch (authority, tenantSubdomain) {
        case (let a?, nil): return try Authority(a, type: type)
        case (nil, let s?): return try Authority(tenantSubdomain: s)
        case (nil, nil): throw .invalidArgument("authority: required (or tenant_subdomain)", field: "authority")
        case (_?, _?):
            throw .invalidArgument("authority: give either authority or tenant_subdomain, not both", field: "authority")
        }
    }

    public static func clientID(_ id: String) throws(NativeAuthError) -> String {
        guard ClientConfiguration.isValidClientID(id) else {
            throw .invalidArgument("client_id: must be 1-256 printable ASCII characters", field: "client_id")
        }
        return id
    }

    /// Default `oob`, `password`; `redirect` is accepted and always sent anyway.
    public static func challengeTypes(_ names: [String]?) throws(NativeAuthError) -> [ChallengeType] {
        var types: [ChallengeType] = []
        for (i, name) in (names ?? ["oob", "password"]).enumerated() where name != "redirect" {
            guard let t = ChallengeType(rawValue: name) else {
                throw .invalidArgument(
                    "challenge_types[\(i)]: must be \"password\" or \"oob\"",
                    field: "challenge_types[\(i)]"
                )
            }
            types.append(t)
        }
        return types
    }

    public static func capabilities(_ names: [String]?) throws(NativeAuthError) -> [Capability] {
        var capabilities: [Capability] = []
        for (i, name) in (names ?? []).enumerated() {
            guard let c = Capability(rawValue: name) else {
                throw .invalidArgument(
                    "capabilities[\(i)]: must be \"mfa_required\" or \"registration_required\"",
                    field: "capabilities[\(i)]"
                )
            }
            capabilities.append(c)
        }
        return capabilities
    }

    /// Header name prefixes MSAL keeps for itself (iOS, Android, JS native auth): the app's headers may not use them.
    public static let reservedHeaderPrefixes = ["x-ms-", "x-client-", "x-broker-", "x-app-"]

    /// `request_headers` (`field`: where they are): at most 16; names `x-…` HTTP tokens of at most 64 characters,
    /// not a prefix MSAL reserves, each once (in any case); values at most 1024 bytes without control characters
    /// (a tab is allowed). Sorted by name.
    public static func requestHeaders(
        _ headers: [(String, String)]?,
        field: String
    ) throws(NativeAuthError)
        -> [RequestHeader]
    {
        let all = headers ?? []
        guard all.count <= 16 else { throw .invalidArgument("\(field): at most 16 headers", field: field) }
        var seen: Set<String> = []
        var out: [RequestHeader] = []
        for (name, value) in all {
            let lower = name.lowercased()
            // An HTTP token, as na_call_api's header names (APIRequest.isTokenByte).
            guard lower.hasPrefix("x-"), name.utf8.count <= 64, name.utf8.count > 2,
                name.utf8.allSatisfy(APIRequest.isTokenByte)
            else {
                throw .invalidArgument(
                    "\(field): a header name must be an HTTP token of at most 64 characters starting with x-",
                    field: field
                )
            }
            guard !reservedHeaderPrefixes.contains(where: lower.hasPrefix) else {
                throw .invalidArgument(
                    "\(field).\(name): the prefixes x-ms-, x-client-, x-broker- and x-app- are MSAL's",
                    field: "\(field).\(name)"
                )
            }
            guard seen.insert(lower).inserted else {
                throw .invalidArgument("\(field).\(name): given twice", field: "\(field).\(name)")
            }
            guard value.utf8.count <= 1024,
                value.utf8.allSatisfy(HeaderName.isValueByte)
            else {
                throw .invalidArgument(
                    "\(field).\(name): a value of at most 1024 bytes without control characters (CR, LF, NUL, …)",
                    field: "\(field).\(name)"
                )
            }
            out.append(RequestHeader(name: name, value: value))
        }
        return out.sorted { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// `client_capabilities`: at most 16 names (each 1–64 printable ASCII characters, as `cp1`), duplicates dropped.
    public static func clientCapabilities(_ names: [String]?) throws(NativeAuthError) -> [String] {
        var out: [String] = []
        let all = names ?? []
        guard all.count <= 16 else {
            throw .invalidArgument("client_capabilities: at most 16", field: "client_capabilities")
        }
        for (i, name) in all.enumerated() {
            guard !name.isEmpty, name.utf8.count <= 64,
                name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f })
            else {
                throw .invalidArgument(
                    "client_capabilities[\(i)]: must be a name of printable ASCII such as \"cp1\"",
                    field: "client_capabilities[\(i)]"
                )
            }
            if !out.contains(name) { out.append(name) }
        }
        return out
    }

    /// `app_name` / `app_version` (`field`): 1–128 printable ASCII characters (spaces inside allowed), sent as a
    /// header value.
    public static func appIdentity(_ value: String?, field: String) throws(NativeAuthError) -> String? {
        guard let value else { return nil }
        let bytes = Array(value.utf8)
        guard !bytes.isEmpty, bytes.count <= 128, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }),
            bytes.first != 0x20, bytes.last != 0x20
        else {
            throw .invalidArgument(
                "\(field): 1-128 printable ASCII characters, without leading or trailing spaces",
                field: field
            )
        }
        return value
    }

    /// An absolute URI (it has a scheme) of at most 2048 printable ASCII characters without spaces.
    public static func absoluteURI(_ uri: String?, field: String) throws(NativeAuthError) -> String? {
        guard let uri else { return nil }
        guard uri.utf8.count <= 2048, uri.contains(":"), !uri.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7f })
        else { throw .invalidArgument("\(field): must be an absolute URI without spaces", field: field) }
        return uri
    }

    /// A command line (a program and its arguments): not empty, at most 4 KiB, no control characters.
    public static func commandLine(_ line: String?, field: String) throws(NativeAuthError) -> String? {
        guard let line else { return nil }
        guard !line.isEmpty, line.utf8.count <= 4096, !line.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
            throw .invalidArgument("\(field): must be a command line", field: field)
        }
        return line
    }

    /// `dpop`: only for an `oidc` authority (Microsoft Entra issues no DPoP tokens): `dpop_unsupported` otherwise.
    public static func dpop(_ value: Bool?, authorityType: AuthorityType) throws(NativeAuthError) -> Bool {
        guard let value, value else { return false }
        guard !authorityType.isEntra else {
            throw NativeAuthError(
                .dpopUnsupported,
                "dpop: Microsoft Entra does not issue DPoP-bound tokens; \"dpop\": true needs \"authority_type\": "
                    + "\"oidc\" and a provider that offers ES256 DPoP proofs.",
                field: "dpop"
            )
        }
        return true
    }

    public static func logLevel(_ name: String?) throws(NativeAuthError) -> LogLevel {
        guard let name else { return .off }
        guard let level = LogLevel.allCases.first(where: { $0.name == name }) else {
            throw .invalidArgument("log_level: must be off, error, warning, info or verbose", field: "log_level")
        }
        return level
    }

    /// CA bundle precedence: the configuration's `ca_bundle` (a readable file) > `$SSL_CERT_FILE` >
    /// `$CURL_CA_BUNDLE` > libcurl's default. Answers the bundle and where it came from.
    public static func caBundle(
        _ configured: String?,
        environment: (String) -> String?
    ) throws(NativeAuthError) -> (path: String?, source: String) {
        if let ca = configured {
            guard isReadableFile(ca) else {
                throw .invalidArgument("ca_bundle: not a readable file", field: "ca_bundle")
            }
            return (ca, "config")
        }
        if let e = environment("SSL_CERT_FILE"), !e.isEmpty { return (e, "SSL_CERT_FILE") }
        if let e = environment("CURL_CA_BUNDLE"), !e.isEmpty { return (e, "CURL_CA_BUNDLE") }
        return (nil, "default")
    }

    /// A file cache's path: absolute, a file (no trailing slash), at most 4 KiB; without one, `default`.
    public static func cachePath(_ given: String?, default: () -> String?) throws(NativeAuthError) -> String {
        guard let given else {
            guard let fallback = `default`() else {
                throw .invalidArgument(
                    "cache.path: required (neither XDG_CACHE_HOME nor HOME is set)",
                    field: "cache.path"
                )
            }
            return fallback
        }
        guard given.hasPrefix("/"), given.utf8.count <= 4096, !given.utf8.contains(0), !given.hasSuffix("/") else {
            throw .invalidArgument("cache.path: must be an absolute path to a file", field: "cache.path")
        }
        return given
    }

    /// A cache encryption key: 32 bytes in base64 (the text is not kept; the bytes become a `Secret`).
    public static func encryptionKey(_ text: String?) throws(NativeAuthError) -> Secret? {
        guard let text else { return nil }
        guard var bytes = Base64.decode(text), bytes.count == 32 else {
            throw .invalidArgument("cache.encryption_key: must be 32 bytes in base64", field: "cache.encryption_key")
        }
        defer { bytes.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } } }
        return bytes.withUnsafeBytes { Secret(bytes: $0) }
    }

    /// `key_store` (and `key_store_timeout_ms`): where the cache key is kept; not together with `encryption_key`.
    public static func keyStore(
        _ name: String?,
        timeoutMs: Int64?,
        withKey: Bool
    ) throws(NativeAuthError) -> KeyStoreSetting? {
        guard let name else {
            guard timeoutMs == nil else {
                throw .invalidArgument(
                    "cache.key_store_timeout_ms: only with key_store",
                    field: "cache.key_store_timeout_ms"
                )
            }
            return nil
        }
        guard let choice = KeyStoreSetting.Choice(rawValue: name) else {
            throw .invalidArgument(
                "cache.key_store: must be \"secret_service\", \"kernel_keyring\" or \"auto\"",
                field: "cache.key_store"
            )
        }
        guard !withKey else {
            throw .invalidArgument(
                "cache.key_store: give either key_store or encryption_key, not both",
                field: "cache.key_store"
            )
        }
        return KeyStoreSetting(choice: choice, timeoutMs: Int(timeoutMs ?? 2000))
    }

    private static func isReadableFile(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= 4096, !path.utf8.contains(0) else { return false }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        return access(path, R_OK) == 0
    }
}
