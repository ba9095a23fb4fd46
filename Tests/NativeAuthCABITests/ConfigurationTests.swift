import NativeAuthCore
import NativeAuthCrypto
import NativeAuthJSON
import Testing

@testable import NativeAuthCABI

private let noEnv: @Sendable (String) -> String? = { _ in nil }

/// The configuration document as na_client_new decodes it.
private func config(
    _ doc: JSONValue,
    env: @escaping (String) -> String? = noEnv
) throws(NativeAuthError) -> ClientConfiguration {
    let text = Array(doc.serialized().utf8CString)
    let result = text.withUnsafeBufferPointer { p in
        Result { () throws(NativeAuthError) in
            try ClientFactory.configuration(
                decodeDocument(p.baseAddress, name: "config_json", nullIsEmpty: false),
                environment: env
            )
        }
    }
    return try result.get()
}

private func error(_ doc: JSONValue) -> NativeAuthError? {
    do {
        _ = try config(doc)
        return nil
    } catch { return error }
}

@Suite struct ConfigurationTests {
    @Test func defaults() throws {
        let c = try config(["tenant_subdomain": "contoso", "client_id": "abc"])
        #expect(c.challengeTypeNames == ["oob", "password", "redirect"])
        #expect(c.capabilities.isEmpty)
        #expect(c.connectTimeoutMs == 10_000 && c.requestTimeoutMs == 30_000)
        #expect(c.cache == .memory && c.logLevel == .off && c.caBundle == nil && c.caBundleSource == "default")
    }

    @Test func challengeTypesAndCapabilitiesAreOrderedAndDeduplicated() throws {
        let c = try config([
            "tenant_subdomain": "contoso", "client_id": "abc",
            "challenge_types": ["password", "redirect", "password"],
            "capabilities": ["registration_required", "mfa_required"],
        ])
        #expect(c.challengeTypeNames == ["password", "redirect"])
        #expect(c.capabilities == [.mfaRequired, .registrationRequired])
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
            #expect(e?.field == field, "\(field): \(e?.description ?? "no error")")
        }
        #expect(error(.array([]))?.code == .invalidArgument)
    }

    @Test func fileCacheConfiguration() throws {
        let base: [String: JSONValue] = ["tenant_subdomain": "contoso", "client_id": "abc"]
        func with(_ cache: JSONValue, env: @escaping (String) -> String? = { _ in nil }) throws -> CacheSetting {
            var doc = base
            doc["cache"] = cache
            return try config(.object(doc), env: env).cache
        }
        #expect(try with(["path": "/tmp/tokens.json"]) == .file(path: "/tmp/tokens.json", key: nil))
        #expect(try with(["type": "memory"]) == .memory)
        // Without a path: $XDG_CACHE_HOME/nativeauth/token_cache.json, else ~/.cache/….
        let xdg = try with(["type": "file"], env: { ["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/ann"][$0] })
        #expect(xdg == .file(path: "/x/cache/nativeauth/token_cache.json", key: nil))
        let home = try with(["type": "file"], env: { ["HOME": "/home/ann"][$0] })
        #expect(home == .file(path: "/home/ann/.cache/nativeauth/token_cache.json", key: nil))
        let key = Base64.encode([UInt8](repeating: 1, count: 32))
        guard
            case .file(_, let k?, nil, false) = try with([
                "type": "file", "path": "/tmp/t.json", "encryption_key": .string(key),
            ])
        else {
            Issue.record("the key was not kept")
            return
        }
        #expect(k.count == 32)
        // A key store: where the key lives, and how long a D-Bus wait may take.
        #expect(
            try with(["path": "/tmp/t.json", "key_store": "auto"])
                == .file(path: "/tmp/t.json", key: nil, keyStore: KeyStoreSetting(choice: .auto, timeoutMs: 2000))
        )
        #expect(
            try with(["path": "/tmp/t.json", "key_store": "secret_service", "key_store_timeout_ms": 500])
                == .file(
                    path: "/tmp/t.json",
                    key: nil,
                    keyStore: KeyStoreSetting(choice: .secretService, timeoutMs: 500)
                )
        )
        // Encrypting a plaintext file found in the encrypted cache's place, asked for explicitly.
        #expect(
            try with(["path": "/tmp/t.json", "key_store": "auto", "migrate_plaintext_cache": true])
                == .file(
                    path: "/tmp/t.json",
                    key: nil,
                    keyStore: KeyStoreSetting(choice: .auto, timeoutMs: 2000),
                    migratePlaintext: true
                )
        )
        for bad: JSONValue in [
            ["path": "/tmp/t.json", "migrate_plaintext_cache": true],
            ["path": "/tmp/t.json", "key_store": "auto", "migrate_plaintext_cache": "yes"],
            ["type": "file", "path": "relative.json"], ["type": "file", "path": "/tmp/dir/"], ["type": "disk"],
            ["type": "file", "path": "/tmp/t.json", "encryption_key": "c2hvcnQ="],
            ["path": "/tmp/t.json", "key_store": "keychain"],
            ["path": "/tmp/t.json", "key_store": "auto", "encryption_key": .string(key)],
            ["path": "/tmp/t.json", "key_store_timeout_ms": 100],
            ["path": "/tmp/t.json", "key_store": "auto", "key_store_timeout_ms": 0],
        ] {
            var doc = base
            doc["cache"] = bad
            let e = error(.object(doc))
            #expect(e?.code == .invalidArgument)
            #expect(e?.field?.hasPrefix("cache.") == true)
        }
    }

    @Test func caBundlePrecedence() throws {
        let env: (String) -> String? = { ["SSL_CERT_FILE": "/from/ssl", "CURL_CA_BUNDLE": "/from/curl"][$0] }
        let base: JSONValue = ["tenant_subdomain": "contoso", "client_id": "abc"]
        let fromEnv = try config(base, env: env)
        #expect(fromEnv.caBundle == "/from/ssl" && fromEnv.caBundleSource == "SSL_CERT_FILE")
        let curlOnly = try config(base, env: { $0 == "CURL_CA_BUNDLE" ? "/from/curl" : nil })
        #expect(curlOnly.caBundle == "/from/curl" && curlOnly.caBundleSource == "CURL_CA_BUNDLE")
        let explicit = try config(
            ["tenant_subdomain": "contoso", "client_id": "abc", "ca_bundle": "/etc/hostname"],
            env: env
        )
        #expect(explicit.caBundle == "/etc/hostname" && explicit.caBundleSource == "config")
        #expect(
            error(["tenant_subdomain": "contoso", "client_id": "abc", "ca_bundle": "/etc"])?.code == .invalidArgument
        )
    }
}

@Suite struct ErrorTests {
    @Test func documentShape() throws {
        var e = NativeAuthError(
            .server,
            "The server failed.",
            server: ServerErrorDetails(error: "server_error", errorCodes: [50000], correlationID: "c", traceID: "t")
        )
        e.flow = FlowID("f_1")
        let doc = Encode.error(e)
        #expect(doc["v"] == 1)
        #expect(doc["error"]?["code"] == "server")
        #expect(doc["error"]?["server"]?["error"] == "server_error")
        #expect(doc["error"]?["flow"] == "f_1")
        #expect(doc["error"]?["server"]?["error_codes"] == [50000])
        #expect(doc["error"]?["server"]?["trace_id"] == "t")
        #expect(NAStatus(e) == .server)
    }

    @Test func statusMapping() {
        #expect(NAStatus(NativeAuthError(.invalidHandle, "")) == .invalidArgument)
        #expect(NAStatus(NativeAuthError(.timeout, "")) == .network)
        #expect(NAStatus(NativeAuthError(.tls, "")) == .network)
        #expect(NAStatus(NativeAuthError(.outOfMemory, "")) == .noMemory)
        #expect(NAStatus.allCases.map(\.rawValue) == Array((-10...0).reversed()))
    }
}
