import Foundation
import NativeAuthCABI
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// DPoP (RFC 9449) through the C ABI against the emulator's generic OpenID Connect provider: sign-ins bind their
/// tokens to the account's key, proofs go with every token request and API call, nonces are answered once, the key
/// lives with the account in the cache file and leaves with it.
@Suite struct DPoPFlowTests {
    @Test func aBrowserSignInBindsTheTokensToTheAccountsKeyAndAnswersNoncesOnce() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        try emu.control("POST", "settings", ["oidc_dpop_nonce": "required", "api_dpop_nonce": "required"])
        let path = DPoPHarness.tempPath()
        let c = try h.client(["cache": ["type": "file", "path": .string(path)]])
        let browser = FakeBrowser()  // kept alive by the test (the callback does not retain it)
        browser.install(on: c)
        let signed = c.call(na_sign_in_interactive, ["scopes": [.string(h.todo)]])
        #expect(signed.doc["status"] == "signed_in" && signed.doc["token"]?["token_type"] == "DPoP", "\(signed.doc)")
        // The code was redeemed after one nonce challenge, with a fresh proof.
        #expect(try h.outcomes("token") == ["use_dpop_nonce", "accepted"])
        let token = c.call(na_get_access_token, ["scopes": [.string(h.todo)]])
        #expect(token.doc["token_type"] == "DPoP" && token.doc["from_cache"] == true, "\(token.doc)")
        let at = try #require(token.doc["access_token"]?.stringValue)
        // The access token's and the refresh token's cnf.jkt are the key's thumbprint (from a proof's own jwk).
        let jkt = try h.accountThumbprint(c)
        #expect(try h.introspect(at)["cnf"]?["jkt"]?.stringValue == jkt)
        let file = try DPoPHarness.cacheFile(path)
        let rt = try #require(file.entries("NativeAuthDPoPRefreshToken").first?.value["secret"]?.stringValue)
        #expect(try h.introspect(rt)["cnf"]?["jkt"]?.stringValue == jkt)
        // The API: Authorization: DPoP with a proof carrying ath; its nonce challenge answered once.
        let api = c.call(na_call_api, ["url": .string(h.todoURL), "scopes": [.string(h.todo)]])
        #expect(api.doc["status"] == 200, "\(api.doc)")
        #expect(try h.outcomes("resource") == ["use_dpop_nonce", "accepted"])
        let resourceProof = try #require(try h.proofs().last)
        #expect(resourceProof["ath"] == true && resourceProof["jkt"]?.stringValue == jkt)
        // The API's nonce is remembered for its origin: the next call needs no challenge.
        #expect(c.call(na_call_api, ["url": .string(h.todoURL), "scopes": [.string(h.todo)]]).doc["status"] == 200)
        #expect(try h.outcomes("resource").suffix(1) == ["accepted"])
        // A refresh: the refresh token is presented with a proof of its key (a nonce challenge first: the origin's
        // nonce is the API's), and the rotated one is bound to the same key; no reuse was detected.
        let refreshed = c.call(na_get_access_token, ["scopes": [.string(h.todo)], "force_refresh": true])
        #expect(refreshed.doc["token_type"] == "DPoP" && refreshed.doc["from_cache"] == false, "\(refreshed.doc)")
        #expect(try h.outcomes("token").suffix(2) == ["use_dpop_nonce", "accepted"])
        let newAT = try #require(refreshed.doc["access_token"]?.stringValue)
        #expect(try h.introspect(newAT)["cnf"]?["jkt"]?.stringValue == jkt)
        #expect((try emu.control("GET", "counters")["refresh_token_reuse_detected"]?.intValue ?? 0) == 0)
    }

    @Test func aDeviceCodeSignInReadsUserinfoWithAProof() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        try emu.control("POST", "settings", ["oidc_device_id_token": false, "api_dpop_nonce": "required"])
        let c = try h.client()
        let done = try h.signIn(c)
        #expect(done["account"]?["username"] == "ann", "from userinfo: \(done)")
        #expect(done["token"]?["token_type"] == "DPoP")
        #expect(try h.outcomes("resource") == ["use_dpop_nonce", "accepted"], "userinfo, with the token's proof")
    }

    @Test func aRestartAndASecondProcessUseTheSameKeySealedInTheEncryptedFile() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let path = DPoPHarness.tempPath()
        let cache: JSONValue = [
            "type": "file", "path": .string(path),
            "encryption_key": .string(Base64.encode([UInt8](repeating: 7, count: 32))),
        ]
        var first: ABIClient? = try h.client(["cache": cache])
        try h.signIn(try #require(first))
        let jkt = try h.accountThumbprint(try #require(first))
        let second = try h.client(["cache": cache, "dpop": false])  // a second process: same file, same key
        #expect(try h.accountThumbprint(second) == jkt)
        let shared = second.call(na_call_api, ["url": .string(h.todoURL), "scopes": [.string(h.todo)]])
        #expect(shared.doc["status"] == 200, "the first process's cached DPoP token: \(shared.doc)")
        first = nil  // the first process ends
        let restarted = try h.client(["cache": cache])
        let refreshed = restarted.call(na_get_access_token, ["scopes": [.string(h.todo)], "force_refresh": true])
        #expect(refreshed.doc["token_type"] == "DPoP", "\(refreshed.doc)")
        let at = try #require(refreshed.doc["access_token"]?.stringValue)
        #expect(try h.introspect(at)["cnf"]?["jkt"]?.stringValue == jkt, "refreshed with the same key")
        #expect(try h.accountThumbprint(restarted) == jkt)
        // The key is sealed with the rest of the file: nothing of it is readable.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.prefix(4) == Data("NACE".utf8) && bytes.range(of: Data("DPoP".utf8)) == nil)
    }

    @Test func signingOutRemovesTheKeyAndTheBoundTokens() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let path = DPoPHarness.tempPath()
        let c = try h.client(["cache": ["type": "file", "path": .string(path)]])
        try h.signIn(c)
        var file = try DPoPHarness.cacheFile(path)
        let key = try #require(file.entries("NativeAuthDPoPKey").first?.value)
        let jkt = try h.accountThumbprint(c)
        #expect(key["kty"] == "EC" && key["crv"] == "P-256" && key["key_id"]?.stringValue == jkt)
        #expect(file.entries("AccessToken").isEmpty && file.entries("RefreshToken").isEmpty, "nothing MSAL would use")
        #expect(c.call(na_sign_out, [:]).rc == NA_OK)
        file = try DPoPHarness.cacheFile(path)
        for section in ["NativeAuthDPoPKey", "NativeAuthDPoPAccessToken", "NativeAuthDPoPRefreshToken"] {
            #expect(file.entries(section).isEmpty, "\(section) after sign-out")
        }
        let proof = c.call(na_dpop_proof, ["method": "GET", "url": .string(h.todoURL)])
        #expect(proof.rc == NA_ENOTFOUND && proof.doc.errorCode == "no_account", "\(proof.doc)")
    }

    @Test func aServerThatAlwaysWantsANewNonceGetsOneResendThenItsError() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let c = try h.client()
        try emu.control("POST", "settings", ["oidc_dpop_nonce": "always"])
        let start = c.call(na_sign_in_device_code, ["scopes": [.string(h.todo)]])
        let code = try #require(start.doc["user_code"]?.stringValue)
        try emu.control("POST", "device/approve", ["user_code": .string(code), "email": .string(annEmail)])
        let looped = c.call(na_flow_submit, ["flow": .string(start.doc["flow"]?.stringValue ?? ""), "action": "wait"])
        #expect(looped.rc == NA_ESERVER && looped.doc.errorCode == "server", "\(looped.doc)")
        #expect(try h.outcomes("token") == ["use_dpop_nonce", "use_dpop_nonce"], "exactly one resend")
        // The same at an API.
        try emu.control("POST", "settings", ["oidc_dpop_nonce": "off"])
        try h.signIn(c)
        try emu.control("POST", "settings", ["api_dpop_nonce": "always"])
        let api = c.call(na_call_api, ["url": .string(h.todoURL), "scopes": [.string(h.todo)]])
        #expect(api.rc == NA_OK && api.doc["status"] == 401, "the API's answer, never a loop: \(api.doc)")
        #expect(try h.outcomes("resource") == ["use_dpop_nonce", "use_dpop_nonce"])
    }

    @Test func aRetryAfterA5xxCarriesANewProof() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let c = try h.client()
        try h.signIn(c)
        try emu.clearLog()
        try emu.control("POST", "faults", ["path": "/oidc/token", "status": 503])
        let refreshed = c.call(na_get_access_token, ["scopes": [.string(h.todo)], "force_refresh": true])
        #expect(refreshed.rc == NA_OK && refreshed.doc["token_type"] == "DPoP", "\(refreshed.doc)")
        let proofs = try emu.requests("/oidc/token").compactMap { $0["headers"]?["dpop"]?.stringValue }
        #expect(proofs.count == 2 && proofs[0] != proofs[1], "the retry carried a proof of its own")
        let jtis = try proofs.map { try JWT(decoding: $0).claims["jti"]?.stringValue ?? "" }
        #expect(Set(jtis).count == 2, "\(jtis)")
    }

    @Test func aProofOfAnotherKeyOrNoneIsRefusedAndAnsweredInteractionRequired() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let path = DPoPHarness.tempPath()
        let cache: JSONValue = ["type": "file", "path": .string(path)]
        do { try h.signIn(try h.client(["cache": cache])) }
        // Another process plants a key of its own, and binds the entries to it.
        let original = try DPoPHarness.cacheFile(path)
        let other = try P256PrivateKey.generate()
        let planted = try Self.rebound(original, to: other)
        try DPoPHarness.writeCacheFile(path, planted)
        let c = try h.client(["cache": cache])
        let refused = c.call(na_get_access_token, ["scopes": [.string(h.todo)], "force_refresh": true])
        #expect(refused.rc == NA_EINTERACTION && refused.doc.errorCode == "interaction_required", "\(refused.doc)")
        #expect(try h.outcomes("token").last == "accepted", "the proof itself is well-formed")
        #expect(
            try emu.requests("/oidc/token").last?["status"] == 400,
            "the provider refused the refresh token: it is bound to the original key"
        )
        // The refresh token moved to MSAL's section without its binding: presented without a proof, refused.
        var bearer = original
        if case .object(var o) = bearer, case .object(var rts)? = o["NativeAuthDPoPRefreshToken"] {
            for (k, v) in rts {
                guard case .object(var e) = v else { continue }
                e["key_id"] = nil
                e["token_type"] = nil
                rts[k] = .object(e)
            }
            o["RefreshToken"] = .object(rts)
            o["NativeAuthDPoPRefreshToken"] = nil
            o["NativeAuthDPoPAccessToken"] = nil
            bearer = .object(o)
        }
        try DPoPHarness.writeCacheFile(path, bearer)
        let noProof = try h.client(["cache": cache, "dpop": false])
        let r = noProof.call(na_get_access_token, ["scopes": [.string(h.todo)], "force_refresh": true])
        #expect(r.rc == NA_EINTERACTION && r.doc.errorCode == "interaction_required", "\(r.doc)")
        // A client that asks for DPoP never presents it without a proof.
        let strict = try h.client(["cache": cache])
        let before = try emu.requests("/oidc/token").count
        let s = strict.call(na_get_access_token, ["scopes": [.string(h.todo)], "force_refresh": true])
        #expect(s.rc == NA_EINTERACTION && s.doc.errorCode == "interaction_required", "\(s.doc)")
        #expect(try emu.requests("/oidc/token").count == before)
    }

    /// `doc` with its DPoP key replaced by `key`, and its DPoP entries' `key_id` made that key's.
    static func rebound(_ doc: JSONValue, to key: P256PrivateKey) throws -> JSONValue {
        guard case .object(var o) = doc else { throw TestFailure("not a cache document") }
        let d = try key.withPrivateScalar { Base64.urlEncode($0) }
        for section in ["NativeAuthDPoPKey", "NativeAuthDPoPAccessToken", "NativeAuthDPoPRefreshToken"] {
            guard case .object(var entries)? = o[section] else { continue }
            for (k, v) in entries {
                guard case .object(var e) = v else { continue }
                e["key_id"] = .string(key.thumbprint)
                if section == "NativeAuthDPoPKey" { e["secret"] = .string(d) }
                entries[k] = .object(e)
            }
            o[section] = .object(entries)
        }
        return .object(o)
    }
}
