import Foundation
import NativeAuthCrypto
import NativeAuthJSON
import Synchronization

/// Where a DPoP proof was presented: the token endpoint (the authorization server, RFC 9449 §5) or a resource (the
/// sample APIs and userinfo, §7). Each has its own nonce (§8, §9).
enum DPoPPlace: String, Sendable {
    case token, resource
}

/// How a place demands nonces (`oidc.dpop_nonce`, `oidc.api_dpop_nonce`): not at all, a current nonce in every
/// proof (a new one every `DPoPVerifier.nonceLifetime` seconds), or never satisfied — every proof is answered
/// `use_dpop_nonce` with a new nonce (a server that loops).
enum DPoPNonceMode: String, Sendable, CaseIterable {
    case off, required, always
}

/// A proof that passed every check: its key's thumbprint and what it said.
struct DPoPProof: Sendable {
    let jkt: String
    let jti: String
}

/// Why a proof was refused: `invalid_dpop_proof` (with why), or `use_dpop_nonce` (with the nonce to use).
enum DPoPRefusal: Error, Sendable {
    case invalid(String)
    case useNonce(String)
}

/// The emulator's DPoP checks (RFC 9449 §4.3), its own reading of the RFC (it shares no protocol code with the
/// library): one `DPoP` header holding a JWT with `typ` `dpop+jwt`, `alg` `ES256` and a public P-256 `jwk` (no
/// `d`), signed by that key; `jti`, `htm` (the request's method), `htu` (its URI, query and fragment ignored,
/// compared after lower-casing scheme and host and dropping a default port), `iat` within `iatWindow` seconds of the
/// emulator's clock; a `jti` not seen before (replays are refused while their `iat` is in the window); `ath` the
/// base64url SHA-256 of the access token presented with it, when there is one; and `nonce` when the place demands
/// one. Keeps the last proofs for `GET /_emulator/dpop`.
final class DPoPVerifier: Sendable {
    struct LogEntry: Sendable {
        let place: DPoPPlace
        let htm: String
        let htu: String
        let jti: String
        let jkt: String
        let nonce: String?
        let ath: Bool
        let outcome: String
        let proof: String
    }

    struct State: Sendable {
        /// Proofs accepted (`DPoPReplayTable`).
        var seen = DPoPReplayTable()
        var nonces: [DPoPPlace: (value: String, issued: Double)] = [:]
        var log: [LogEntry] = []
    }

    private let state = Mutex(State())
    let counters: Counters
    static let nonceLifetime = 600.0
    static let logCapacity = 200

    init(counters: Counters) { self.counters = counters }

    func reset() { state.withLock { $0 = State() } }

    /// The current nonce of `place` (a new one when there is none, or it is older than `nonceLifetime`).
    func nonce(_ place: DPoPPlace, now: Double) -> String {
        state.withLock { s in
            if let n = s.nonces[place], now - n.issued < Self.nonceLifetime { return n.value }
            let value = Ids.token("n.", bytes: 18)
            s.nonces[place] = (value, now)
            return value
        }
    }

    /// A new nonce for `place`, replacing the current one.
    private func rotate(_ place: DPoPPlace, now: Double) -> String {
        state.withLock { s in
            let value = Ids.token("n.", bytes: 18)
            s.nonces[place] = (value, now)
            return value
        }
    }

    /// Checks the request's proof; `accessToken` is the token presented with it (its hash must be `ath`).
    func verify(
        _ req: EmulatorRequest,
        expectedURI: String,
        place: DPoPPlace,
        accessToken: String?,
        nonceMode: DPoPNonceMode,
        iatWindow: Double,
        now: Double
    ) -> Result<DPoPProof, DPoPRefusal> {
        guard let text = req.headers["dpop"] else { return .failure(.invalid("The request has no DPoP proof.")) }
        let result = check(text, req, expectedURI, place, accessToken, nonceMode, iatWindow, now)
        switch result {
        case .success: counters.add(.dpopProofsAccepted)
        case .failure(.useNonce): counters.add(.dpopNonceChallenges)
        case .failure(.invalid): counters.add(.dpopProofsRefused)
        }
        return result
    }

    private func check(
        _ text: String,
        _ req: EmulatorRequest,
        _ expectedURI: String,
        _ place: DPoPPlace,
        _ accessToken: String?,
        _ nonceMode: DPoPNonceMode,
        _ iatWindow: Double,
        _ now: Double
    ) -> Result<DPoPProof, DPoPRefusal> {
        let parsed: (jwt: JWT, key: P256PublicKey)
        switch Self.parse(text) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let p): parsed = p
        }
        let c = parsed.jwt.claims
        let jkt = parsed.key.thumbprint
        guard let jti = c["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256,
            let htm = c["htm"]?.stringValue, let htu = c["htu"]?.stringValue, let iat = c["iat"]?.doubleValue
        else { return .failure(.invalid("The proof lacks jti, htm, htu or iat.")) }
        let nonce = c["nonce"]?.stringValue
        func log(_ outcome: String) {
            record(
                LogEntry(
                    place: place,
                    htm: htm,
                    htu: htu,
                    jti: jti,
                    jkt: jkt,
                    nonce: nonce,
                    ath: c["ath"] != nil,
                    outcome: outcome,
                    proof: text
                )
            )
        }
        func refuse(_ why: String) -> Result<DPoPProof, DPoPRefusal> {
            log("invalid_dpop_proof: " + why)
            return .failure(.invalid(why))
        }
        guard htm == req.method else { return refuse("htm is not the request's method.") }
        guard let given = Self.normalized(htu), given == Self.normalized(expectedURI) else {
            return refuse("htu is not the request's URI.")
        }
        guard abs(now - iat) <= iatWindow else { return refuse("iat is outside the accepted window.") }
        if let accessToken {
            let expected = Base64.urlEncode(SHA256.hash(Array(accessToken.utf8)))
            guard c["ath"]?.stringValue == expected else { return refuse("ath is not the access token's hash.") }
        }
        let replayed = state.withLock { s in
            s.seen.replayed(jkt + "|" + jti, iat: iat, window: iatWindow, now: now)
        }
        guard !replayed else { return refuse("the proof was replayed (its jti was seen before).") }
        switch nonceMode {
        case .off: break
        case .required:
            let current = self.nonce(place, now: now)
            guard nonce == current else {
                log("use_dpop_nonce")
                return .failure(.useNonce(current))
            }
        case .always:
            log("use_dpop_nonce")
            return .failure(.useNonce(rotate(place, now: now)))
        }
        log("accepted")
        return .success(DPoPProof(jkt: jkt, jti: jti))
    }

    /// The proof's JWT and key: `typ`, `alg`, a public P-256 `jwk`, a valid signature.
    private static func parse(_ text: String) -> Result<(jwt: JWT, key: P256PublicKey), DPoPRefusal> {
        guard text.utf8.count <= 8192, let jwt = try? JWT(decoding: text) else {
            return .failure(.invalid("The DPoP header is not one JWT."))
        }
        let h = jwt.header
        guard h["typ"]?.stringValue == "dpop+jwt" else { return .failure(.invalid("typ is not dpop+jwt.")) }
        guard h["alg"]?.stringValue == "ES256" else { return .failure(.invalid("alg is not ES256.")) }
        let jwk = h["jwk"]
        guard jwk?["kty"]?.stringValue == "EC", jwk?["crv"]?.stringValue == "P-256", jwk?["d"] == nil,
            let x = jwk?["x"]?.stringValue.flatMap({ Base64.decode($0) }),
            let y = jwk?["y"]?.stringValue.flatMap({ Base64.decode($0) }), let key = try? P256PublicKey(x: x, y: y)
        else { return .failure(.invalid("jwk is not a public P-256 key.")) }
        guard key.verify(signature: jwt.signature, message: jwt.signingInput) else {
            return .failure(.invalid("The proof's signature does not verify with its jwk."))
        }
        return .success((jwt, key))
    }

    /// A URI as compared: scheme and host in lower case, no default port, no query or fragment, "/" for no path.
    static func normalized(_ uri: String) -> String? {
        guard let u = URLComponents(string: uri), let scheme = u.scheme?.lowercased(), let host = u.host?.lowercased()
        else { return nil }
        let port = u.port.flatMap { ($0 == 443 && scheme == "https") || ($0 == 80 && scheme == "http") ? nil : $0 }
        let path = u.percentEncodedPath.isEmpty ? "/" : u.percentEncodedPath
        return scheme + "://" + host + (port.map { ":\($0)" } ?? "") + path
    }

    private func record(_ entry: LogEntry) {
        state.withLock { s in
            s.log.append(entry)
            if s.log.count > Self.logCapacity { s.log.removeFirst(s.log.count - Self.logCapacity) }
        }
    }

    /// `GET /_emulator/dpop`: the proofs received (oldest first) and the current nonces.
    var json: JSONValue {
        state.withLock { s in
            let proofs: [JSONValue] = s.log.map { e in
                [
                    "place": .string(e.place.rawValue), "htm": .string(e.htm), "htu": .string(e.htu),
                    "jti": .string(e.jti), "jkt": .string(e.jkt), "nonce": e.nonce.map { .string($0) } ?? .null,
                    "ath": .bool(e.ath), "outcome": .string(e.outcome), "proof": .string(e.proof),
                ]
            }
            var nonces: [String: JSONValue] = [:]
            for (place, n) in s.nonces { nonces[place.rawValue] = .string(n.value) }
            return ["proofs": .array(proofs), "nonces": .object(nonces)]
        }
    }
}
