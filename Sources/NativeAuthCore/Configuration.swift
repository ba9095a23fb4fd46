internal import Glibc
public import NativeAuthJSON

/// What the client may answer with (spec §1.7). `redirect` is always sent in addition.
public enum ChallengeType: String, Sendable, CaseIterable {
    case oob, password
}

/// Capabilities advertised to the server (spec §1.7).
public enum Capability: String, Sendable, CaseIterable {
    case mfaRequired = "mfa_required"
    case registrationRequired = "registration_required"
}

/// Log levels, from least to most verbose. `off` is the default.
public enum LogLevel: Int32, Sendable, Comparable, CaseIterable {
    case off = 0, error = 1, warning = 2, info = 3, verbose = 4

    public var name: String {
        switch self {
        case .off: return "off"
        case .error: return "error"
        case .warning: return "warning"
        case .info: return "info"
        case .verbose: return "verbose"
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// Where tokens are kept.
public enum CacheSetting: Sendable, Equatable {
    case memory
    case file(path: String)
}

/// A validated client configuration (the JSON given to `na_client_new`).
public struct ClientConfiguration: Sendable {
    public var authority: Authority
    public var clientID: String
    /// In the order the SDKs send them: `oob`, `password` (then `redirect`, always).
    public var challengeTypes: [ChallengeType]
    public var capabilities: [Capability]
    public var redirectURI: String?
    public var connectTimeoutMs: Int
    public var requestTimeoutMs: Int
    public var cache: CacheSetting
    public var logLevel: LogLevel
    /// The CA bundle in force and where it came from ("config", "SSL_CERT_FILE", "CURL_CA_BUNDLE" or "default").
    public var caBundle: String?
    public var caBundleSource: String

    /// The `challenge_type` form value: e.g. "oob password redirect".
    public var challengeTypeParameter: String {
        (challengeTypes.map(\.rawValue) + ["redirect"]).joined(separator: " ")
    }

    /// The `capabilities` form value, or nil when none are configured.
    public var capabilitiesParameter: String? {
        capabilities.isEmpty ? nil : capabilities.map(\.rawValue).joined(separator: " ")
    }

    /// Validates a configuration document. Every error is `invalid_argument` (or `not_supported`) and names the
    /// field. `environment` looks up environment variables (injected for tests).
    public init(json: JSONValue, environment: (String) -> String? = ClientConfiguration.processEnvironment) throws(NativeAuthError) {
        do {
            let f = try JSONFields(json)
            try checkVersion(f)
            let authorityText = try f.optionalString("authority")
            let subdomain = try f.optionalString("tenant_subdomain")
            switch (authorityText, subdomain) {
            case (let a?, nil): authority = try Authority(a)
            case (nil, let s?): authority = try Authority(tenantSubdomain: s)
            case (nil, nil):
                throw NativeAuthError(.invalidArgument, "authority: required (or tenant_subdomain)", extra: ["field": "authority"])
            case (_?, _?):
                throw NativeAuthError(.invalidArgument, "authority: give either authority or tenant_subdomain, not both",
                                      extra: ["field": "authority"])
            }

            let clientID = try f.string("client_id")
            guard !clientID.isEmpty, clientID.utf8.count <= 256,
                  clientID.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f })
            else {
                throw NativeAuthError(.invalidArgument, "client_id: must be 1-256 printable ASCII characters",
                                      extra: ["field": "client_id"])
            }
            self.clientID = clientID

            var types = Set<ChallengeType>()
            for (i, name) in (try f.optionalStringArray("challenge_types") ?? ["oob", "password"]).enumerated() {
                if name == "redirect" { continue }
                guard let t = ChallengeType(rawValue: name) else {
                    throw NativeAuthError(.invalidArgument, "challenge_types[\(i)]: must be \"password\" or \"oob\"",
                                          extra: ["field": .string("challenge_types[\(i)]")])
                }
                types.insert(t)
            }
            challengeTypes = ChallengeType.allCases.filter(types.contains)

            var caps = Set<Capability>()
            for (i, name) in (try f.optionalStringArray("capabilities") ?? []).enumerated() {
                guard let c = Capability(rawValue: name) else {
                    throw NativeAuthError(.invalidArgument,
                                          "capabilities[\(i)]: must be \"mfa_required\" or \"registration_required\"",
                                          extra: ["field": .string("capabilities[\(i)]")])
                }
                caps.insert(c)
            }
            capabilities = Capability.allCases.filter(caps.contains)

            if let r = try f.optionalString("redirect_uri") {
                guard r.utf8.count <= 2048, r.contains(":"), !r.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7f }) else {
                    throw NativeAuthError(.invalidArgument, "redirect_uri: must be an absolute URI without spaces",
                                          extra: ["field": "redirect_uri"])
                }
                redirectURI = r
            } else {
                redirectURI = nil
            }

            connectTimeoutMs = Int(try f.optionalInt("connect_timeout_ms", in: 1...600_000) ?? 10_000)
            requestTimeoutMs = Int(try f.optionalInt("request_timeout_ms", in: 1...600_000) ?? 30_000)

            cache = .memory
            if let c = try f.optionalObject("cache") {
                let type = try c.optionalString("type") ?? (c.contains("path") ? "file" : "memory")
                switch type {
                case "memory":
                    cache = .memory
                case "file":
                    let path = try c.string("path")
                    guard path.hasPrefix("/"), path.utf8.count <= 4096 else {
                        throw NativeAuthError(.invalidArgument, "cache.path: must be an absolute path",
                                              extra: ["field": "cache.path"])
                    }
                    // The persistent, cross-process store is its own piece of work; refusing is better than
                    // silently keeping tokens in memory when the app asked for a file.
                    throw NativeAuthError(.notSupported, "cache.path: the persistent token cache is not available in this version; use {\"type\":\"memory\"}",
                                          extra: ["field": "cache.path"])
                default:
                    throw NativeAuthError(.invalidArgument, "cache.type: must be \"memory\" or \"file\"",
                                          extra: ["field": "cache.type"])
                }
            }

            if let level = try f.optionalString("log_level") {
                guard let l = LogLevel.allCases.first(where: { $0.name == level }) else {
                    throw NativeAuthError(.invalidArgument, "log_level: must be off, error, warning, info or verbose",
                                          extra: ["field": "log_level"])
                }
                logLevel = l
            } else {
                logLevel = .off
            }

            // CA bundle precedence: config "ca_bundle" > $SSL_CERT_FILE > $CURL_CA_BUNDLE > libcurl's default.
            if let ca = try f.optionalString("ca_bundle") {
                guard Self.isReadableFile(ca) else {
                    throw NativeAuthError(.invalidArgument, "ca_bundle: not a readable file", extra: ["field": "ca_bundle"])
                }
                caBundle = ca
                caBundleSource = "config"
            } else if let e = environment("SSL_CERT_FILE"), !e.isEmpty {
                caBundle = e
                caBundleSource = "SSL_CERT_FILE"
            } else if let e = environment("CURL_CA_BUNDLE"), !e.isEmpty {
                caBundle = e
                caBundleSource = "CURL_CA_BUNDLE"
            } else {
                caBundle = nil
                caBundleSource = "default"
            }
        } catch let e as NativeAuthError {
            throw e
        } catch let e as JSONFieldError {
            throw NativeAuthError(e)
        } catch {
            throw NativeAuthError(.internal, "unexpected configuration error")
        }
    }

    /// The effective configuration, as `na_client_info` reports it.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "authority": .string(authority.url),
            "client_id": .string(clientID),
            "challenge_types": .array((challengeTypes.map(\.rawValue) + ["redirect"]).map { .string($0) }),
            "capabilities": .array(capabilities.map { .string($0.rawValue) }),
            "connect_timeout_ms": .int(Int64(connectTimeoutMs)),
            "request_timeout_ms": .int(Int64(requestTimeoutMs)),
            "log_level": .string(logLevel.name),
            "ca_bundle_source": .string(caBundleSource),
        ]
        switch cache {
        case .memory: o["cache"] = ["type": "memory"]
        case .file(let p): o["cache"] = ["type": "file", "path": .string(p)]
        }
        if let redirectURI { o["redirect_uri"] = .string(redirectURI) }
        if let caBundle { o["ca_bundle"] = .string(caBundle) }
        return .object(o)
    }

    public static let processEnvironment: @Sendable (String) -> String? = { name in
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

/// Documents carry `"v": 1`; a missing `v` is read as 1, any other value is refused.
func checkVersion(_ f: JSONFields) throws(NativeAuthError) {
    guard let v = f.value("v") else { return }
    guard v.intValue == 1 else {
        throw NativeAuthError(.invalidArgument, "v: unsupported document version (this library speaks 1)", extra: ["field": "v"])
    }
}
