internal import Glibc
import NativeAuthCache
import NativeAuthCore
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthKeyring
import NativeAuthNet

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
        options.trust = config.trust
        options.proxy = config.proxy
        options.proxyCABundlePath = config.proxyCABundle
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
            ("x-client-OS", HostIdentity.osVersion),
            ("x-client-CPU", HostIdentity.cpu),
            ("User-Agent", "nativeauth/\(version)"),
        ]
        if let name = config.appName { options.defaultHeaders.append(("x-app-name", name)) }
        if let v = config.appVersion { options.defaultHeaders.append(("x-app-ver", v)) }
        apiOptions.defaultHeaders = [("User-Agent", "nativeauth/\(version)")]
        apiOptions.addClientRequestID = false
        let logger = Logger(level: config.logLevel)
        options.beforeFirstRequest = { [config] in NetworkInfo.log(config, to: logger) }
        var store: any TokenStore = MemoryTokenStore()
        if case .file(let path, var key, let keyStore, let migrate) = config.cache {
            var keyStoreName: String? = nil
            if let keyStore {
                let found = try CacheKeyring(stores: keyStores(keyStore, environment: environment)).key(for: path)
                key = found.key
                keyStoreName = found.store
            }
            store = FileTokenStore(
                path: path,
                environment: config.authority.parsed.host,
                clientID: config.clientID,
                key: key,
                keyStore: keyStoreName,
                migratePlaintext: migrate,
                logger: logger
            )
        }
        return try NativeAuthClient(
            configuration: config,
            transport: CurlHTTPClient(options: options),
            apiTransport: CurlHTTPClient(options: apiOptions),
            store: store,
            logger: logger,
            listeners: LoopbackListeners(),
            systemBrowser: SystemBrowserLauncher(command: config.browserCommand, environment: environment)
        )
    }

    /// Decodes and validates a configuration document (`Decode.configuration`).
    static func configuration(
        _ f: Fields,
        environment: (String) -> String? = processEnvironment
    ) throws(NativeAuthError) -> ClientConfiguration {
        try Decode.configuration(
            f,
            environment: environment,
            defaultCachePath: { FileTokenStore.defaultPath(environment: environment) }
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
            "client_capabilities": .array(c.clientCapabilities.map { .string($0) }),
            "connect_timeout_ms": .int(Int64(c.connectTimeoutMs)),
            "request_timeout_ms": .int(Int64(c.requestTimeoutMs)),
            "retry_after_max_s": .int(Int64(c.retryAfterMaxSeconds)),
            "log_level": .string(c.logLevel.name),
            "async_workers": .int(Int64(c.asyncWorkers)),
            "cache": ["type": "memory"],
        ]
        if case .file(let path, let key, let keyStore, let migrate) = c.cache {
            var cache: [String: JSONValue] = [
                "type": "file", "path": .string(path), "encrypted": .bool(key != nil || keyStore != nil),
            ]
            if migrate { cache["migrate_plaintext_cache"] = true }
            if let keyStore {
                // Where the key is: the store that held it (auto: the one that answered).
                cache["key_store"] = .string(store?.keyStore ?? keyStore.choice.rawValue)
            } else if key != nil {
                cache["key_store"] = "encryption_key"
            }
            if let problem = store?.problem { cache["problem"] = .string(problem.rawValue) }
            o["cache"] = .object(cache)
        }
        if !c.requestHeaders.isEmpty {
            // Names and values: the app's own, not secrets (a vendor's device fingerprint at most).
            o["request_headers"] = .object(
                Dictionary(uniqueKeysWithValues: c.requestHeaders.map { ($0.name, .string($0.value)) })
            )
        }
        if let r = c.redirectURI { o["redirect_uri"] = .string(r) }
        if let r = c.postLogoutRedirectURI { o["post_logout_redirect_uri"] = .string(r) }
        if let b = c.browserCommand { o["browser_command"] = .string(b) }
        o.merge(NetworkInfo.members(c), uniquingKeysWith: { _, new in new })
        if let n = c.appName { o["app_name"] = .string(n) }
        if let v = c.appVersion { o["app_version"] = .string(v) }
        if c.dpop { o["dpop"] = true }
        return ["v": 1, "version": .string(NativeAuthVersion.string.description), "config": .object(o)]
    }

    static let processEnvironment: @Sendable (String) -> String? = { name in
        guard let v = getenv(name) else { return nil }
        return String(cString: v)
    }
}

/// The key stores a `key_store` setting asks, in order (NativeAuthKeyring).
private func keyStores(_ setting: KeyStoreSetting, environment: (String) -> String?) -> [any CacheKeyStore] {
    let secretService = SecretServiceKeyStore(
        busAddress: environment("DBUS_SESSION_BUS_ADDRESS").flatMap { $0.isEmpty ? nil : $0 },
        timeout: Double(setting.timeoutMs) / 1000
    )
    switch setting.choice {
    case .secretService: return [secretService]
    case .kernelKeyring: return [KernelKeyringStore()]
    case .auto: return [secretService, KernelKeyringStore()]
    }
}

// The composition root wires NativeAuthNet's I/O into the core's seams.
extension CurlHTTPClient: Transport {}
extension LoopbackListener: RedirectListener {}

/// The real loopback listeners (NativeAuthNet).
struct LoopbackListeners: RedirectListeners {
    func listen(host: LoopbackHost, port: UInt16) -> (any RedirectListener)? {
        try? LoopbackListener(host: host, port: port)
    }
}
