import NativeAuthHTTP
import NativeAuthTestSupport
import Testing

@testable import NativeAuthCore

/// The app's `request_headers` go to the authority's origin only: not to another origin a discovery document names,
/// not to APIs (sent by `callAPI` through its own transport).
@Suite struct RequestHeadersTests {
    static func server(_ transport: FakeTransport) throws -> ServerAPI {
        var config = ClientConfiguration(
            authority: try Authority("https://contoso.ciamlogin.com/contoso.onmicrosoft.com"),
            clientID: "00001111-aaaa-2222-bbbb-3333cccc4444"
        )
        config.requestHeaders = [RequestHeader(name: "x-fraud", value: "client")]
        var server = ServerAPI(configuration: config, transport: transport, clock: FakeClock(), logger: Logger())
        server.flowHeaders = [RequestHeader(name: "X-Flow", value: "flow"), RequestHeader(name: "X-FRAUD", value: "f")]
        return server
    }

    @Test("the authority's origin gets them (a flow's replacing the client's of the same name); others never")
    func origins() throws {
        let transport = FakeTransport()
        let server = try Self.server(transport)
        for url in [
            "https://contoso.ciamlogin.com/contoso.onmicrosoft.com/oauth2/v2.0/token",
            "https://login.microsoftonline.com/tenant/oauth2/v2.0/token",  // another origin (discovery may name it)
            "https://contoso.ciamlogin.com:8443/contoso.onmicrosoft.com/x",  // another port
            "http://contoso.ciamlogin.com/contoso.onmicrosoft.com/x",  // another scheme
        ] {
            _ = try? server.send(HTTPRequest(method: "GET", url: url), name: "test", resendable: false)
        }
        let sent = transport.requests.map { r in r.headers.filter { $0.name.lowercased().hasPrefix("x-") } }
        #expect(sent.count == 4)
        #expect(sent[0].map { "\($0.name)=\($0.value)" } == ["X-Flow=flow", "X-FRAUD=f"])
        for other in sent.dropFirst() { #expect(other.isEmpty) }
    }
}
