import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// A browser, as far as the emulator's pages need one: it keeps cookies, posts forms back and reads authorization
/// responses (302 query/fragment, or a form_post page).
final class PageClient {
    let h: Harness
    var cookies: [String: String] = [:]
    let redirect = "http://127.0.0.1:53124/callback"
    let verifier: String

    init(_ h: Harness) throws {
        self.h = h
        verifier = try PKCE.makeVerifier()
    }

    private func keep(_ r: Harness.Reply) {
        guard let set = r.response.header("set-cookie") else { return }
        let pair = set.split(separator: ";").first.map(String.init) ?? ""
        let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard kv.count == 2 else { return }
        if set.contains("Max-Age=0") { cookies.removeValue(forKey: kv[0]) } else { cookies[kv[0]] = kv[1] }
    }

    private var cookieHeader: [(name: String, value: String)] {
        cookies.isEmpty ? [] : [("Cookie", cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))]
    }

    func get(_ url: String) async throws -> Harness.Reply {
        let r = try await h.get(url, headers: cookieHeader)
        keep(r)
        return r
    }

    func post(_ path: String, _ fields: [(String, String)]) async throws -> Harness.Reply {
        let r = try await h.send(
            .form(url: path.hasPrefix("http") ? path : h.base + path, fields: fields, headers: cookieHeader)
        )
        keep(r)
        return r
    }

    /// The authorize URL of `endpoint` (Entra's or `/oidc/authorize`) with PKCE and `extra` parameters.
    func authorizeURL(
        _ endpoint: String,
        clientID: String,
        scope: String = "openid profile offline_access",
        _ extra: [(String, String)] = []
    ) -> String {
        let q =
            [
                ("client_id", clientID), ("response_type", "code"), ("redirect_uri", redirect), ("scope", scope),
                ("state", "st-1"), ("nonce", "n-1"), ("code_challenge", PKCE.challenge(for: verifier)),
                ("code_challenge_method", "S256"),
            ] + extra
        return endpoint + "?" + q.map { "\($0.0)=\(FormEncoding.component($0.1))" }.joined(separator: "&")
    }

    /// Submits the page `page` shows (its form action, its `request`) with `fields`.
    func submit(_ page: Harness.Reply, _ fields: [(String, String)]) async throws -> Harness.Reply {
        let action = try #require(page.text.firstMatch(of: /<form id="form" method="post" action="([^"]+)"/)?.1)
        var all = fields
        if let request = page.text.firstMatch(of: /name="request" value="([^"]+)"/)?.1 {
            all.insert(("request", String(request)), at: 0)
        }
        return try await post(String(action), all)
    }
}

extension Harness.Reply {
    /// The page's `data-page`, nil when the answer is not one of the emulator's pages.
    var page: String? { text.firstMatch(of: /<main id="page" data-page="([^"]+)"/).map { String($0.1) } }

    /// The authorization response's parameters: from the Location of a 302 (query or fragment), or the hidden inputs
    /// of a form_post page.
    var authorizationResponse: [String: String] {
        if status == 302, let location = response.header("location") {
            let part = location.split(separator: "#").count > 1 ? location.split(separator: "#")[1] : nil
            let query = part ?? location.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
            return Dictionary((FormEncoding.decode(String(query)) ?? []).map { ($0.0, $0.1) }) { a, _ in a }
        }
        var out: [String: String] = [:]
        for m in text.matches(of: /<input type="hidden" name="([^"]+)" value="([^"]*)">/) {
            out[String(m.1)] = unescapeHTML(String(m.2))
        }
        return out
    }
}

func unescapeHTML(_ s: String) -> String {
    s.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
        .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        .replacingOccurrences(of: "&amp;", with: "&")
}

/// The claims of a JWT whose signature checks out against the JWKS at `jwksURL` (by `kid`).
func verifiedClaims(_ token: String, jwksURL: String, _ h: Harness) async throws -> JSONValue {
    let jwt = try JWT(decoding: token)
    let keys = try await h.get(jwksURL)["keys"]?.arrayValue ?? []
    let kid = jwt.header["kid"]?.stringValue
    #expect(jwt.header["alg"] == "RS256" && kid != nil)
    let jwk = try #require(keys.first { $0["kid"]?.stringValue == kid })
    let key = try RSAPublicKey(jwk: jwk["n"]?.stringValue ?? "", jwk["e"]?.stringValue ?? "")
    try expect(jwt.verify(with: key), "signature of \(jwt.claims)")
    return jwt.claims
}
