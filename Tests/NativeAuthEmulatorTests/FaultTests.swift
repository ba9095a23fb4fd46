import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthNet
import Testing

/// A client of its own: a fresh connection, so libcurl cannot silently re-send a request whose reused connection died
/// before an answer (which would present the refresh token a second time).
func freshClient(_ h: Harness, timeoutMs: Int = 15_000) -> CurlHTTPClient {
    var o = HTTPClientOptions()
    o.caBundlePath = h.server.caFile
    o.totalTimeoutMs = timeoutMs
    return CurlHTTPClient(options: o)
}

func refreshRequest(_ h: Harness, _ rt: String) -> HTTPRequest {
    .form(
        url: h.authority + "/oauth2/v2.0/token",
        fields: [
            ("client_id", h.clientID), ("grant_type", "refresh_token"), ("refresh_token", rt),
            ("scope", "openid offline_access"),
        ]
    )
}

@Suite struct FaultStageTests {
    @Test func afterDropTheServiceHasIssuedAndRotated() async throws {
        try await withEmulator { h in
            let rt1 = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/token", "stage": "after", "drop": true])
            await #expect(throws: HTTPError.self) {
                _ = try await h.send(refreshRequest(h, rt1), client: freshClient(h))
            }
            var c = try await h.control("GET", "counters")
            #expect(c["refresh_grants"] == 1 && c["tokens_issued"] == 2)  // rotated, though nobody got the answer
            let entry = try #require(try await h.control("GET", "requests?path=/token")["requests"]?.arrayValue?.last)
            #expect(entry["status"] == 0 && entry["handled_status"] == 200 && entry["fault"] == "drop (after)")
            // A client that presents rt1 again is caught.
            #expect(try await h.send(refreshRequest(h, rt1))["error_codes"] == [50173])
            c = try await h.control("GET", "counters")
            #expect(c["refresh_token_presented_twice"] == 1 && c["refresh_token_reuse_detected"] == 1)
        }
    }

    @Test func beforeDropTheServiceNeverSawIt() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/token", "drop": true])
            await #expect(throws: HTTPError.self) {
                _ = try await h.send(refreshRequest(h, rt), client: freshClient(h))
            }
            let c = try await h.control("GET", "counters")
            #expect(c["refresh_grants"] == nil && c["refresh_token_presentations"] == nil)
            #expect(try await h.send(refreshRequest(h, rt)).status == 200)  // rt is still good
        }
    }

    @Test func afterDelayTheAnswerComesTooLate() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/oauth2/v2.0/token", "stage": "after", "delay_ms": 3000]
            )
            do {
                _ = try await h.send(refreshRequest(h, rt), client: freshClient(h, timeoutMs: 300))
                Issue.record("expected a timeout")
            } catch let e as HTTPError {
                #expect(e.kind == .timeout)
            }
            #expect(try await h.waitForCounter("refresh_grants", 1))  // handled before the delay
        }
    }

    @Test func afterHoldTheAnswerWaitsForTheRelease() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            let added = try await h.control(
                "POST",
                "faults",
                ["path": "/oauth2/v2.0/token", "stage": "after", "hold": true]
            )
            #expect(added["fault"]?["hold"] == true)
            #expect(try await h.control("POST", "faults/release")["released"] == 0)  // nothing held yet
            async let answer = h.send(refreshRequest(h, rt), client: freshClient(h))
            // Handled (rotated) first, then held: as long as the test needs, with no guessed delay.
            #expect(try await h.waitForCounter("refresh_grants", 1))
            let deadline = Date().addingTimeInterval(10)
            while try await h.control("GET", "faults")["held"] != 1 && Date() < deadline { await Task.yield() }
            #expect(try await h.control("GET", "faults")["held"] == 1)
            #expect(try await h.control("POST", "faults/release")["released"] == 1)
            let r = try await answer
            #expect(r.status == 200 && r["refresh_token"] != nil)
            #expect(try await h.control("GET", "faults")["held"] == 0)
            let entry = try #require(try await h.control("GET", "requests?path=/token")["requests"]?.arrayValue?.last)
            #expect(entry["fault"] == "hold (after)")
        }
    }

    @Test func afterStatusAnswersOverTheServicesAnswer() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/oauth2/v2.0/token", "stage": "after", "status": 503, "retry_after": 1]
            )
            let r = try await h.send(refreshRequest(h, rt))
            #expect(
                r.status == 503 && r["error"] == "temporarily_unavailable" && r.response.header("retry-after") == "1"
            )
            #expect(try await h.control("GET", "counters")["refresh_grants"] == 1)
            let entry = try #require(try await h.control("GET", "requests?path=/token")["requests"]?.arrayValue?.last)
            #expect(entry["status"] == 503 && entry["handled_status"] == 200)
            #expect(try await h.send(refreshRequest(h, rt))["error_codes"] == [50173])  // it was rotated
        }
    }
}

@Suite struct FaultAnswerTests {
    let discovery = "/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration"
    let jwks = "/contoso.onmicrosoft.com/discovery/v2.0/keys"

    @Test func contentTypeOverride() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "faults", ["path": "/openid-configuration", "content_type": "text/plain"])
            let plain = try await h.get(discovery)
            #expect(
                plain.status == 200 && plain.response.header("content-type") == "text/plain" && plain["issuer"] != nil
            )
            _ = try await h.control("POST", "faults", ["path": "/openid-configuration", "content_type": ""])
            #expect(try await h.get(discovery).response.header("content-type") == nil)
        }
    }

    @Test func htmlPagesAsAProxyWouldAnswer() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "html": true])
            let page = try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": Harness.types])
            #expect(page.status == 502 && page.response.header("content-type")?.hasPrefix("text/html") == true)
            #expect(page.text.contains("<h1>502 Bad Gateway</h1>") && page.json == .null)
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "html": true, "status": 403])
            #expect(
                try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": Harness.types]).text
                    .contains("403 Forbidden")
            )
            // After the service: its status, an HTML body (a captive portal's 200).
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/openid-configuration", "html": true, "stage": "after"]
            )
            let portal = try await h.get(discovery)
            #expect(portal.status == 200 && portal.text.hasPrefix("<html>"))
            let log = try #require(try await h.control("GET", "requests")["requests"]?.arrayValue)
            #expect(log.map { $0["fault"]?.stringValue ?? "" } == ["html", "status+html", "html (after)"])
        }
    }

    @Test func bodiesOfAnySize() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/token", "body_bytes": 2_097_152])
            let big = try await h.passwordSignIn(ann.0, ann.1)
            #expect(big.response.body.count == 2 << 20 && big.status == 200)
            #expect(big["access_token"] != nil && big.string["_padding"]?.count ?? 0 > 2_000_000)  // still valid JSON
            _ = try await h.control("POST", "faults", ["path": "/discovery/v2.0/keys", "body_bytes": 10])
            #expect(try await h.get(jwks).response.body.count == 10)  // cut short
            _ = try await h.control("POST", "faults", ["path": "/api/notes", "html": true, "body_bytes": 5000])
            let page = try await h.get("/api/notes")
            #expect(page.response.body.count == 5000 && page.text.hasSuffix("   "))
            _ = try await h.control("POST", "faults", ["path": "/api/notes", "status": 200, "body": "not { json"])
            #expect(try await h.get("/api/notes").text == "not { json")
            _ = try await h.control("POST", "faults", ["path": "/api/notes", "body": [], "body_bytes": 40])
            let padded = try await h.get("/api/notes")
            #expect(padded.response.body.count == 40 && padded.json == [])
        }
    }

    @Test func retryAfterVerbatimAndCounts() async throws {
        try await withEmulator { h in
            let date = "Wed, 21 Oct 2015 07:28:00 GMT"
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/api/todolist", "status": 429, "retry_after": .string(date), "count": 100_000]
            )
            let faults = try await h.control("GET", "faults")
            #expect(faults["faults"]?.arrayValue?.first?["remaining"] == 100_000)
            for _ in 0..<3 {
                let r = try await h.get("/api/todolist")
                #expect(r.status == 429 && r.response.header("retry-after") == date)
            }
            #expect(try await h.control("GET", "faults")["faults"]?.arrayValue?.first?["remaining"] == 99_997)
            _ = try await h.control("DELETE", "faults")
            #expect(try await h.get("/api/todolist").status == 401)
            let refused: [JSONValue] = [
                ["path": "/x", "count": 100_001], ["path": "/x", "stage": "later"], ["path": "/x", "retry_after": -1],
                ["path": "/x", "retry_after": "a\r\nb"], ["path": "/x", "html": true, "body": [:]],
                ["path": "/x", "trickle": 5], ["path": ""], ["path": "/x", "body_bytes": 1_073_741_824],
            ]
            for bad in refused {
                #expect(try await h.control("POST", "faults", bad).status == 400, "\(bad)")
            }
        }
    }

    @Test func faultsOnEveryKindOfPath() async throws {
        try await withEmulator { h in
            let token = try #require(
                try await h.passwordSignIn(ann.0, ann.1, scope: "\(notesRead) openid").string["access_token"]
            )
            let auth = [(name: "Authorization", value: "Bearer \(token)")]
            let gets = [discovery, jwks, "/api/todolist", "/api/notes"]
            for path in gets {
                _ = try await h.control("POST", "faults", ["path": .string(path), "status": 503])
                #expect(try await h.get(path, headers: auth).status == 503, "\(path)")
            }
            let posts = [
                "/oauth2/v2.0/token", "/oauth2/v2.0/initiate", "/signup/v1.0/start", "/resetpassword/v1.0/start",
            ]
            for path in posts {
                _ = try await h.control("POST", "faults", ["path": .string(path), "status": 500])
                #expect(try await h.post(path, ["username": ann.0]).status == 500, "\(path)")
            }
            #expect(try await h.get("/api/notes", headers: auth).status == 200)
            #expect(try await h.get(discovery).status == 200)
            #expect(try await h.control("GET", "faults")["faults"]?.arrayValue?.isEmpty == true)
        }
    }
}

@Suite struct FaultDeliveryTests {
    let discovery = "/contoso.onmicrosoft.com/v2.0/.well-known/openid-configuration"

    @Test func aSlowTrickle() async throws {
        try await withEmulator { h in
            let normal = try await h.get(discovery)
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/openid-configuration", "trickle_ms": 20, "chunk_bytes": 100]
            )
            let started = Date()
            let slow = try await h.get(discovery)
            let chunks = (normal.response.body.count + 99) / 100
            #expect(slow.response.body == normal.response.body && chunks > 5)
            #expect(Date().timeIntervalSince(started) >= Double(chunks - 1) * 0.02)
        }
    }

    @Test(arguments: [false, true]) func aResetMidAnswer(tls: Bool) async throws {
        try await withEmulator(tls: tls) { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/oauth2/v2.0/token", "stage": "after", "reset_after_bytes": 100]
            )
            do {
                _ = try await h.send(refreshRequest(h, rt), client: freshClient(h))
                Issue.record("expected a reset")
            } catch let e as HTTPError {
                #expect(e.kind == .network)
                // libcurl's receive error (a reset), not its "transfer closed with bytes remaining" (an orderly close)
                #expect(e.message.contains("receiving data"), "\(e.message)")
            }
            #expect(try await h.control("GET", "counters")["refresh_grants"] == 1)
            let entry = try #require(try await h.control("GET", "requests?path=/token")["requests"]?.arrayValue?.last)
            #expect(entry["fault"] == "reset (after)" && entry["status"] == 200)
        }
    }

    @Test func truncatedAfterTheService() async throws {
        try await withEmulator { h in
            let rt = try #require(try await h.passwordSignIn(ann.0, ann.1).string["refresh_token"])
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/token", "truncate": true])
            do {
                _ = try await h.send(refreshRequest(h, rt), client: freshClient(h))
                Issue.record("expected a truncated answer")
            } catch let e as HTTPError {
                #expect(e.kind == .network && !e.message.contains("receiving data"), "\(e.message)")
            }
            #expect(try await h.control("GET", "counters")["refresh_grants"] == 1)
        }
    }
}
