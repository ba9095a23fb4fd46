import Foundation
import NativeAuthCABI
import NativeAuthCrypto
import NativeAuthJSON
import Synchronization
import Testing

/// Proofs signed on many threads at once with one account's key, through the C ABI (each signature copies the key's
/// prepared signing context, which every thread reads; attack round Z on the speed change of issue 32), and a client
/// freed while other threads sign. Run under TSan and ASan by `make test-tsan` and `make test-asan`.
@Suite struct DPoPThreadTests {
    @Test func proofsAndAPICallsOnManyThreadsShareOneKey() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        try emu.control("POST", "settings", ["api_dpop_nonce": "required"])
        let c = try h.client()
        try h.signIn(c)
        let jkt = try h.accountThumbprint(c)
        let proofs = Mutex<[(url: String, doc: JSONValue)]>([])
        let statuses = Mutex<[JSONValue?]>([])
        onThreads(8) { t in
            for i in 0..<16 {
                let url = "\(h.todoURL)/\(t)?i=\(i)"
                let r = c.call(na_dpop_proof, ["method": "POST", "url": .string(url)])
                proofs.withLock { $0.append((url, r.doc)) }
                if i % 8 == 0 {
                    let api = c.call(na_call_api, ["url": .string(h.todoURL), "scopes": [.string(h.todo)]])
                    statuses.withLock { $0.append(api.doc["status"]) }
                }
            }
        }
        let all = proofs.withLock { $0 }
        #expect(all.count == 8 * 16)
        var jtis = Set<String>()
        for (url, doc) in all {
            let proof = try #require(doc["proof"]?.stringValue, "\(doc)")
            #expect(try DPoPHarness.thumbprint(ofProof: proof) == jkt)
            let claims = try JWT(decoding: proof).claims
            #expect(claims["htu"]?.stringValue == url.split(separator: "?")[0].description)
            jtis.insert(claims["jti"]?.stringValue ?? "")
        }
        #expect(jtis.count == all.count, "a new jti each")
        #expect(statuses.withLock { $0 } == Array(repeating: 200 as JSONValue, count: 16))
        #expect(Set(try h.outcomes("resource")).isSubset(of: ["use_dpop_nonce", "accepted"]))
    }

    /// A client made from the cache file (the key restored, as another process would) and freed while eight threads
    /// sign with it: each call either answers a proof of the account's key or refuses the freed handle.
    @Test func aClientFreedWhileOtherThreadsSign() throws {
        let emu = try EmulatorProcess()
        let h = try DPoPHarness(emu)
        let path = DPoPHarness.tempPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let first = try h.client(["cache": ["type": "file", "path": .string(path)]])
        try h.signIn(first)
        let jkt = try h.accountThumbprint(first)
        let config: JSONValue = [
            "authority": try #require(h.oidc["authority"]), "client_id": try #require(h.oidc["client_id"]),
            "authority_type": "oidc", "dpop": true, "cache": ["type": "file", "path": .string(path)],
        ]
        var handle: OpaquePointer? = nil
        var error: UnsafeMutablePointer<CChar>? = nil
        #expect(na_client_new(config.serialized(), &handle, &error) == NA_OK)
        na_string_free(error)
        nonisolated(unsafe) let client = try #require(handle)  // a handle: any thread may pass it, even freed
        let request = JSONValue.object(["method": "GET", "url": .string(h.todoURL)]).serialized()
        let answers = Mutex<[(rc: Int32, text: String)]>([])
        let started = Mutex(0)
        onThreads(9) { t in
            if t == 8 {
                // The freeing thread waits until every signer has signed at least once.
                while started.withLock({ $0 }) < 8 { sched_yield() }
                na_client_free(client)
                return
            }
            var signed = false
            while true {
                var out: UnsafeMutablePointer<CChar>? = nil
                let rc = na_dpop_proof(client, request, &out)
                let text = out.map { String(cString: $0) } ?? ""
                na_string_free(out)
                answers.withLock { $0.append((rc, text)) }
                if !signed {
                    signed = true
                    started.withLock { $0 += 1 }
                }
                if rc != NA_OK { return }
            }
        }
        let all = answers.withLock { $0 }
        var proofs = 0
        for (rc, text) in all {
            let doc = try JSONValue.parse(text)
            if rc == NA_OK {
                #expect(try DPoPHarness.thumbprint(ofProof: try #require(doc["proof"]?.stringValue)) == jkt)
                proofs += 1
            } else {
                #expect(rc == NA_EINVAL && doc.errorCode == "invalid_handle", "\(doc)")
            }
        }
        #expect(proofs >= 8)
    }
}

/// Runs `body` on `count` threads of their own at once (not a dispatch queue's pool, which on a small machine runs
/// them a few at a time), and returns when every one has.
private func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for t in 0..<count {
        group.enter()
        Thread {
            body(t)
            group.leave()
        }.start()
    }
    group.wait()
}
