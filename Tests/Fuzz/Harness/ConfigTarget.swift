// Target "config": the configuration document of na_client_new. A client it creates reports its effective
// configuration (na_client_info); given back to na_client_new, that configuration must create a client that reports
// the same one.
import Glibc
import NativeAuthJSON

@testable import NativeAuthCABI

/// na_client_new on `config` (a C string: a NUL inside ends it): the client, or nil with the error document checked.
func newClient(_ config: [UInt8]) -> OpaquePointer? {
    var client: OpaquePointer? = nil
    var error: UnsafeMutablePointer<CChar>? = nil
    let rc = (config + [0]).withUnsafeBufferPointer { p in
        p.withMemoryRebound(to: CChar.self) { na_client_new($0.baseAddress, &client, &error) }
    }
    if rc == NAStatus.ok.rawValue {
        guard let client, error == nil else { finding("na_client_new: NA_OK without a client, or with an error") }
        return client
    }
    guard client == nil, let error else { finding("na_client_new: \(rc) with a client, or without an error") }
    checkAnswer(rc, String(cString: error))
    na_string_free(error)
    return nil
}

func fuzzConfig(_ data: UnsafeRawBufferPointer) {
    guard let client = newClient(Array(data)) else { return }
    let info = call(na_client_info, client, Array("{}".utf8))
    na_client_free(client)
    guard info.rc == 0, var config = info["config"]?.objectValue else { finding("na_client_info failed", info.text) }
    // The CA bundle counts as given by the configuration only when it was; drop the others' (from the environment).
    if config["ca_bundle_source"] != "config" { config["ca_bundle"] = nil }
    config["ca_bundle_source"] = nil
    // The key the host gave is never reported ("key_store":"encryption_key" says there is one): give it back.
    if var cache = config["cache"]?.objectValue, cache["key_store"] == "encryption_key" {
        cache["key_store"] = nil
        cache["encryption_key"] = (try? JSONValue.parse(Array(data.prefix { $0 != 0 })))?["cache"]?["encryption_key"]
        config["cache"] = .object(cache)
    }
    guard let again = newClient(JSONValue.object(config).serializedBytes() ?? []) else {
        finding("the effective configuration was refused", info.text)
    }
    let second = call(na_client_info, again, Array("{}".utf8))
    na_client_free(again)
    guard second.text == info.text else {
        finding("the effective configuration changed when given back", info.text + "\n" + second.text)
    }
}
