/// What the client may answer with (native-auth `challenge_type`). `redirect` is always sent in addition.
public enum ChallengeType: String, Sendable, CaseIterable {
    case oob, password
}

/// Capabilities advertised to the server (`mfa_required`, `registration_required`).
public enum Capability: String, Sendable, CaseIterable {
    case mfaRequired = "mfa_required"
    case registrationRequired = "registration_required"
}

/// Where tokens are kept: in memory (the default), or in a file in MSAL's unified cache format (optionally encrypted
/// with a host-supplied AES-256-GCM key).
public enum CacheSetting: Sendable, Equatable {
    case memory
    case file(path: String, key: Secret?)
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

/// A validated client configuration (the C ABI decodes it from the document given to `na_client_new`).
public struct ClientConfiguration: Sendable {
    public var authority: Authority
    public var clientID: String
    /// In the order the SDKs send them: `oob`, `password` (then `redirect`, always).
    public var challengeTypes: [ChallengeType]
    public var capabilities: [Capability]
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

    public init(
        authority: Authority,
        clientID: String,
        challengeTypes: [ChallengeType] = [.oob, .password],
        capabilities: [Capability] = [],
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
        caBundleSource: String = "default"
    ) {
        self.authority = authority
        self.clientID = clientID
        self.challengeTypes = ChallengeType.allCases.filter(challengeTypes.contains)
        self.capabilities = Capability.allCases.filter(capabilities.contains)
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
