import CNativeAuthShims
import NativeAuthCABI
import NativeAuthJSON
import Testing

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
        let oom = try #require(nashim_oom_document())
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
