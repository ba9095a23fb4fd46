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

/// One configured client: configuration, transport (with its connection pool) and logger.
/// Thread-safe; later issues add the token cache and flows.
public final class NativeAuthClient: Sendable {
    public let configuration: ClientConfiguration
    public let transport: any Transport
    public let logger: Logger

    /// Creates a client from a configuration document, with libcurl as transport.
    public convenience init(configuration json: JSONValue) throws(NativeAuthError) {
        let config = try ClientConfiguration(json: json)
        var options = HTTPClientOptions()
        options.connectTimeoutMs = config.connectTimeoutMs
        options.totalTimeoutMs = config.requestTimeoutMs
        options.caBundlePath = config.caBundle
        options.defaultHeaders = [
            ("Accept", "application/json"),
            ("return-client-request-id", "true"),
            ("x-client-SKU", NativeAuthVersion.sku),
            ("x-client-Ver", NativeAuthVersion.string.description),
            ("x-client-OS", "Linux"),
            ("User-Agent", "nativeauth/\(NativeAuthVersion.string.description)"),
        ]
        self.init(configuration: config, transport: CurlHTTPClient(options: options))
    }

    public init(configuration: ClientConfiguration, transport: any Transport, logger: Logger? = nil) {
        self.configuration = configuration
        self.transport = transport
        self.logger = logger ?? Logger(level: configuration.logLevel)
    }

    /// `{"v":1,"version":…,"config":{…effective configuration…}}`
    public func info() -> JSONValue {
        ["v": 1, "version": .string(NativeAuthVersion.string.description), "config": configuration.json]
    }
}
