internal import Glibc
import NativeAuthCache
import NativeAuthCore
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON

/// The composition root: a configuration document → a `NativeAuthClient` with libcurl transports, and the effective
/// configuration back as `na_client_info` reports it.
enum ClientFactory {
    /// Builds a client from its configuration document. `environment` looks up environment variables (tests inject
    /// it).
    static func make(
        _ f: Fields,
        environment: @escaping @Sendable (String) -> String? = processEnvironment
    ) throws(NativeAuthError)
        -> NativeAuthClient
    {
        let config = try configuration(f, environment: environment)
        var options = HTTPClientOptions()
        options.connectTimeoutMs = config.connectTimeoutMs
        options.totalTimeoutMs = config.requestTimeoutMs
        options.caBundlePath = config.caBundle
        var apiOptions = options
        // Identity answers are small (a token response is a few kilobytes); 1 MiB is generous and bounds what a
        // hostile server can make the library hold. API answers may be larger: 4 MiB.
        options.maxResponseBytes = 1 << 20
        apiOptions.maxResponseBytes = 4 << 20
        let version = NativeAuthVersion.string.description
        options.defaultHeaders = [
            ("Accept", "application/json"),
            ("return-client-request-id", "true"),
            ("x-client-SKU", NativeAuthVersion.sku),
            ("x-client-Ver", version),
            ("x-client-OS", "Linux"),
            ("User-Agent", "nativeauth/\(version)"),
        ]
        apiOptions.defaultHeaders = [("User-Agent", "nativeauth/\(version)")]
        apiOptions.addClientRequestID = false
        let logger = Logger(level: config.logLevel)
        var store: any TokenStore = MemoryTokenStore()
        if case .file(let path, let key) = config.cache {
            store = FileTokenStore(
                path: path,
                environment: config.authority.parsed.host,
                clientID: config.clientID,
                key: key,
                logger: logger
            )
        }
        return try NativeAuthClient(
            configuration: config,
            transport: CurlHTTPClient(options: options),
            apiTransport: CurlHTTPClient(options: apiOptions),
            store: store,
            environment: environment,
            logger: logger
        )
    }

    /// Validates a configuration document. Every error is `invalid_argument` (or `not_supported`) and names the
    /// field.
    static func configuration(
        _ f: Fields,
        environment: (String) -> String? = processEnvironment
    )
        throws(NativeAuthError) -> ClientConfiguration
    {
        func string(_ key: String) throws(NativeAuthError) -> String? {
            try fields { () throws(JSONFieldError) in try f.optionalString(key) }
        }
        var authorityType: AuthorityType? = nil
        if let t = try string("authority_type") {
            guard let parsed = AuthorityType(rawValue: t) else {
                throw .invalidArgument("authority_type: must be ciam, aad or oidc", field: "authority_type")
            }
            authorityType = parsed
        }
        let authority: Authority
        switch (try string("authority"), try string("tenant_subdomain")) {
        case (let a?, nil): authority = try Authority(a, type: authorityType)
        case (nil, let s?): authority = try Authority(tenantSubdomain: s)
        case (nil, nil): throw .invalidArgument("authority: required (or tenant_subdomain)", field: "authority")
        case (_?, _?):
            throw .invalidArgument(
                "authority: give either authority or tenant_subdomain, not both",
                field: "authority"
            )
        }

        let clientID = try fields { () throws(JSONFieldError) in try f.string("client_id") }
        guard ClientConfiguration.isValidClientID(clientID) else {
            throw .invalidArgument("client_id: must be 1-256 printable ASCII characters", field: "client_id")
        }

        var types: [ChallengeType] = []
        let typeNames = try fields { () throws(JSONFieldError) in try f.optionalStringArray("challenge_types") }
        for (i, name) in (typeNames ?? ["oob", "password"]).enumerated() where name != "redirect" {
            guard let t = ChallengeType(rawValue: name) else {
                throw .invalidArgument(
                    "challenge_types[\(i)]: must be \"password\" or \"oob\"",
                    field: "challenge_types[\(i)]"
                )
            }
            types.append(t)
        }

        var capabilities: [Capability] = []
        let capabilityNames = try fields { () throws(JSONFieldError) in try f.optionalStringArray("capabilities") }
        for (i, name) in (capabilityNames ?? []).enumerated() {
            guard let c = Capability(rawValue: name) else {
                throw .invalidArgument(
                    "capabilities[\(i)]: must be \"mfa_required\" or \"registration_required\"",
                    field: "capabilities[\(i)]"
                )
            }
            capabilities.append(c)
        }

        var redirectURI: String? = nil
        if let r = try string("redirect_uri") {
            guard r.utf8.count <= 2048, r.contains(":"), !r.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7f }) else {
                throw .invalidArgument("redirect_uri: must be an absolute URI without spaces", field: "redirect_uri")
            }
            redirectURI = r
        }
        var postLogoutRedirectURI: String? = nil
        if let r = try string("post_logout_redirect_uri") {
            guard r.utf8.count <= 2048, r.contains(":"), !r.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7f }) else {
                throw .invalidArgument(
                    "post_logout_redirect_uri: must be an absolute URI without spaces",
                    field: "post_logout_redirect_uri"
                )
            }
            postLogoutRedirectURI = r
        }
        let browserCommand = try string("browser_command")
        if let b = browserCommand {
            guard !b.isEmpty, b.utf8.count <= 4096, !b.unicodeScalars.contains(where: { $0.value < 0x20 }) else {
                throw .invalidArgument("browser_command: must be a command line", field: "browser_command")
            }
        }

        let connect = try fields { () throws(JSONFieldError) in try f.optionalInt("connect_timeout_ms", in: 1...600_000)
        }
        let request = try fields { () throws(JSONFieldError) in try f.optionalInt("request_timeout_ms", in: 1...600_000)
        }
        let retryAfterMax = try fields { () throws(JSONFieldError) in
            try f.optionalInt("retry_after_max_s", in: 0...300)
        }

        var cache = CacheSetting.memory
        if let c = try fields({ () throws(JSONFieldError) in try f.optionalObject("cache") }) {
            let type = try fields { () throws(JSONFieldError) in try c.optionalString("type") }
            switch type ?? (c.contains("path") ? "file" : "memory") {
            case "memory":
                break
            case "file":
                let path: String
                if let given = try fields({ () throws(JSONFieldError) in try c.optionalString("path") }) {
                    guard given.hasPrefix("/"), given.utf8.count <= 4096, !given.utf8.contains(0), !given.hasSuffix("/")
                    else {
                        throw .invalidArgument("cache.path: must be an absolute path to a file", field: "cache.path")
                    }
                    path = given
                } else {
                    guard let fallback = FileTokenStore.defaultPath(environment: environment) else {
                        throw .invalidArgument(
                            "cache.path: required (neither XDG_CACHE_HOME nor HOME is set)",
                            field: "cache.path"
                        )
                    }
                    path = fallback
                }
                var key: Secret? = nil
                if let text = try fields({ () throws(JSONFieldError) in try c.optionalString("encryption_key") }) {
                    guard var bytes = Base64.decode(text), bytes.count == 32 else {
                        throw .invalidArgument(
                            "cache.encryption_key: must be 32 bytes in base64",
                            field: "cache.encryption_key"
                        )
                    }
                    key = bytes.withUnsafeBytes { Secret(bytes: $0) }
                    bytes.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } }
                }
                cache = .file(path: path, key: key)
            default:
                throw .invalidArgument("cache.type: must be \"memory\" or \"file\"", field: "cache.type")
            }
        }

        var logLevel = LogLevel.off
        if let level = try string("log_level") {
            guard let l = LogLevel.allCases.first(where: { $0.name == level }) else {
                throw .invalidArgument("log_level: must be off, error, warning, info or verbose", field: "log_level")
            }
            logLevel = l
        }

        // CA bundle precedence: config "ca_bundle" > $SSL_CERT_FILE > $CURL_CA_BUNDLE > libcurl's default.
        var caBundle: String? = nil
        var caBundleSource = "default"
        if let ca = try string("ca_bundle") {
            guard isReadableFile(ca) else {
                throw .invalidArgument("ca_bundle: not a readable file", field: "ca_bundle")
            }
            (caBundle, caBundleSource) = (ca, "config")
        } else if let e = environment("SSL_CERT_FILE"), !e.isEmpty {
            (caBundle, caBundleSource) = (e, "SSL_CERT_FILE")
        } else if let e = environment("CURL_CA_BUNDLE"), !e.isEmpty {
            (caBundle, caBundleSource) = (e, "CURL_CA_BUNDLE")
        }

        return ClientConfiguration(
            authority: authority,
            clientID: clientID,
            challengeTypes: types,
            capabilities: capabilities,
            redirectURI: redirectURI,
            authorityType: authorityType,
            postLogoutRedirectURI: postLogoutRedirectURI,
            browserCommand: browserCommand,
            connectTimeoutMs: Int(connect ?? 10_000),
            requestTimeoutMs: Int(request ?? 30_000),
            retryAfterMaxSeconds: Double(retryAfterMax ?? 10),
            cache: cache,
            logLevel: logLevel,
            caBundle: caBundle,
            caBundleSource: caBundleSource
        )
    }

    /// `{"v":1,"version":…,"config":{…effective configuration…}}`
    static func info(_ c: ClientConfiguration, store: FileTokenStore? = nil) -> JSONValue {
        var o: [String: JSONValue] = [
            "authority": .string(c.authority.url),
            "authority_type": .string(c.authorityType.rawValue),
            "client_id": .string(c.clientID),
            "challenge_types": .array(c.challengeTypeNames.map { .string($0) }),
            "capabilities": .array(c.capabilities.map { .string($0.rawValue) }),
            "connect_timeout_ms": .int(Int64(c.connectTimeoutMs)),
            "request_timeout_ms": .int(Int64(c.requestTimeoutMs)),
            "retry_after_max_s": .int(Int64(c.retryAfterMaxSeconds)),
            "log_level": .string(c.logLevel.name),
            "ca_bundle_source": .string(c.caBundleSource),
            "cache": ["type": "memory"],
        ]
        if case .file(let path, let key) = c.cache {
            var cache: [String: JSONValue] = ["type": "file", "path": .string(path), "encrypted": .bool(key != nil)]
            if let problem = store?.problem { cache["problem"] = .string(problem.rawValue) }
            o["cache"] = .object(cache)
        }
        if let r = c.redirectURI { o["redirect_uri"] = .string(r) }
        if let r = c.postLogoutRedirectURI { o["post_logout_redirect_uri"] = .string(r) }
        if let b = c.browserCommand { o["browser_command"] = .string(b) }
        if let ca = c.caBundle { o["ca_bundle"] = .string(ca) }
        return ["v": 1, "version": .string(NativeAuthVersion.string.description), "config": .object(o)]
    }

    static let processEnvironment: @Sendable (String) -> String? = { name in
        guard let v = getenv(name) else { return nil }
        return String(cString: v)
    }

    private static func isReadableFile(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= 4096, !path.utf8.contains(0) else { return false }
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        return access(path, R_OK) == 0
    }
}
