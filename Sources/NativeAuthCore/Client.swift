public import NativeAuthJSON
internal import NativeAuthHTTP

/// The library version (also in `include/nativeauth.h` as NA_VERSION_*).
public enum NativeAuthVersion {
    public static let major = 0
    public static let minor = 1
    public static let patch = 0
    public static let string: StaticString = "0.1.0"
    /// The ABI version: the SONAME major (`libnativeauth.so.1`).
    public static let abi: Int32 = 1
    /// Sent as `x-client-SKU`: this library's own name — we never present ourselves as MSAL.
    public static let sku = "NativeAuth.Linux"
}

/// One configured client: configuration, transports (with their connection pools), flows, token cache and logger.
/// Thread-safe: every method may be called from many threads at once.
public final class NativeAuthClient: Sendable {
    public let configuration: ClientConfiguration
    public let logger: Logger
    let api: ServerAPI
    /// The transport for calls to the app's own APIs (no identity headers).
    let apiTransport: any Transport
    let clock: any Clock
    let flows = FlowRegistry()
    let cache: TokenCache
    let tokens: TokenManager

    /// Creates a client from a configuration document, with libcurl as transport.
    public convenience init(configuration json: JSONValue) throws(NativeAuthError) {
        let config = try ClientConfiguration(json: json)
        var options = HTTPClientOptions()
        options.connectTimeoutMs = config.connectTimeoutMs
        options.totalTimeoutMs = config.requestTimeoutMs
        options.caBundlePath = config.caBundle
        var apiOptions = options
        options.defaultHeaders = [
            ("Accept", "application/json"),
            ("return-client-request-id", "true"),
            ("x-client-SKU", NativeAuthVersion.sku),
            ("x-client-Ver", NativeAuthVersion.string.description),
            ("x-client-OS", "Linux"),
            ("User-Agent", "nativeauth/\(NativeAuthVersion.string.description)"),
        ]
        apiOptions.defaultHeaders = [("User-Agent", "nativeauth/\(NativeAuthVersion.string.description)")]
        apiOptions.addClientRequestID = false
        self.init(configuration: config, transport: CurlHTTPClient(options: options), apiTransport: CurlHTTPClient(options: apiOptions))
    }

    public init(configuration: ClientConfiguration, transport: any Transport, apiTransport: (any Transport)? = nil,
                clock: any Clock = SystemClock(), store: any TokenStore = MemoryTokenStore(), logger: Logger? = nil) {
        self.configuration = configuration
        let logger = logger ?? Logger(level: configuration.logLevel)
        self.logger = logger
        self.clock = clock
        self.apiTransport = apiTransport ?? transport
        self.api = ServerAPI(configuration: configuration, transport: transport, clock: clock, logger: logger)
        self.cache = TokenCache(store: store)
        self.tokens = TokenManager(api: api, cache: cache, clock: clock, logger: logger)
    }

    /// `{"v":1,"version":…,"config":{…effective configuration…}}`
    public func info() -> JSONValue {
        ["v": 1, "version": .string(NativeAuthVersion.string.description), "config": configuration.json]
    }
}
