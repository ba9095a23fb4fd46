import Foundation
import NativeAuthCABI
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// DPoP's refusals: providers without it, bearer tokens where DPoP was asked for, entries of the cache file bound to
/// another key, stolen tokens and replayed proofs at the API, and na_dpop_proof's bad input.
@Suite struct DPoPEdgeTests {
    @Test func dpopWithAProviderWithoutItIsDPoPUnsupported() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        // Entra issues no DPoP tokens: refused when the client is made.
        var out: UnsafeMutablePointer<CChar>? = nil
        var handle: OpaquePointer? = nil
        let config: JSONValue = ["authority": .string(emu.authority), "client_id": .string(emu.clientID), "dpop": true]
        let rc = na_client_new(config.serialized(), &handle, &out)
        let doc = try JSONValue.parse(out.map { String(cString: $0) } ?? "")
        na_string_free(out)
        #expect(rc == NA_EINVAL && handle == nil && doc.errorCode == "dpop_unsupported", "\(doc)")
        #expect(doc["error"]?["field"] == "dpop")
        // A provider whose discovery offers no DPoP: the first call that reads it says so, before any token request.
        try emu.control("POST", "settings", ["oidc_dpop": false])
        let c = try h.client()
        let r = c.call(na_sign_in_device_code, ["scopes": [.string(h.todo)]])
        #expect(r.rc == NA_EINVAL && r.doc.errorCode == "dpop_unsupported", "\(r.doc)")
        #expect(try emu.requests("/oidc/device_authorization").isEmpty)
    }

    @Test func aBearerTokenAnsweredToAProofIsRefusedNotKept() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let c = try h.client()
        let start = c.call(na_sign_in_device_code, ["scopes": [.string(h.todo)]])
        let code = try #require(start.doc["user_code"]?.stringValue)
        try emu.control("POST", "device/approve", ["user_code": .string(code), "email": .string(annEmail)])
        // A provider that advertises DPoP but answers the proof with a bearer token.
        try emu.control(
            "POST",
            "faults",
            [
                "path": "/oidc/token", "status": 200,
                "body": ["access_token": "oat_bearer", "token_type": "Bearer", "expires_in": 3600],
            ]
        )
        let r = c.call(na_flow_submit, ["flow": .string(start.doc["flow"]?.stringValue ?? ""), "action": "wait"])
        #expect(r.rc == NA_EINVAL && r.doc.errorCode == "dpop_unsupported", "\(r.doc)")
        #expect(c.call(na_get_accounts, [:]).doc["accounts"]?.arrayValue?.isEmpty == true, "nothing was kept")
    }

    @Test func aClientAskingForDPoPNeverServesABearerSignIn() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let path = DPoPHarness.tempPath()
        let cache: JSONValue = ["type": "file", "path": .string(path)]
        let bearer = try h.client(["cache": cache, "dpop": false])
        let signed = try h.signIn(bearer)
        #expect(signed["token"]?["token_type"] == "Bearer")
        let proof = bearer.call(na_dpop_proof, ["method": "GET", "url": .string(h.todoURL)])
        #expect(proof.rc == NA_EINVAL && proof.doc.errorCode == "dpop_unsupported", "\(proof.doc)")
        let strict = try h.client(["cache": cache])
        let r = strict.call(na_get_access_token, ["scopes": [.string(h.todo)]])
        #expect(r.rc == NA_EINTERACTION && r.doc.errorCode == "interaction_required", "\(r.doc)")
        #expect(r.doc["error"]?["login_hint"] == nil || r.doc["error"]?["login_hint"]?.stringValue != nil)
        let api = strict.call(na_call_api, ["url": .string(h.todoURL), "scopes": [.string(h.todo)]])
        #expect(api.doc.errorCode == "interaction_required", "\(api.doc)")
    }

    @Test func aTokenBoundToAnotherKeyInTheFileIsNeverServed() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let path = DPoPHarness.tempPath()
        let cache: JSONValue = ["type": "file", "path": .string(path)]
        do { try h.signIn(try h.client(["cache": cache])) }
        // Another process rewrites the access token's key_id (its key is not the account's).
        guard case .object(var o) = try DPoPHarness.cacheFile(path),
            case .object(var ats)? = o["NativeAuthDPoPAccessToken"], let (k, v) = ats.first, case .object(var e) = v
        else { throw TestFailure("no DPoP access token in the file") }
        let stranger = try P256PrivateKey.generate().thumbprint
        e["key_id"] = .string(stranger)
        ats[k] = .object(e)
        o["NativeAuthDPoPAccessToken"] = .object(ats)
        try DPoPHarness.writeCacheFile(path, .object(o))
        let c = try h.client(["cache": cache])
        let r = c.call(na_get_access_token, ["scopes": [.string(h.todo)]])
        #expect(r.doc["from_cache"] == false && r.doc["token_type"] == "DPoP", "refreshed, not served: \(r.doc)")
        #expect(r.doc["access_token"] != e["secret"])
    }

    @Test func aKeyEntryPlantedBesideTheAccountsKeyIsNotUsed() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let path = DPoPHarness.tempPath()
        let cache: JSONValue = ["type": "file", "path": .string(path)]
        var jkt = ""
        do {
            let first = try h.client(["cache": cache])
            try h.signIn(first)
            jkt = try h.accountThumbprint(first)
        }
        // Another process adds a second key entry for the account (a valid key, its own key_id), after the real one.
        guard case .object(var o) = try DPoPHarness.cacheFile(path), case .object(var keys)? = o["NativeAuthDPoPKey"],
            let real = keys.first?.value, case .object(var planted) = real
        else { throw TestFailure("no key entry in the file") }
        let other = try P256PrivateKey.generate()
        planted["secret"] = .string(try other.withPrivateScalar { Base64.urlEncode($0) })
        planted["key_id"] = .string(other.thumbprint)
        keys["zzzz-planted"] = .object(planted)
        o["NativeAuthDPoPKey"] = .object(keys)
        try DPoPHarness.writeCacheFile(path, .object(o))
        let c = try h.client(["cache": cache])
        #expect(try h.accountThumbprint(c) == jkt, "the key the refresh token is bound to")
        let r = c.call(na_get_access_token, ["scopes": [.string(h.todo)], "force_refresh": true])
        #expect(r.rc == NA_OK && r.doc["token_type"] == "DPoP", "\(r.doc)")
    }

    @Test func theAPIRefusesAStolenTokenAsBearerAndAReplayedProof() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let c = try h.client()
        try h.signIn(c)
        let token = try #require(c.call(na_get_access_token, ["scopes": [.string(h.todo)]]).doc["access_token"])
        let at = try #require(token.stringValue)
        func get(_ headers: [(String, String)]) throws -> HTTPResponse {
            try emu.http.send(HTTPRequest(url: h.todoURL, headers: headers))
        }
        // Stolen, and sent as a bearer token: refused.
        let asBearer = try get([("Authorization", "Bearer " + at)])
        #expect(asBearer.status == 401 && asBearer.header("www-authenticate")?.contains("invalid_token") == true)
        // Sent as DPoP without a proof, or with the library's proof replayed: refused.
        #expect(try get([("Authorization", "DPoP " + at)]).status == 401)
        #expect(c.call(na_call_api, ["url": .string(h.todoURL), "scopes": [.string(h.todo)]]).doc["status"] == 200)
        let used = try #require(try h.proofs().last?["proof"]?.stringValue)
        let replayed = try get([("Authorization", "DPoP " + at), ("DPoP", used)])
        #expect(replayed.status == 401 && replayed.header("www-authenticate")?.contains("invalid_dpop_proof") == true)
        #expect(try h.outcomes("resource").last?.contains("replayed") == true)
        // The app's own proof (na_dpop_proof) works; a well-made proof of another key does not.
        let proof = c.call(na_dpop_proof, ["method": "GET", "url": .string(h.todoURL), "access_token": token])
        #expect(
            try get([("Authorization", "DPoP " + at), ("DPoP", proof.doc["proof"]?.stringValue ?? "")]).status == 200
        )
        let thief = try Self.proof(by: try P256PrivateKey.generate(), url: h.todoURL, token: at)
        let stolen = try get([("Authorization", "DPoP " + at), ("DPoP", thief)])
        #expect(stolen.status == 401 && stolen.header("www-authenticate")?.contains("invalid_dpop_proof") == true)
        #expect(try h.outcomes("resource").last == "accepted", "a valid proof, of the wrong key")
    }

    /// A proof made without the library (a thief's, with a key of its own).
    static func proof(by key: P256PrivateKey, url: String, token: String) throws -> String {
        let jwk =
            #"{"kty":"EC","crv":"P-256","x":""# + Base64.urlEncode(key.x) + #"","y":""#
            + Base64.urlEncode(key.y) + #""}"#
        let header = Base64.urlEncode(Array((#"{"typ":"dpop+jwt","alg":"ES256","jwk":"# + jwk + "}").utf8))
        let claims: JSONValue = [
            "jti": .string(Base64.urlEncode(try SecureRandom.bytes(16))), "htm": "GET", "htu": .string(url),
            "iat": .int(Int64(Date().timeIntervalSince1970)), "ath": .string(Base64.urlEncode(SHA256.hash(token))),
        ]
        let input = header + "." + Base64.urlEncode(Array(claims.serialized().utf8))
        let signature = try Array(input.utf8).withUnsafeBytes { try key.sign($0) }
        return input + "." + Base64.urlEncode(signature)
    }

    @Test func dpopProofRefusesBadRequests() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let c = try h.client()
        let none = c.call(na_dpop_proof, ["method": "GET", "url": .string(h.todoURL)])
        #expect(none.rc == NA_ENOTFOUND && none.doc.errorCode == "no_account", "\(none.doc)")
        try h.signIn(c)
        let cases: [(JSONValue, String)] = [
            (["url": .string(h.todoURL)], "method"), (["method": "GET"], "url"),
            (["method": "GET", "url": "http://api.example/x"], "url"),
            (["method": "G ET", "url": .string(h.todoURL)], "method"),
            (["method": "GET", "url": .string(h.todoURL), "nonce": "a b"], "nonce"),
            (["method": "GET", "url": .string(h.todoURL), "nonce": "\"x\""], "nonce"),
            (["method": "GET", "url": .string(h.todoURL), "access_token": ""], "access_token"),
            (["method": 1, "url": .string(h.todoURL)], "method"),
        ]
        for (request, field) in cases {
            let r = c.call(na_dpop_proof, request)
            #expect(r.rc == NA_EINVAL && r.doc["error"]?["field"]?.stringValue == field, "\(request): \(r.doc)")
        }
        let ok = c.call(na_dpop_proof, ["method": "POST", "url": .string(h.todoURL + "?q=1#f"), "nonce": "n.1"])
        let jwt = try JWT(decoding: try #require(ok.doc["proof"]?.stringValue))
        #expect(jwt.claims["htm"] == "POST" && jwt.claims["htu"]?.stringValue == h.todoURL)
        #expect(jwt.claims["nonce"] == "n.1" && jwt.claims["ath"] == nil && jwt.claims["jti"]?.stringValue?.count == 22)
        #expect(na_dpop_proof(nil, "{}", nil) == NA_EINVAL)
    }
}
