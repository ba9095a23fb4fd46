internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON
import Synchronization

// DPoP (RFC 9449) on the wire: the proof JWT a request carries in its `DPoP` header, the nonces servers hand out in
// `DPoP-Nonce`, and the nonce challenges (`use_dpop_nonce`). The wire names of DPoP live here.

/// What a request's proof is made of: the key, and — at a resource, or the userinfo endpoint — the access token it
/// presents (the proof then carries its hash, `ath`).
struct DPoPBinding: Sendable {
    let key: DPoPKey
    var accessToken: Secret? = nil
}

/// The nonces servers gave (RFC 9449 §8 at the authorization server, §9 at resources), by origin: the last
/// `DPoP-Nonce` each origin sent, from any answer, error or not. Shared by every copy of a client's `ServerAPI` and by
/// its API calls. Bounded: nonces of at most `maxOrigins` origins are kept (a full table forgets them all and starts
/// again: a forgotten nonce costs one `use_dpop_nonce` round trip, never a failure).
final class DPoPNonces: Sendable {
    private let nonces = Mutex<[String: String]>([:])
    static let maxOrigins = 64

    func nonce(for origin: String) -> String? { nonces.withLock { $0[origin] } }

    /// Notes the `DPoP-Nonce` of an answer from `origin` (a value that is not one, RFC 9449's `1*NQCHAR` of at most
    /// `DPoP.maxNonceBytes`, is ignored); answers the nonce when there was one.
    @discardableResult
    func note(_ response: HTTPResponse, origin: String) -> String? {
        guard let value = response.header("dpop-nonce"), DPoP.isNonce(value) else { return nil }
        nonces.withLock { n in
            if n[origin] == nil && n.count >= Self.maxOrigins { n.removeAll(keepingCapacity: true) }
            n[origin] = value
        }
        return value
    }
}

/// Where a request with a proof goes, from its URL parsed once: the proof's `htu` and the origin its nonces are kept
/// by.
struct DPoPTarget: Sendable {
    let htu: String
    let origin: String

    init(_ url: String) throws(NativeAuthError) {
        guard let u = try? HTTPURL(url) else {
            throw .invalidArgument("url: not an absolute http(s) URL", field: "url")
        }
        htu = DPoP.targetURI(u)
        origin = u.origin
    }
}

enum DPoP {
    /// The longest nonce kept or sent (RFC 9449 sets no bound; a hostile server gets none either).
    static let maxNonceBytes = 1024

    /// A `DPoP-Nonce` value (RFC 9449 §8.1): `1*NQCHAR`, NQCHAR = %x21 / %x23-5B / %x5D-7E — printable ASCII without
    /// space, `"` and `\` (so it goes into a proof's JSON as it is).
    static func isNonce(_ s: String) -> Bool {
        let b = s.utf8
        guard !b.isEmpty, b.count <= maxNonceBytes else { return false }
        return b.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    /// The proof's `htu` (RFC 9449 §4.2): the request's URI without query and fragment, scheme and host in lower
    /// case, a default port (80 for http, 443 for https) left out, an empty path as "/".
    static func targetURI(_ u: HTTPURL) -> String {
        let defaultPort = u.scheme == "https" ? 443 : 80
        let authority = u.port.map { $0 == defaultPort ? u.host : "\(u.host):\($0)" } ?? u.host
        return u.scheme + "://" + authority + (u.path.isEmpty ? "/" : u.path)
    }

    /// A proof JWT (RFC 9449 §4.2) for one request: the header `{"typ":"dpop+jwt","alg":"ES256","jwk":{…}}`, the
    /// claims `jti` (128 random bits), `htm`, `htu`, `iat`, and `nonce` and `ath` when given, signed ES256.
    static func proof(
        _ key: DPoPKey,
        method: String,
        url: String,
        nonce: String?,
        accessToken: Secret?,
        now: Double
    ) throws(NativeAuthError) -> String {
        try proof(key, method: method, target: DPoPTarget(url), nonce: nonce, accessToken: accessToken, now: now)
    }

    static func proof(
        _ key: DPoPKey,
        method: String,
        target: DPoPTarget,
        nonce: String?,
        accessToken: Secret?,
        now: Double
    ) throws(NativeAuthError) -> String {
        guard !method.isEmpty, method.utf8.count <= 32, method.utf8.allSatisfy(APIRequest.isTokenByte) else {
            throw .invalidArgument("method: not an HTTP method", field: "method")
        }
        let jti: [UInt8]
        do { jti = try SecureRandom.bytes(16) } catch {
            throw NativeAuthError(.internal, "The system random generator failed.")
        }
        // Built as bytes, once: the claims, then `header.claims` (the signing input), then `.signature` after it.
        let nonce = nonce.flatMap { isNonce($0) ? $0 : nil }
        var claims: [UInt8] = []
        claims.reserveCapacity(192 + target.htu.utf8.count + (nonce?.utf8.count ?? 0))
        claims.append(contentsOf: #"{"jti":""#.utf8)
        Base64.urlEncode(jti, into: &claims)
        claims.append(contentsOf: #"","htm":""#.utf8)
        claims.append(contentsOf: method.utf8)
        claims.append(contentsOf: #"","htu":""#.utf8)
        appendEscaped(target.htu, to: &claims)
        claims.append(contentsOf: #"","iat":"#.utf8)
        claims.append(contentsOf: String(Int64(now.rounded(.down))).utf8)
        if let nonce {
            claims.append(contentsOf: #","nonce":""#.utf8)
            claims.append(contentsOf: nonce.utf8)
            claims.append(UInt8(ascii: "\""))
        }
        if let accessToken {
            claims.append(contentsOf: #","ath":""#.utf8)
            accessToken.withUnsafeBytes { Base64.urlEncode(SHA256.hash($0), into: &claims) }
            claims.append(UInt8(ascii: "\""))
        }
        claims.append(UInt8(ascii: "}"))
        var jws: [UInt8] = []
        jws.reserveCapacity(key.encodedHeader.utf8.count + 2 + (claims.count + 2) / 3 * 4 + 86)
        jws.append(contentsOf: key.encodedHeader.utf8)
        jws.append(UInt8(ascii: "."))
        Base64.urlEncode(claims, into: &jws)
        let signature = try key.sign(jws)
        jws.append(UInt8(ascii: "."))
        Base64.urlEncode(signature, into: &jws)
        return String(decoding: jws, as: UTF8.self)
    }

    /// Appends `s` to a JSON string being built, `"` and `\` escaped (a URL holds no control or non-ASCII character:
    /// `HTTPURL`).
    private static func appendEscaped(_ s: String, to out: inout [UInt8]) {
        guard s.utf8.contains(where: { $0 == 0x22 || $0 == 0x5C }) else { return out.append(contentsOf: s.utf8) }
        for c in s.utf8 {
            if c == 0x22 || c == 0x5C { out.append(0x5C) }
            out.append(c)
        }
    }

    /// Whether an answer asks for a nonce (`use_dpop_nonce`): at the authorization server a 400 (or 401) whose JSON
    /// `error` says so (RFC 9449 §8), at a resource a 401 whose `WWW-Authenticate` has a `DPoP` challenge with that
    /// `error` (§9). Only an answer that also carried a nonce is retried (the caller checks).
    static func isNonceChallenge(_ r: HTTPResponse) -> Bool {
        guard r.status == 400 || r.status == 401 else { return false }
        if r.status == 401, let challenge = challenge(r), challenge.params["error"] == "use_dpop_nonce" { return true }
        guard r.body.count <= 65_536, let body = try? JSONValue.parse(r.body) else { return false }
        return body["error"]?.stringValue == "use_dpop_nonce"
    }

    /// The first `DPoP` challenge of an answer's `WWW-Authenticate` fields (joined, as RFC 9110 allows), if any.
    static func challenge(_ r: HTTPResponse) -> WWWAuthenticate.Challenge? {
        let fields = r.headers.filter { $0.name == "www-authenticate" }.map(\.value)
        guard !fields.isEmpty,
            let parsed = try? WWWAuthenticate.parse(
                fields.joined(separator: ", "),
                isJSONObject: ClaimsRequest.isJSONObject
            )
        else { return nil }
        return parsed.challenges.first { $0.isScheme("DPoP") }
    }
}

extension ServerAPI {
    /// Sets `request`'s `DPoP` header to a fresh proof (a new `jti`, the origin's latest nonce): before each attempt,
    /// so that no two sends of one request carry the same proof (a server remembers `jti`s, RFC 9449 §11.1).
    /// `target` is the request's URL, parsed once for all its attempts.
    func attachProof(
        _ binding: DPoPBinding,
        target: DPoPTarget,
        to request: inout HTTPRequest
    ) throws(NativeAuthError) {
        let proof = try DPoP.proof(
            binding.key,
            method: request.method,
            target: target,
            nonce: dpopNonces.nonce(for: target.origin),
            accessToken: binding.accessToken,
            now: clock.now()
        )
        request.headers.removeAll { HeaderName.matches($0.name, "dpop") }
        request.headers.append(("DPoP", proof))
    }

    /// After an answer to a request with a proof: keeps its nonce, and says whether to send the request once more —
    /// only when it was a nonce challenge that came with a nonce and this is the first. That resend is safe even for a
    /// request carrying a refresh token or a code: a server answers `use_dpop_nonce` when it checks the proof, before
    /// it looks at the grant (RFC 9449 §8: the client "retries the request" with the nonce; the refused request
    /// redeemed nothing), and one resend at most means a server that keeps asking gets its error answered, never a
    /// loop.
    func wantsNonceRetry(_ response: HTTPResponse, origin: String, retried: Bool) -> Bool {
        guard dpopNonces.note(response, origin: origin) != nil, !retried, DPoP.isNonceChallenge(response) else {
            return false
        }
        return true
    }

    /// The key of a new sign-in's token request: a new one with `"dpop": true`, else none.
    func signInKey() throws(NativeAuthError) -> DPoPKey? {
        configuration.dpop ? try DPoPKey.generate() : nil
    }

    /// A proof for a request the app sends itself (`na_dpop_proof`).
    func dpopProof(
        _ key: DPoPKey,
        method: String,
        url: String,
        nonce: String?,
        accessToken: Secret?
    ) throws(NativeAuthError) -> String {
        let target = try DPoPTarget(url)
        return try DPoP.proof(
            key,
            method: method,
            target: target,
            nonce: nonce ?? dpopNonces.nonce(for: target.origin),
            accessToken: accessToken,
            now: clock.now()
        )
    }
}

extension ServerAPI {
    /// A token answer's `token_type`. To a request that carried a proof: `DPoP` (in any case) — a provider that answers
    /// `Bearer` does not bind tokens to keys (RFC 9449 §5), and such a token is refused, never used as a bearer token.
    /// Otherwise `Bearer` (or none, as some providers send).
    static func checkTokenType(_ type: String?, dpop: Bool) throws(NativeAuthError) {
        if dpop {
            guard type?.lowercased() == "dpop" else {
                let what = type.map { "token_type \(String($0.prefix(20)))" } ?? "no token_type"
                throw NativeAuthError(
                    .dpopUnsupported,
                    "The provider answered a token request carrying a DPoP proof with \(what), not a DPoP-bound "
                        + "token; it was refused (never used as a bearer token)."
                )
            }
        } else if let type, type.lowercased() != "bearer" {
            throw .unexpected("token_type \(type.prefix(20)) is not Bearer")
        }
    }

    /// A client asking for DPoP meets an account signed in without it (in a shared cache, before `"dpop"` was set).
    static func signedInWithoutDPoP() -> NativeAuthError {
        NativeAuthError(
            .interactionRequired,
            "This account's tokens are not bound to a DPoP key (it was signed in without DPoP); with \"dpop\": true "
                + "it must sign in again."
        )
    }
}
