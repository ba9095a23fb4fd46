import Foundation
import NativeAuthHTTP
import NativeAuthNet
import NativeAuthTestSupport
import Testing

private func client(_ configure: (inout HTTPClientOptions) -> Void = { _ in }) -> CurlHTTPClient {
    var o = HTTPClientOptions()
    o.defaultHeaders = [("x-client-SKU", "NativeAuth.Linux"), ("x-client-Ver", "0.1.0")]
    configure(&o)
    return CurlHTTPClient(options: o)
}

@Suite struct FormEncodingTests {
    @Test func encodesSpacesPlusAndUnicode() {
        let body = FormEncoding.encode([
            ("scope", "openid profile"), ("password", "a+b&c=d%"), ("name", "Zoë ✓"), ("k", ""),
        ])
        #expect(body == "scope=openid+profile&password=a%2Bb%26c%3Dd%25&name=Zo%C3%AB+%E2%9C%93&k=")
    }

    @Test func decodeAcceptsPlusAndPercent20() throws {
        let fields = try #require(FormEncoding.decode("scope=openid+profile%20email&x=a%2Bb&empty="))
        #expect(fields.map { $0.0 } == ["scope", "x", "empty"])
        #expect(fields.map { $0.1 } == ["openid profile email", "a+b", ""])
        #expect(FormEncoding.decode("a=%zz") == nil)
        #expect(FormEncoding.decode("a=%ff") == nil)  // not UTF-8
    }
}

@Suite struct URLPolicyTests {
    @Test func parsesAndNormalises() throws {
        let u = try HTTPURL("HTTPS://Contoso.CIAMlogin.com:8443/contoso.onmicrosoft.com/?x=1#frag")
        #expect(u.scheme == "https" && u.host == "contoso.ciamlogin.com" && u.port == 8443)
        #expect(u.path == "/contoso.onmicrosoft.com/" && u.query == "x=1")
        #expect(try HTTPURL("http://[::1]:80/a").isLoopback)
        // only the canonical spellings count: the cleartext rule and the proxy bypass agree on exactly three names
        #expect(try !HTTPURL("http://127.1.2.3/").isLoopback)
        #expect(try !HTTPURL("http://127.0.0.08/").isLoopback)
        #expect(try !HTTPURL("http://[0:0:0:0:0:0:0:1]/").isLoopback)
        #expect(try HTTPURL("http://127.0.0.1:8080/").isLoopback)
        #expect(try HTTPURL("http://localhost").isLoopback)
        #expect(try !HTTPURL("http://127.0.0.1.evil.com/").isLoopback)
        #expect(try !HTTPURL("http://10.0.0.1/").isLoopback)
    }

    @Test(arguments: [
        "ftp://x/", "https://user:pw@host/", "https://ho st/", "https://host:0/", "https://host:99999/",
        "https:///path", "//host/x", "https://[::1/", "https://hé.com/", "https://host/\u{0}",
    ])
    func refusesBadURLs(text: String) {
        #expect(throws: HTTPURL.ParseError.self) { try HTTPURL(text) }
    }

    @Test func plainHTTPOnlyToLoopback() {
        let c = client()
        #expect(throws: HTTPError(.invalidURL, "plain http is allowed only to loopback hosts, not example.com")) {
            try c.send(HTTPRequest(url: "http://example.com/x"))
        }
    }
}

@Suite struct CurlTransportTests {
    @Test func formPostSendsBodyAndHeaders() throws {
        let server = try TestHTTPServer { _ in .json(#"{"ok":true}"#) }
        defer { server.stop() }
        let c = client()
        let r = try c.send(
            .form(
                url: server.baseURL + "/t/oauth2/v2.0/initiate",
                fields: [("username", "ann+test@contoso.com"), ("challenge_type", "oob password redirect")],
                headers: [("Accept", "application/json")]
            )
        )
        #expect(r.status == 200)
        #expect(r.header("Content-Type") == "application/json")
        #expect(String(decoding: r.body, as: UTF8.self) == #"{"ok":true}"#)
        let req = try #require(server.requests.first)
        #expect(req.method == "POST" && req.target == "/t/oauth2/v2.0/initiate")
        #expect(req.bodyText == "username=ann%2Btest%40contoso.com&challenge_type=oob+password+redirect")
        #expect(req.header("content-type") == "application/x-www-form-urlencoded")
        #expect(req.header("x-client-SKU") == "NativeAuth.Linux")
        #expect(req.header("x-client-Ver") == "0.1.0")
        #expect(req.header("Expect") == nil)
        let id = try #require(req.header("client-request-id"))
        #expect(id.count == 36)
    }

    @Test func eachRequestGetsItsOwnRequestID() throws {
        let server = try TestHTTPServer { _ in .json("{}") }
        defer { server.stop() }
        let c = client()
        _ = try c.send(HTTPRequest(url: server.baseURL + "/a"))
        _ = try c.send(HTTPRequest(url: server.baseURL + "/b", headers: [("client-request-id", "fixed-id")]))
        let ids = server.requests.compactMap { $0.header("client-request-id") }
        #expect(ids.count == 2 && ids[0] != ids[1] && ids[1] == "fixed-id")
    }

    @Test func connectionIsReusedAcrossRequests() throws {
        let server = try TestHTTPServer { _ in .json("{}") }
        defer { server.stop() }
        let c = client()
        for i in 0..<3 {
            let r = try c.send(.form(url: server.baseURL + "/step\(i)", fields: [("i", "\(i)")]))
            #expect(r.status == 200)
        }
        #expect(server.connectionsAccepted == 1)
        #expect(Set(server.requests.map(\.connection)) == [1])
    }

    @Test func timeoutFiresWithinBound() throws {
        let server = try TestHTTPServer { _ in .reply(status: 200, headers: [], body: [], delayMs: 10_000) }
        defer { server.stop() }
        let c = client { $0.totalTimeoutMs = 300 }
        let start = Date()
        #expect(throws: HTTPError.self) { try c.send(HTTPRequest(url: server.baseURL + "/slow")) }
        do { _ = try c.send(HTTPRequest(url: server.baseURL + "/slow")) } catch { #expect(error.kind == .timeout) }
        // Two requests with a 300 ms budget each: far below the server's 10 s delay.
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test func oversizedResponseIsRefused() throws {
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 200_000)
        let server = try TestHTTPServer { _ in .reply(status: 200, headers: [], body: big, delayMs: 0) }
        defer { server.stop() }
        let c = client { $0.maxResponseBytes = 64 * 1024 }
        do {
            _ = try c.send(HTTPRequest(url: server.baseURL + "/big"))
            Issue.record("expected responseTooLarge")
        } catch {
            #expect(error.kind == .responseTooLarge)
        }
        // Just under the cap is fine.
        let ok = client { $0.maxResponseBytes = 200_000 }
        #expect(try ok.send(HTTPRequest(url: server.baseURL + "/big")).body.count == 200_000)
    }

    @Test func redirectsAreNotFollowed() throws {
        let server = try TestHTTPServer { req in
            req.target == "/start"
                ? .reply(status: 302, headers: [("Location", "/elsewhere")], body: [], delayMs: 0) : .json("{}")
        }
        defer { server.stop() }
        let r = try client().send(HTTPRequest(url: server.baseURL + "/start"))
        #expect(r.status == 302 && r.header("location") == "/elsewhere")
        #expect(server.requests.count == 1)
    }

    @Test func droppedConnectionIsANetworkError() throws {
        let server = try TestHTTPServer { _ in .drop }
        defer { server.stop() }
        do {
            _ = try client().send(HTTPRequest(url: server.baseURL + "/x"))
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .network)
        }
    }

    @Test func connectionRefusedIsAConnectError() {
        // Port 1 on loopback: privileged, nothing listens there in a test environment.
        do {
            _ = try client { $0.connectTimeoutMs = 2000 }.send(HTTPRequest(url: "http://127.0.0.1:1/x"))
            Issue.record("expected an error")
        } catch {
            #expect(error.kind == .connect)
        }
    }

    @Test func methodsAndCustomHeaders() throws {
        let server = try TestHTTPServer { _ in .json("[]") }
        defer { server.stop() }
        let c = client()
        _ = try c.send(
            HTTPRequest(method: "DELETE", url: server.baseURL + "/d", headers: [("Authorization", "Bearer abc")])
        )
        _ = try c.send(HTTPRequest(method: "PUT", url: server.baseURL + "/p", body: Array("{}".utf8)))
        let reqs = server.requests
        #expect(reqs.map(\.method) == ["DELETE", "PUT"])
        #expect(reqs[0].header("authorization") == "Bearer abc")
        #expect(reqs[1].bodyText == "{}")
        #expect(throws: HTTPError.self) {
            try c.send(HTTPRequest(url: server.baseURL + "/x", headers: [("X-Bad", "a\r\nInjected: 1")]))
        }
        #expect(throws: HTTPError.self) { try c.send(HTTPRequest(method: "G ET", url: server.baseURL + "/x")) }
    }

    @Test func concurrentRequestsOnOneClient() async throws {
        let server = try TestHTTPServer { req in .json("{\"path\":\"\(req.target)\"}") }
        defer { server.stop() }
        let c = client()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<16 {
                group.addTask { try c.send(HTTPRequest(url: server.baseURL + "/c\(i)")).status }
            }
            for try await status in group { #expect(status == 200) }
        }
        #expect(server.requests.count == 16)
    }
}

@Suite struct ForwarderTests {
    /// The tests' TCP forwarder refuses connections when told, and relays again on the same port.
    @Test func refusesAndResumes() throws {
        let server = try TestHTTPServer { _ in .json(#"{"ok":true}"#) }
        let forwarder = try TCPForwarder(to: UInt16(server.port))
        let client = CurlHTTPClient()
        let url = "http://127.0.0.1:\(forwarder.port)/x"
        for _ in 0..<30 {
            #expect(try client.send(HTTPRequest(url: url)).status == 200)
            forwarder.refuse()
            #expect(throws: HTTPError.self) { try client.send(HTTPRequest(url: url)) }
            try forwarder.resume()
            #expect(try client.send(HTTPRequest(url: url)).status == 200)
        }
    }
}
