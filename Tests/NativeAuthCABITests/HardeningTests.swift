import Foundation
import NativeAuthCore
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthTestSupport
import Synchronization
import Testing

@testable import NativeAuthCABI

/// Findings of the security review that need no server: each test failed before its fix.
@Suite struct HardeningTests {
    private func client() throws -> OpaquePointer? {
        var h: OpaquePointer? = nil
        var err: UnsafeMutablePointer<CChar>? = nil
        defer { na_string_free(err) }
        guard
            na_client_new(#"{"authority":"http://127.0.0.1:9/contoso.onmicrosoft.com","client_id":"c1"}"#, &h, &err)
                == 0
        else { throw TestFailure("client") }
        return h
    }

    private func call(
        _ op: (OpaquePointer?, UnsafePointer<CChar>?, OutString?) -> Int32,
        _ h: OpaquePointer?,
        _ bytes: [UInt8]
    ) -> (Int32, String) {
        var out: UnsafeMutablePointer<CChar>? = nil
        let rc = (bytes + [0]).withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { op(h, $0, &out) }
        }
        defer { na_string_free(out) }
        return (rc, out.map { String(cString: $0) } ?? "")
    }

    /// Finding 1: an invalid request document never has its text quoted back (a password with a stray quote or
    /// invalid UTF-8 would end up in the app's logs).
    @Test func errorsAboutADocumentNeverQuoteIt() throws {
        let h = try client()
        defer { na_client_free(h) }
        let documents: [[UInt8]] = [
            Array(#"{"username":"a@b.c","password":"sup3r"s3cretP4ss"}"#.utf8),
            Array(#"{"username":"a@b.c","password":"sup3rs3cret"#.utf8),
            Array(#"{"username":"a@b.c","password":"sup3r"#.utf8) + [0xff, 0xfe] + Array(#"s3cretP4ss"}"#.utf8),
            Array(#"{"username":"a@b.c","password":"sup3rs3cretP4ss",}"#.utf8),
            Array(#"{"username":"a@b.c" "password":"sup3rs3cretP4ss"}"#.utf8),
        ]
        for doc in documents {
            let (rc, out) = call(na_sign_in, h, doc)
            #expect(rc == NA_EINVAL)
            #expect(out.contains("invalid_argument") && out.contains("line 1"), "\(out)")
            for fragment in ["sup3r", "s3cret", "P4ss"] { #expect(!out.contains(fragment), "\(out)") }
        }
    }

    /// Finding 4: a document nested 2,000 deep (under jansson's own limit) is refused without recursing on a
    /// thread with a 256 KiB stack; deeper JSON never reaches a recursive serialiser.
    @Test func deepDocumentsOnASmallStack() throws {
        let h = try client()
        defer { na_client_free(h) }
        let done = Mutex<(Int32, String)?>(nil)
        let deep =
            Array(#"{"claims":"#.utf8) + [UInt8](repeating: UInt8(ascii: "["), count: 2000)
            + [UInt8](repeating: UInt8(ascii: "]"), count: 2000) + Array("}".utf8)
        let handle = UInt(bitPattern: Int(bitPattern: h))
        let t = Thread {
            done.withLock { $0 = self.call(na_get_access_token, OpaquePointer(bitPattern: handle), deep) }
        }
        t.stackSize = 256 * 1024
        t.start()
        while done.withLock({ $0 }) == nil { usleep(1000) }
        let (rc, out) = try #require(done.withLock { $0 })
        #expect(rc == NA_EINVAL && out.contains("deeper than 64"), "\(out)")
        // The conversion itself is iterative: 100,000 levels inside jansson's limit would not exhaust a stack
        // either (jansson refuses beyond 2,048 — an error, not a crash).
        let veryDeep = String(repeating: "[", count: 2000) + String(repeating: "]", count: 2000)
        let value = try JSONValue.parse(veryDeep)
        var depth = 0
        var v = value
        while case .array(let items) = v, let first = items.first {
            depth += 1
            v = first
        }
        #expect(depth == 1999)
    }

    /// Finding 12: na_call_api refuses headers that frame or route the request, control characters in values, and
    /// TRACE/CONNECT, naming the field — before any token is fetched.
    @Test func callAPIRefusesSmugglingHeadersAndMethods() throws {
        let h = try client()
        defer { na_client_free(h) }
        let url = #""url":"https://api.contoso.com/x","scopes":["api://a/r"]"#
        let cases: [(String, String)] = [
            (#"{\#(url),"headers":{"Content-Length":"5"}}"#, "headers.Content-Length"),
            (#"{\#(url),"headers":{"transfer-encoding":"chunked"}}"#, "headers.transfer-encoding"),
            (#"{\#(url),"headers":{"Host":"evil.example"}}"#, "headers.Host"),
            (#"{\#(url),"headers":{"Connection":"close"}}"#, "headers.Connection"),
            (#"{\#(url),"headers":{"X-A":"1\r\nX-Injected: 2"}}"#, "headers.X-A"),
            (#"{\#(url),"headers":{"X-A":"1\nX"}}"#, "headers.X-A"),
            // Every control character but tab (RFC 9110 §5.5), as the configuration's request_headers refuse them.
            (#"{\#(url),"headers":{"X-A":"a\u007fb"}}"#, "headers.X-A"),
            (#"{\#(url),"headers":{"X-A":"a\u001b[31m"}}"#, "headers.X-A"),
            (#"{\#(url),"headers":{"X-A":"a\u000bb"}}"#, "headers.X-A"),
            (#"{\#(url),"headers":{"X-A":"\#(String(repeating: "v", count: 8193))"}}"#, "headers.X-A"),
            (#"{\#(url),"headers":{"Bad Name":"1"}}"#, "headers"),  // an invalid name is not quoted back
            (#"{\#(url),"headers":{"Authorization":"Bearer x"}}"#, "headers.Authorization"),
            (#"{\#(url),"method":"TRACE"}"#, "method"),
            (#"{\#(url),"method":"connect"}"#, "method"),
        ]
        for (doc, field) in cases {
            let (rc, out) = call(na_call_api, h, Array(doc.utf8))
            let parsed = try JSONValue.parse(out)
            #expect(rc == NA_EINVAL && parsed["error"]?["field"] == .string(field), "\(doc) → \(out)")
        }
    }

    /// Finding 11: a waiter for someone else's refresh never waits past its deadline.
    @Test func waitingForASharedRefreshHasADeadline() throws {
        let t = FakeTransport()
        let clock = FakeClock()
        let config = ClientConfiguration(
            authority: try Authority("https://contoso.ciamlogin.com"),
            clientID: "c1",
            requestTimeoutMs: 200
        )
        t.on("/oauth2/v2.0/initiate", { _, _ in json(["continuation_token": "CT1"]) })
        t.on("/oauth2/v2.0/challenge", { _, _ in json(["continuation_token": "CT2", "challenge_type": "password"]) })
        t.on("/.well-known/openid-configuration", { _, _ in json([:], status: 404) })
        let release = Mutex(false)
        t.on(
            "/oauth2/v2.0/token",
            { _, _ in json(tokenResponse("api://a/r", at: "A1", rt: "RT1")) },
            { _, _ in
                while !release.withLock({ $0 }) { usleep(1000) }  // a refresh that hangs until released
                return json(tokenResponse("api://b/r", at: "B1", rt: "RT2"))
            }
        )
        let c = try NativeAuthClient(configuration: config, transport: t, clock: clock)
        _ = try c.signIn(SignInRequest(username: "u@x.com", password: "p", scopes: ["api://a/r"], claims: nil))
        let first = Mutex<Result<TokenResult, NativeAuthError>?>(nil)
        let request = try TokenRequest(scopes: ["api://b/r"], forceRefresh: false, claims: nil)
        let hanging = Thread {
            first.withLock { $0 = Result { () throws(NativeAuthError) in try c.accessToken(request) } }
        }
        hanging.start()
        while t.count("/oauth2/v2.0/token") < 2 { usleep(1000) }
        let started = Date()
        #expect(throws: NativeAuthError.self) { try c.accessToken(request) }  // waits at most 2 × 200 ms
        #expect(Date().timeIntervalSince(started) < 5)
        release.withLock { $0 = true }
        while first.withLock({ $0 }) == nil { usleep(1000) }
    }
}

private let NA_EINVAL = NAStatus.invalidArgument.rawValue
