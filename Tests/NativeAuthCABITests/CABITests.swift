import NativeAuthJSON
import Testing

@testable import NativeAuthCABI

/// Calls an operation the way C does and returns (status, parsed document).
private func call(_ body: (OutString) -> Int32) -> (Int32, JSONValue?) {
    var out: UnsafeMutablePointer<CChar>? = nil
    let rc = withUnsafeMutablePointer(to: &out) { body($0) }
    defer { na_string_free(out) }
    guard let out else { return (rc, nil) }
    return (rc, try? JSONValue.parse(String(cString: out)))
}

private func newClient(_ config: String) -> (Int32, OpaquePointer?, JSONValue?) {
    var handle: OpaquePointer? = nil
    let (rc, doc) = call { out in na_client_new(config, &handle, out) }
    return (rc, handle, doc)
}

@Suite struct CABITests {
    @Test func versionAndStatusStrings() {
        #expect(String(cString: na_version()) == "0.1.0")
        #expect(na_abi_version() == 1)
        #expect(String(cString: na_status_str(-5)) == "network error")
        #expect(String(cString: na_status_str(Int32.min)) == "unknown status")
    }

    @Test func clientLifecycle() throws {
        let (rc, handle, err) = newClient(#"{"v":1,"tenant_subdomain":"contoso","client_id":"abc","log_level":"info"}"#)
        #expect(rc == 0 && handle != nil && err == nil)
        let (rc2, info) = call { na_client_info(handle, #"{"v":1}"#, $0) }
        #expect(rc2 == 0)
        #expect(info?["v"] == 1)
        #expect(info?["config"]?["log_level"] == "info")
        na_client_free(handle)
        let (rc3, gone) = call { na_client_info(handle, "{}", $0) }
        #expect(rc3 == -1 && gone?["error"]?["code"] == "invalid_handle")
    }

    @Test func errorDocumentsCarryCodeMessageAndField() {
        let (rc, handle, err) = newClient(#"{"tenant_subdomain":"contoso","client_id":["x"]}"#)
        #expect(rc == -1 && handle == nil)
        #expect(err?["v"] == 1)
        #expect(err?["error"]?["code"] == "invalid_argument")
        #expect(err?["error"]?["field"] == "client_id")
        #expect(err?["error"]?["message"]?.stringValue?.contains("client_id") == true)
    }

    @Test func outOfMemoryDocumentIsStaticAndIgnoredByFree() throws {
        let oom = outOfMemoryPointer
        na_string_free(oom)  // must not free or wipe static storage
        #expect(String(cString: oom).contains("out_of_memory"))
    }

    /// Arbitrary bytes as a configuration: always an answer, never a trap.
    @Test func randomInputNeverTraps() {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array(#"{}[]":,0123456789abcdeftrunl\ "#.utf8) + [0xff, 0xc3, 0x80, 0x7f]
        for _ in 0..<2000 {
            let n = Int.random(in: 0..<64, using: &rng)
            var bytes = (0..<n).map { _ in alphabet.randomElement(using: &rng) ?? 0x20 }
            bytes.append(0)
            var handle: OpaquePointer? = nil
            var out: UnsafeMutablePointer<CChar>? = nil
            let rc = bytes.withUnsafeBufferPointer { b in
                b.withMemoryRebound(to: CChar.self) { na_client_new($0.baseAddress, &handle, &out) }
            }
            #expect(rc == 0 || out != nil)
            na_string_free(out)
            na_client_free(handle)
        }
    }
}

/// Every operation, fed hostile documents: always a status and an error document, never a trap, and nothing reaches
/// the network for a malformed request (the authority is a closed port, so a request that did would fail as network).
@Suite struct HostileOperationTests {
    typealias Op = (OpaquePointer?, UnsafePointer<CChar>?, OutString?) -> Int32
    var ops: [(String, Op)] {
        [
            ("na_sign_in", na_sign_in), ("na_sign_up", na_sign_up), ("na_reset_password", na_reset_password),
            ("na_flow_submit", na_flow_submit), ("na_get_access_token", na_get_access_token),
            ("na_call_api", na_call_api),
            ("na_get_account", na_get_account), ("na_sign_out", na_sign_out), ("na_client_info", na_client_info),
        ]
    }

    @Test func hostileDocuments() {
        var handle: OpaquePointer? = nil
        _ = na_client_new(
            #"{"authority":"http://127.0.0.1:1/t","client_id":"c","connect_timeout_ms":200}"#,
            &handle,
            nil
        )
        defer { na_client_free(handle) }
        let huge = "\"" + String(repeating: "x", count: 2_000_000) + "\""
        let docs: [String] = [
            "", "{", "[]", "null", "42", huge, #"{"v":7}"#, #"{"username":""}"#, #"{"username":5,"password":[1]}"#,
            #"{"username":"a@b.c","password":""}"#, #"{"username":"a\u0000b@c.d"}"#, #"{"scopes":"x"}"#,
            #"{"scopes":[1]}"#,
            #"{"scopes":[""]}"#, #"{"scopes":["a b"]}"#, #"{"flow":5}"#, #"{"flow":"f_x"}"#,
            #"{"flow":"f_x","action":"fly"}"#,
            #"{"flow":"f_x","code":""}"#, #"{"flow":"f_x","attributes":[1]}"#, #"{"url":"ftp://x","scopes":["s"]}"#,
            #"{"url":"http://evil.example/x","scopes":["s"]}"#,
            #"{"url":"https://x/y","scopes":["s"],"headers":{"Authorization":"x"}}"#,
            #"{"url":"https://x/y","scopes":["s"],"method":"G ET"}"#, #"{"attributes":{"a":{"b":1}}}"#,
            #"{"claims":5}"#,
            #"{"include_id_token":"yes"}"#, #"{"force_refresh":"no","scopes":["s"]}"#,
            String(repeating: "[", count: 5000), #"{"username":"\ud800"}"#,
        ]
        for (name, op) in ops {
            for doc in docs {
                var out: UnsafeMutablePointer<CChar>? = nil
                let rc = op(handle, doc, &out)
                #expect(out != nil, "\(name): no document")
                // (a valid reset request — the password member is not part of it — legitimately reaches the network)
                let validForOp = name == "na_reset_password" && doc.contains("a@b.c")
                if rc != 0, !validForOp, let out {
                    let parsed = try? JSONValue.parse(String(cString: out))
                    #expect(parsed?["error"]?["code"]?.stringValue != nil, "\(name)")
                    #expect(
                        parsed?["error"]?["code"] != "network" && parsed?["error"]?["code"] != "internal",
                        Comment(
                            rawValue: "\(name) reached the network or failed inside for \(doc.prefix(60)): "
                                + "\(parsed?.serialized() ?? "")"
                        )
                    )
                }
                na_string_free(out)
            }
            var out: UnsafeMutablePointer<CChar>? = nil
            #expect(
                op(handle, nil, &out) == -1 || name == "na_get_account" || name == "na_sign_out"
                    || name == "na_client_info"
            )
            na_string_free(out)
            #expect(op(handle, "{}", nil) == -1)
            #expect(op(nil, "{}", &out) == -1)
            na_string_free(out)
        }
    }
}
