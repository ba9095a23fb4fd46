import NativeAuthCore
import NativeAuthJSON
import Synchronization
import Testing

private let noEnv: @Sendable (String) -> String? = { _ in nil }

private func config(_ doc: JSONValue, env: @escaping (String) -> String? = noEnv) throws(NativeAuthError) -> ClientConfiguration {
    try ClientConfiguration(json: doc, environment: env)
}

private func error(_ doc: JSONValue) -> NativeAuthError? {
    do {
        _ = try config(doc)
        return nil
    } catch { return error }
}

@Suite struct AuthorityTests {
    @Test(arguments: [
        ("https://contoso.ciamlogin.com", "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
        ("https://contoso.ciamlogin.com/", "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
        ("HTTPS://Contoso.CiamLogin.COM", "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
        ("https://contoso.ciamlogin.com/contoso.onmicrosoft.com/", "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
        ("https://contoso.ciamlogin.com/aaaabbbb-0000-cccc-1111-dddd2222eeee",
         "https://contoso.ciamlogin.com/aaaabbbb-0000-cccc-1111-dddd2222eeee"),
        ("http://127.0.0.1:8080/contoso.onmicrosoft.com", "http://127.0.0.1:8080/contoso.onmicrosoft.com"),
        ("http://localhost:1/t#frag", "http://localhost:1/t"),
    ])
    func normalises(input: String, expected: String) throws {
        #expect(try Authority(input).url == expected)
    }

    @Test(arguments: ["http://contoso.ciamlogin.com/contoso.onmicrosoft.com", "https://login.contoso.com",
                      "https://contoso.ciamlogin.com/t?dc=x", "contoso.ciamlogin.com/t", "ftp://contoso.ciamlogin.com/t",
                      "https://user@contoso.ciamlogin.com/t", ""])
    func refuses(input: String) {
        #expect(throws: NativeAuthError.self) { try Authority(input) }
    }

    @Test func tenantSubdomain() throws {
        #expect(try Authority(tenantSubdomain: "contoso").url == "https://contoso.ciamlogin.com/contoso.onmicrosoft.com")
        for bad in ["", "Contoso", "con toso", "-x", "a.b", String(repeating: "a", count: 64)] {
            #expect(throws: NativeAuthError.self) { try Authority(tenantSubdomain: bad) }
        }
    }

    @Test func endpoints() throws {
        let a = try Authority("https://contoso.ciamlogin.com")
        #expect(a.endpoint("/oauth2/v2.0/initiate") == "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/oauth2/v2.0/initiate")
    }
}

@Suite struct ConfigurationTests {
    @Test func defaults() throws {
        let c = try config(["tenant_subdomain": "contoso", "client_id": "abc"])
        #expect(c.challengeTypeParameter == "oob password redirect")
        #expect(c.capabilitiesParameter == nil)
        #expect(c.connectTimeoutMs == 10_000 && c.requestTimeoutMs == 30_000)
        #expect(c.cache == .memory && c.logLevel == .off && c.caBundle == nil && c.caBundleSource == "default")
    }

    @Test func challengeTypesAndCapabilitiesAreOrderedAndDeduplicated() throws {
        let c = try config(["tenant_subdomain": "contoso", "client_id": "abc",
                            "challenge_types": ["password", "redirect", "password"],
                            "capabilities": ["registration_required", "mfa_required"]])
        #expect(c.challengeTypeParameter == "password redirect")
        #expect(c.capabilitiesParameter == "mfa_required registration_required")
    }

    @Test func errorsNameTheField() {
        let base: [String: JSONValue] = ["tenant_subdomain": "contoso", "client_id": "abc"]
        func with(_ k: String, _ v: JSONValue) -> JSONValue {
            var o = base
            o[k] = v
            return .object(o)
        }
        let cases: [(JSONValue, String)] = [
            (with("client_id", 5), "client_id"),
            (with("client_id", ""), "client_id"),
            (with("client_id", "a b"), "client_id"),
            (with("challenge_types", ["oob", 3]), "challenge_types[1]"),
            (with("challenge_types", "oob"), "challenge_types"),
            (with("capabilities", ["magic"]), "capabilities[0]"),
            (with("request_timeout_ms", 600_001), "request_timeout_ms"),
            (with("connect_timeout_ms", 1.5), "connect_timeout_ms"),
            (with("log_level", "loud"), "log_level"),
            (with("cache", ["type": "disk"]), "cache.type"),
            (with("cache", ["path": "relative.json"]), "cache.path"),
            (with("redirect_uri", "not a uri"), "redirect_uri"),
            (with("v", 2), "v"),
            (["client_id": "abc"], "authority"),
            (with("authority", "https://contoso.ciamlogin.com"), "authority"),
        ]
        for (doc, field) in cases {
            let e = error(doc)
            #expect(e?.code == .invalidArgument, "\(field)")
            #expect(e?.extra["field"]?.stringValue == field, "\(field): \(e?.description ?? "no error")")
        }
        #expect(error(.array([]))?.code == .invalidArgument)
    }

    @Test func fileCacheIsRefusedHonestly() {
        let e = error(["tenant_subdomain": "contoso", "client_id": "abc", "cache": ["path": "/tmp/tokens.json"]])
        #expect(e?.code == .notSupported)
        #expect(e?.status == .invalidArgument)
    }

    @Test func caBundlePrecedence() throws {
        let env: (String) -> String? = { ["SSL_CERT_FILE": "/from/ssl", "CURL_CA_BUNDLE": "/from/curl"][$0] }
        let base: JSONValue = ["tenant_subdomain": "contoso", "client_id": "abc"]
        let fromEnv = try config(base, env: env)
        #expect(fromEnv.caBundle == "/from/ssl" && fromEnv.caBundleSource == "SSL_CERT_FILE")
        let curlOnly = try config(base, env: { $0 == "CURL_CA_BUNDLE" ? "/from/curl" : nil })
        #expect(curlOnly.caBundle == "/from/curl" && curlOnly.caBundleSource == "CURL_CA_BUNDLE")
        let explicit = try config(["tenant_subdomain": "contoso", "client_id": "abc", "ca_bundle": "/etc/hostname"], env: env)
        #expect(explicit.caBundle == "/etc/hostname" && explicit.caBundleSource == "config")
        #expect(error(["tenant_subdomain": "contoso", "client_id": "abc", "ca_bundle": "/etc"])?.code == .invalidArgument)
    }
}

@Suite struct ErrorTests {
    @Test func documentShape() throws {
        let e = NativeAuthError(.server, "The server failed.",
                                server: ServerErrorDetails(error: "server_error", errorCodes: [50000], correlationID: "c", traceID: "t"),
                                extra: ["flow": "f_1"])
        let doc = e.document
        #expect(doc["v"] == 1)
        #expect(doc["error"]?["code"] == "server")
        #expect(doc["error"]?["server"]?["error"] == "server_error")
        #expect(doc["error"]?["flow"] == "f_1")
        #expect(doc["error"]?["server"]?["error_codes"] == [50000])
        #expect(doc["error"]?["server"]?["trace_id"] == "t")
        #expect(e.status == .server)
    }

    @Test func statusMapping() {
        #expect(NativeAuthError(.invalidHandle, "").status == .invalidArgument)
        #expect(NativeAuthError(.timeout, "").status == .network)
        #expect(NativeAuthError(.tls, "").status == .network)
        #expect(NativeAuthError(.outOfMemory, "").status == .noMemory)
        #expect(NAStatus.allCases.map(\.rawValue) == Array((-9...0).reversed()))
    }
}

@Suite struct LoggerTests {
    @Test func filtersByLevelAndIsSilentByDefault() {
        let lines = Mutex<[String]>([])
        let logger = Logger()
        logger.log(.error, "dropped: no sink")
        logger.configure(level: .warning) { level, message, _ in lines.withLock { $0.append("\(level.name):\(message)") } }
        logger.log(.error, "e")
        logger.log(.warning, "w")
        logger.log(.info, "i")
        logger.log(.verbose, "v")
        #expect(lines.withLock { $0 } == ["error:e", "warning:w"])
    }
}
