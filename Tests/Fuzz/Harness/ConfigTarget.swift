// Target "config": the configuration document of na_client_new. A client it creates reports its effective
// configuration (na_client_info); given back to na_client_new, that configuration must create a client that reports
// the same one.
import Glibc
import NativeAuthHTTP
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
    let given = try? JSONValue.parse(Array(data.prefix { $0 != 0 }))
    checkProxyMembers(given)
    var error: UnsafeMutablePointer<CChar>? = nil
    var client: OpaquePointer? = nil
    _ = (Array(data) + [0]).withUnsafeBufferPointer { p in
        p.withMemoryRebound(to: CChar.self) { na_client_new($0.baseAddress, &client, &error) }
    }
    if let error {
        checkNoProxyPassword(given, in: String(cString: error))
        na_string_free(error)
    }
    na_client_free(client)
    guard let client = newClient(Array(data)) else { return }
    let info = call(na_client_info, client, Array("{}".utf8))
    na_client_free(client)
    guard info.rc == 0, var config = info["config"]?.objectValue else { finding("na_client_info failed", info.text) }
    checkNoProxyPassword(given, in: info.text)
    // The CA bundle counts as given by the configuration only when it was; drop the others' (from the environment).
    if config["ca_bundle_source"] != "config" { config["ca_bundle"] = nil }
    config["ca_bundle_source"] = nil
    // So do the proxy and the no-proxy list; a proxy's credentials are never reported: give the address back.
    if config["proxy_source"] != "config" { config["proxy"] = nil }
    if config["proxy_credentials"] == true { config["proxy"] = given?["proxy"] }
    if config["no_proxy_source"] != "config" { config["no_proxy"] = nil }
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

/// A password in the configuration's `"proxy"` never appears in an answer (unless the rest of the input holds it too:
/// then it is the input's own text, not a leak).
func checkNoProxyPassword(_ given: JSONValue?, in answer: String) {
    guard let text = given?["proxy"]?.stringValue, let proxy = try? ProxyURL(text) else { return }
    for secret in [proxy.password, text] {
        guard let secret, secret.utf8.count >= 6, answer.contains(secret) else { continue }
        var rest = given?.objectValue ?? [:]
        rest["proxy"] = nil
        let others = JSONValue.object(rest).serialized()
        if !others.contains(secret) && !proxy.display.contains(secret) && !(proxy.username ?? "").contains(secret) {
            finding("the proxy's password is in an answer", answer)
        }
    }
}

/// The proxy parsers on the input's `"proxy"` and `"no_proxy"`: an address parses to one whose display holds no
/// credentials and parses again to itself; a no-proxy list is matched against a few hosts (never a trap).
func checkProxyMembers(_ given: JSONValue?) {
    if let text = given?["proxy"]?.stringValue, let p = try? ProxyURL(text) {
        guard let again = try? ProxyURL(p.display), again.display == p.display, !again.hasCredentials else {
            finding("a proxy address's display does not parse back to itself", p.display)
        }
        if let pw = p.password, pw.utf8.count >= 6, p.display.contains(pw), !p.host.contains(pw) {
            finding("a proxy address's display holds its password", p.display)
        }
    }
    if let list = given?["no_proxy"]?.stringValue {
        let n = NoProxyList(list)
        for host in ["example.com", "www.example.com", "10.1.2.3", "[fd00::1]", "localhost", list.lowercased()] {
            _ = n.matches(host: host)
        }
    }
}
