import NativeAuthCore
import NativeAuthHTTP
import NativeAuthJSON
import Testing

@testable import NativeAuthCABI

/// `proxy`, `no_proxy`, `proxy_ca_bundle`, `ca_bundle_system` and the CA variables, as na_client_new decodes them and
/// na_client_info reports them.
@Suite struct NetworkConfigurationTests {
    private func config(_ doc: [String: JSONValue], env: [String: String] = [:]) throws -> ClientConfiguration {
        var d = doc
        d["tenant_subdomain"] = "contoso"
        d["client_id"] = "abc"
        let text = Array(JSONValue.object(d).serialized().utf8CString)
        let result = text.withUnsafeBufferPointer { p in
            Result { () throws(NativeAuthError) in
                try ClientFactory.configuration(
                    decodeDocument(p.baseAddress, name: "config_json", nullIsEmpty: false),
                    environment: { env[$0] }
                )
            }
        }
        return try result.get()
    }

    private func info(_ c: ClientConfiguration) -> [String: JSONValue] {
        ClientFactory.info(c)["config"]?.objectValue ?? [:]
    }

    @Test func configuredProxyWinsAndItsPasswordIsNeverReported() throws {
        let c = try config(
            ["proxy": "http://alice:Hunter2-Secret@proxy.corp:3128"],
            env: ["https_proxy": "http://env:1", "NO_PROXY": "corp.example"]
        )
        let i = info(c)
        #expect(i["proxy"] == "http://proxy.corp:3128" && i["proxy_source"] == "config")
        #expect(i["proxy_credentials"] == true && i["no_proxy"] == "corp.example" && i["no_proxy_source"] == "NO_PROXY")
        let text = ClientFactory.info(c).serialized()
        #expect(!text.contains("Hunter2") && !text.contains("alice"))
    }

    @Test func emptyProxyMeansNone() throws {
        let c = try config(["proxy": ""], env: ["https_proxy": "http://env:1"])
        #expect(c.proxy.proxy == nil)
        #expect(info(c)["proxy"] == "" && info(c)["proxy_source"] == "config")
        let env = try config([:], env: ["ALL_PROXY": "http://all:8080"])
        #expect(info(env)["proxy"] == "http://all:8080" && info(env)["proxy_source"] == "ALL_PROXY")
        let none = try config([:])
        #expect(info(none)["proxy"] == nil && info(none)["proxy_source"] == "none")
    }

    @Test func refusalsNeverRepeatTheAddress() throws {
        // Credentials with a control character too (RFC 7617 §2: a user-id and password hold none; libcurl would put
        // them in Proxy-Authorization as they are, quoted for Digest).
        let controls = [
            "http://alice:Hunter2%1B-Secret@proxy:3128", "http://al%7Fice:Hunter2-Secret@proxy:3128",
            "http://alice:Hunter2%09-Secret@proxy:3128", "http://alice%0B:Hunter2-Secret@proxy:3128",
        ]
        for bad in ["http://alice:Hunter2-Secret@proxy:0", "gopher://alice:Hunter2-Secret@proxy:1"] + controls {
            do {
                _ = try config(["proxy": .string(bad)])
                Issue.record("accepted \(bad)")
            } catch let e as NativeAuthError {
                #expect(e.code == .invalidArgument && e.field == "proxy" && !e.message.contains("Hunter2"))
            }
        }
        #expect(throws: NativeAuthError.self) { try config(["no_proxy": "a\u{1}b"]) }
        #expect(throws: NativeAuthError.self) { try config(["proxy_ca_bundle": "/etc"]) }
        #expect(throws: NativeAuthError.self) { try config(["ca_bundle_system": true]) }
        #expect(try config(["ca_bundle_system": false]).trust == .system)  // the default, said aloud
        // An environment value that is not an address does not stop the client (a cached token needs no network):
        // na_client_info says why, without the value.
        let c = try config([:], env: ["https_proxy": "http://bob:Hunter2-Secret@proxy:70000"])
        #expect(info(c)["proxy_error"]?.stringValue?.contains("https_proxy") == true)
        #expect(!ClientFactory.info(c).serialized().contains("Hunter2"))
    }

    @Test func trustStores() throws {
        let ca = "/etc/hostname"
        // Nothing: the system's store.
        #expect(try config([:]).trust == .system)
        // ca_bundle alone: only it, whatever the environment says.
        let only = try config(["ca_bundle": .string(ca)], env: ["SSL_CERT_FILE": "/e.pem", "SSL_CERT_DIR": "/d"])
        #expect(only.trust == .only(ca) && info(only)["ca_bundle_system"] == false)
        // ca_bundle with ca_bundle_system: it, and the store in force without it.
        let both = try config(["ca_bundle": .string(ca), "ca_bundle_system": true], env: ["SSL_CERT_DIR": "/d"])
        #expect(both.trust == TrustStore(files: [.path(ca), .systemDefault], directory: .path("/d")))
        #expect(info(both)["ca_bundle_system"] == true && info(both)["ca_directory"] == "/d")
        let onEnv = try config(["ca_bundle": .string(ca), "ca_bundle_system": true], env: ["SSL_CERT_FILE": "/e.pem"])
        #expect(onEnv.trust == TrustStore(files: [.path(ca), .path("/e.pem")], directory: .none))
        // The environment: a file replaces the store (as before); a directory replaces the system's directory.
        let file = try config([:], env: ["SSL_CERT_FILE": "/e.pem"])
        #expect(file.trust == .only("/e.pem"))
        let dir = try config([:], env: ["SSL_CERT_DIR": "/d"])
        #expect(dir.trust == TrustStore(files: [.systemDefault], directory: .path("/d")))
        #expect(info(dir)["ca_directory"] == "/d" && info(dir)["ca_bundle_source"] != "SSL_CERT_FILE")
    }
}
