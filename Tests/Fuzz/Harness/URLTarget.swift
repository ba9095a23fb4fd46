// Target "url": HTTPURL, the parser of every URL the library reads — the app's (authority, API URLs, redirect URIs,
// na_dpop_proof's url) and the server's (discovery endpoints, jwks_uri, Location headers). Not through the C ABI:
// those reach it only inside whole calls (the requests, config, server and api targets); here it gets any text.
//  - it never traps; text with a byte that is not printable ASCII is refused as badCharacter, whatever else it is;
//  - a URL it accepts has a lowercase http(s) scheme, a lowercase non-empty host, a port in 1…65535, a path that is
//    empty or starts with "/" and holds no "?" or "#", a query without "#";
//  - written back (`description`) it parses to the same URL, a fixed point, and so does its origin (with no path);
//  - the DPoP target made of it (DPoPTarget: the proof's htu, the origin nonces are kept by) agrees with the parse.
import NativeAuthHTTP

@testable import NativeAuthCore

func fuzzURL(_ data: UnsafeRawBufferPointer) {
    let text = String(decoding: data, as: UTF8.self)
    let url: HTTPURL
    do { url = try HTTPURL(text) } catch {
        if text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }), error != .badCharacter {
            finding("text with a byte that is not printable ASCII was not refused as badCharacter", "\(error)")
        }
        if case .unsupportedScheme(let s) = error, s == "http" || s == "https" || s != s.lowercased() {
            finding("an http(s) scheme refused, or a refused scheme not lowercased", s)
        }
        return
    }
    if text.utf8.contains(where: { $0 <= 0x20 || $0 >= 0x7F }) { finding("a URL with a bad byte was accepted", text) }
    checkParts(url)
    guard (try? HTTPURL(url.description)) == url else { finding("a URL written back parses differently", text) }
    guard let origin = try? HTTPURL(url.origin),
        origin.scheme == url.scheme, origin.host == url.host, origin.port == url.port, origin.path.isEmpty,
        origin.query == nil
    else { finding("a URL's origin does not parse to its scheme, host and port", url.origin) }
    guard let target = try? DPoPTarget(text), target.origin == url.origin,
        target.htu == DPoP.targetURI(url), target.htu.hasPrefix(url.scheme + "://" + url.host),
        !target.htu.contains("?"), !target.htu.contains("#")
    else { finding("the DPoP target of a URL disagrees with its parse", text) }
}

private func checkParts(_ url: HTTPURL) {
    let lower = { (s: String) in !s.utf8.contains { $0 >= 0x41 && $0 <= 0x5A } }
    guard url.scheme == "http" || url.scheme == "https" else { finding("a scheme other than http(s)", url.scheme) }
    guard !url.host.isEmpty, lower(url.host), !url.host.contains("/"), !url.host.contains("@") else {
        finding("a host that is empty, not lowercase, or holds / or @", url.host)
    }
    if let port = url.port, !(1...65535).contains(port) { finding("a port out of range", "\(port)") }
    guard url.path.isEmpty || url.path.hasPrefix("/"), !url.path.contains("?"), !url.path.contains("#") else {
        finding("a path that does not start with / or holds ? or #", url.path)
    }
    if let query = url.query, query.contains("#") { finding("a query that holds #", query) }
}

/// Seeds: the URLs the tests and the emulator use, and the shapes at the parser's edges.
func urlSeeds(_ s: SeedSet) {
    let urls = [
        ("authority", "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/"),
        ("emulator", "http://127.0.0.1:8443/tenant/oauth2/v2.0/token?dc=ESTS-PUB#x"),
        ("ipv6", "http://[::1]:65535/cb?code=1"), ("ipv6-upper", "HTTPS://[FE80::A:1.2.3.4]/"),
        ("upper", "HTTPS://Login.Example.COM:0443/P?Q#F"), ("no-path", "https://h"), ("query-only", "https://h?x=1"),
        ("fragment", "https://h#a?b/c"), ("userinfo", "https://u:p@h/"), ("bad-port", "https://h:65536"),
        ("no-scheme", "h/x://y"), ("ftp", "ftp://h"), ("space", "https://h /"), ("non-ascii", "https://e\u{301}.x"),
        ("open-bracket", "https://[::1"), ("dots", "https://a..b"), ("empty", ""), ("three", "://"),
        ("percent", "https://h/%2F%zz?%#%"), ("long-host", "https://" + String(repeating: "a", count: 253) + "/"),
    ]
    for (name, url) in urls { s.add("url", name, url) }
}
