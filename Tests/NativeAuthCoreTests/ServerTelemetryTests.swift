import NativeAuthHTTP
import NativeAuthTestSupport
import Testing

@testable import NativeAuthCore

/// Server telemetry (MSAL's `x-client-current-telemetry` / `x-client-last-telemetry`): the last-request header's
/// format and bounds, and the headers of the standard grants, which the emulator tests cannot reach one by one.
@Suite struct ServerTelemetryTests {
    static func server(_ transport: FakeTransport, type: AuthorityType? = nil) throws -> ServerAPI {
        let config = ClientConfiguration(
            authority: try Authority("https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
            clientID: "00001111-aaaa-2222-bbbb-3333cccc4444",
            authorityType: type
        )
        return ServerAPI(configuration: config, transport: transport, clock: FakeClock(), logger: Logger())
            .with(correlationID: "11111111-2222-3333-4444-555555555555")
    }

    static func json(_ text: String, status: Int = 200) -> FakeTransport.Responder {
        { _, _ in
            .success(
                HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8))
            )
        }
    }

    static let tokens = #"{"access_token":"at","token_type":"Bearer","expires_in":3600}"#

    static func header(_ r: HTTPRequest?, _ name: String) -> String? {
        r?.headers.first(where: { $0.name.lowercased() == name })?.value
    }

    @Test("failures since the last success, oldest first, the newest kept within 350 bytes; odd text made safe")
    func lastRequestHeader() {
        let t = ServerTelemetry()
        #expect(t.lastHeader == "4|0|||")
        t.failed(.nativeToken, correlationID: "c-1", error: "invalid_grant")
        #expect(t.lastHeader == "4|0|75002,c-1|invalid_grant|")
        t.failed(.signInChallenge, correlationID: "c|2,x", error: "a b")
        #expect(t.lastHeader == "4|0|75002,c-1,74002,c_2_x|invalid_grant,a_b|")
        t.succeeded()
        #expect(t.lastHeader == "4|0|||")
        t.failed(.refreshToken, correlationID: "c", error: String(repeating: "e", count: 500))
        #expect(t.failures.first?.error.count == ServerTelemetry.maxErrorLength)
        for i in 0..<100 { t.failed(.resetPoll, correlationID: "corr-\(i)", error: "err_\(i)") }
        #expect(t.lastHeader.utf8.count <= ServerTelemetry.lastHeaderLimit)
        #expect(t.lastHeader.hasSuffix("err_99|") && t.failures.last?.correlationID == "corr-99")
        t.failed(.resetPoll, correlationID: "", error: "")
        #expect(t.failures.last?.error == "unknown")
        // A hostile server's error code cannot split the header or add one.
        t.failed(.resetPoll, correlationID: "c", error: "x\r\nSet-Cookie: a=b|é")
        #expect(t.failures.last?.error == "x__Set-Cookie__a_b__")
        #expect(t.lastHeader.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7f })
    }

    @Test("the standard grants: browser code 167, device code 622 (pending polls are not failures), refresh 75002,1")
    func standardGrants() throws {
        let transport = FakeTransport()
        let server = try Self.server(transport)
        let endpoint = "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/oauth2/v2.0/token"
        transport.on(
            "/oauth2/v2.0/token",
            Self.json(#"{"error":"authorization_pending"}"#, status: 400),
            Self.json(#"{"error":"invalid_grant","error_codes":[70000]}"#, status: 400),
            Self.json(Self.tokens)
        )
        guard case .pending = try server.pollDeviceCode(endpoint: endpoint, deviceCode: Secret("d")) else {
            Issue.record("the first poll is pending")
            return
        }
        #expect(throws: NativeAuthError.self) {
            try server.redeemCode(
                endpoint: endpoint,
                code: Secret("c"),
                verifier: Secret("v"),
                redirectURI: "http://localhost",
                scopes: []
            )
        }
        _ = try server.refresh(endpoint: endpoint, refreshToken: RefreshToken(Secret("rt")), scopes: [], claims: nil)
        let sent = transport.requests.map { r in
            (Self.header(r, "x-client-current-telemetry") ?? "-", Self.header(r, "x-client-last-telemetry") ?? "-")
        }
        #expect(sent.map(\.0) == ["4|622,0|", "4|167,0|", "4|75002,1|"])
        #expect(sent.map(\.1) == ["4|0|||", "4|0|||", "4|0|167,11111111-2222-3333-4444-555555555555|invalid_grant|"])
        #expect(server.telemetry.lastHeader == "4|0|||")  // the refresh succeeded
    }

    @Test("a request that got no answer counts by the library's code; a cancel does not; other providers get none")
    func failuresWithoutAnswersAndOtherProviders() throws {
        let transport = FakeTransport()
        let server = try Self.server(transport)
        let endpoint = "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/oauth2/v2.0/token"
        transport.on("/oauth2/v2.0/token", { _, _ in .failure(HTTPError(.timeout, "slow")) })
        #expect(throws: NativeAuthError.self) {
            try server.refresh(endpoint: endpoint, refreshToken: RefreshToken(Secret("rt")), scopes: [], claims: nil)
        }
        #expect(server.telemetry.failures.map(\.error) == ["timeout"])
        transport.on("/oauth2/v2.0/token", { _, _ in .failure(HTTPError(.cancelled, "cancelled")) })
        #expect(throws: NativeAuthError.self) {
            try server.refresh(endpoint: endpoint, refreshToken: RefreshToken(Secret("rt")), scopes: [], claims: nil)
        }
        #expect(server.telemetry.failures.count == 1)

        let oidcTransport = FakeTransport()
        let oidc = try Self.server(oidcTransport, type: .oidc)
        oidcTransport.on("/token", Self.json(Self.tokens))
        _ = try oidc.refresh(endpoint: endpoint, refreshToken: RefreshToken(Secret("rt")), scopes: [], claims: nil)
        #expect(oidcTransport.requests.count == 1)
        #expect(Self.header(oidcTransport.requests.first, "x-client-current-telemetry") == nil)
        #expect(Self.header(oidcTransport.requests.first, "x-client-last-telemetry") == nil)
    }
}
