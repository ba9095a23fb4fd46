import Foundation
import NativeAuthCrypto
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthNet
import Testing

@Suite struct ProtectedAPITests {
    @Test func apisAcceptTheRightTokenAndRefuseOthers() async throws {
        try await withEmulator { h in
            let todo = try #require(
                try await h.passwordSignIn(ann.0, ann.1, scope: "\(todoRead) openid").string["access_token"]
            )
            let ok = try await h.get("/api/todolist", headers: [("Authorization", "Bearer \(todo)")])
            #expect(ok.status == 200 && ok["user"] == "ann@contoso.com" && ok["api"] == "ToDoList")
            // wrong audience
            let wrongAud = try await h.get("/api/notes", headers: [("Authorization", "Bearer \(todo)")])
            #expect(
                wrongAud.status == 401
                    && wrongAud.response.header("www-authenticate")?.contains("error=\"invalid_token\"") == true
            )
            // missing token, garbage token, tampered token
            #expect(try await h.get("/api/todolist").status == 401)
            #expect(try await h.get("/api/todolist", headers: [("Authorization", "Bearer abc.def.ghi")]).status == 401)
            var parts = todo.split(separator: ".").map(String.init)
            parts[1] = Base64.urlEncode(
                Array(
                    #"{"aud":"11112222-bbbb-3333-cccc-4444dddd5555","scp":"ToDoList.ReadWrite","exp":9999999999}"#.utf8
                )
            )
            #expect(
                try await h.get("/api/todolist", headers: [("Authorization", "Bearer \(parts.joined(separator: "."))")])
                    .status == 401
            )
            // read-only token cannot write
            let post = try await h.send(
                HTTPRequest(
                    method: "POST",
                    url: h.base + "/api/todolist",
                    headers: [("Authorization", "Bearer \(todo)"), ("Content-Type", "application/json")],
                    body: Array(#"{"title":"x"}"#.utf8)
                )
            )
            #expect(
                post.status == 403 && post.response.header("www-authenticate")?.contains("insufficient_scope") == true
            )
            // expiry
            _ = try await h.control("POST", "clock", ["advance_seconds": 3601])
            let expired = try await h.get("/api/todolist", headers: [("Authorization", "Bearer \(todo)")])
            #expect(expired.status == 401 && expired.string["error_description"]?.contains("expired") == true)
        }
    }
}

@Suite struct ControlTests {
    @Test func requestLogRedactsSecretsAndCountsConnections() async throws {
        try await withEmulator { h in
            _ = try await h.passwordSignIn(ann.0, ann.1)
            let log = try await h.control("GET", "requests")
            let entries = try #require(log["requests"]?.arrayValue)
            #expect(entries.count == 3)
            let text = log.text
            #expect(!text.contains(ann.1) && !text.contains("CT."))
            #expect(
                entries.last?["fields"]?["password"] == "***" && entries.last?["fields"]?["grant_type"] == "password"
            )
            #expect(entries.last?["headers"]?["x-client-sku"] != nil)
            let counters = try await h.control("GET", "counters")
            #expect((counters["connections"]?.intValue ?? 0) >= 1 && (counters["connections"]?.intValue ?? 0) <= 3)
            #expect(counters["tokens_issued"] == 1)
        }
    }

    @Test func injectedFaults() async throws {
        try await withEmulator { h in
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/oauth2/v2.0/initiate", "status": 503, "retry_after": 2, "count": 2]
            )
            let f1 = try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": Harness.types])
            #expect(f1.status == 503 && f1.response.header("retry-after") == "2" && f1["error"] != nil)
            #expect(
                try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": Harness.types]).status
                    == 503
            )
            #expect(
                try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": Harness.types]).status
                    == 200
            )
            // dropped connection and truncated body are transport errors for the client
            // (libcurl would resend a request whose reused connection died before answering; the transport's request
            // bodies cannot be rewound, so it does not: one fault, one failed request)
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "drop": true, "count": 1])
            await #expect(throws: HTTPError.self) {
                _ = try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": Harness.types])
            }
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "truncate": true])
            await #expect(throws: HTTPError.self) {
                _ = try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": Harness.types])
            }
            // a delay
            _ = try await h.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "delay_ms": 300])
            let start = Date()
            #expect(
                try await h.post("/oauth2/v2.0/initiate", ["username": ann.0, "challenge_type": Harness.types]).status
                    == 200
            )
            #expect(Date().timeIntervalSince(start) >= 0.3)
            // a custom body
            _ = try await h.control(
                "POST",
                "faults",
                ["path": "/token", "status": 400, "body": ["error": "invalid_grant", "error_codes": [50142]]]
            )
            let custom = try await h.post("/oauth2/v2.0/token", ["grant_type": "refresh_token", "refresh_token": "x"])
            #expect(custom["error_codes"] == [50142])
            let log = try await h.control("GET", "requests?path=/oauth2/v2.0/initiate")
            // one drop: the request is not resent by libcurl
            let kinds = log["requests"]?.arrayValue?.compactMap { $0["fault"]?.stringValue } ?? []
            #expect(kinds == ["status+retry_after", "status+retry_after", "drop", "truncate", "delay"])
        }
    }

    @Test func usersAndSettings() async throws {
        try await withEmulator { h in
            _ = try await h.control("POST", "users", ["email": "zed@contoso.com", "password": "Zed-Passw0rd!"])
            #expect(try await h.passwordSignIn("zed@contoso.com", "Zed-Passw0rd!").status == 200)
            _ = try await h.control("POST", "users", ["email": "zed@contoso.com", "mfa_email": "zed@fabrikam.com"])
            let r = try await h.passwordSignIn("zed@contoso.com", "Zed-Passw0rd!")
            #expect(r["suberror"] == "mfa_required")
            _ = try await h.control("POST", "settings", ["access_token_lifetime": 5, "otp_length": 6, "refresh_in": 2])
            let t = try await h.passwordSignIn(ann.0, ann.1)
            #expect(t["expires_in"] == 5 && t["refresh_in"] == 2)
            #expect(try await h.control("DELETE", "users/zed@contoso.com").status == 200)
            #expect(try await h.passwordSignIn(ann.0, ann.1).status == 200)
            _ = try await h.control("POST", "reset")
            #expect(try await h.control("GET", "requests")["requests"]?.arrayValue?.isEmpty == true)
            #expect(try await h.control("GET", "nope").status == 404)
            #expect(try await h.control("POST", "faults", ["count": 1]).status == 400)
        }
    }

    @Test func hostileRequestsNeverCrashTheServer() async throws {
        try await withEmulator { h in
            let bodies: [[UInt8]] = [
                [0xff, 0xfe, 0x00], Array("a=%zz&&&==".utf8), Array(repeating: UInt8(ascii: "a"), count: 300_000),
                Array("client_id=\u{0}&username=%00".utf8),
            ]
            for body in bodies {
                for path in [
                    "/oauth2/v2.0/initiate", "/oauth2/v2.0/token", "/signup/v1.0/continue", "/register/v1.0/challenge",
                ] {
                    let r = try await h.send(
                        HTTPRequest(
                            method: "POST",
                            url: h.authority + path,
                            headers: [("Content-Type", "application/x-www-form-urlencoded")],
                            body: body
                        )
                    )
                    #expect(r.status >= 400 && r.status < 500, "\(path) → \(r.status)")
                }
            }
            #expect(try await h.control("GET", "health")["ok"] == true)
        }
    }

    @Test func tlsMode() async throws {
        try await withEmulator(tls: true) { h in
            #expect(h.base.hasPrefix("https://127.0.0.1:"))
            #expect(h.server.caFile != nil)
            // GET /_emulator/info is the ready document, the CA file included.
            #expect(try await h.control("GET", "info")["ca_file"]?.stringValue == h.server.caFile)
            #expect(try await h.passwordSignIn(ann.0, ann.1).status == 200)
            // without the CA the handshake fails
            let untrusted = CurlHTTPClient(options: HTTPClientOptions())
            do {
                _ = try untrusted.send(HTTPRequest(url: h.base + "/"))
                Issue.record("expected TLS failure")
            } catch let e as HTTPError {
                #expect(e.kind == .tls)
            }
        }
    }
}

@Suite struct ControlTokenTests {
    @Test func controlsNeedTheReadyDocumentsToken() async throws {
        try await withEmulator { h in
            let token = try #require(h.server.readyDocument["control_token"]?.stringValue)
            #expect(Base64.decode(token)?.count == 32)  // 32 random bytes, base64url
            // No token, an empty one, a wrong one: 401 with a JSON error, and nothing happens.
            let zed: JSONValue = ["email": "zed@contoso.com", "password": "Zed-Passw0rd!"]
            let without = try await h.send(
                HTTPRequest(
                    method: "POST",
                    url: h.base + "/_emulator/users",
                    headers: [("Content-Type", "application/json")],
                    body: zed.serializedBytes() ?? []
                )
            )
            #expect(without.status == 401 && without["error"] == "unauthorized")
            #expect(try await h.control("POST", "users", zed, token: "").status == 401)
            var wrong = Array(token)
            wrong[0] = wrong[0] == "A" ? "B" : "A"
            #expect(try await h.control("POST", "users", zed, token: String(wrong)).status == 401)
            #expect(try await h.control("GET", "health", token: token + "x").status == 401)
            let initiate = try await h.post(
                "/oauth2/v2.0/initiate",
                ["username": "zed@contoso.com", "challenge_type": Harness.types]
            )
            #expect(initiate["error"] == "user_not_found")
            _ = try await h.control("POST", "settings", ["access_token_lifetime": 5], token: "nope")
            #expect(try await h.passwordSignIn(ann.0, ann.1)["expires_in"] == 3600)
            // With the token, it works.
            #expect(try await h.control("POST", "users", zed).status == 200)
            #expect(try await h.passwordSignIn("zed@contoso.com", "Zed-Passw0rd!").status == 200)
        }
    }

    @Test func everyEmulatorHasItsOwnToken() async throws {
        let a = try Emulator()
        let b = try Emulator()
        #expect(a.controlToken != b.controlToken)
        #expect(a.readyDocument(caFile: nil)["control_token"]?.stringValue == a.controlToken)
    }
}
