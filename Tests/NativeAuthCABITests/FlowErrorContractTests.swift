import NativeAuthCore
import NativeAuthJSON
import NativeAuthTestSupport
import Testing

@testable import NativeAuthCABI

/// include/nativeauth.h: "Errors with a "flow" member leave the flow usable (retry: invalid_code, invalid_password,
/// …)". Reproducers for two answers that disagree with it, found by the fuzzer's "requests" target.
@Suite struct FlowErrorContractTests {
    private final class Client {
        let transport = FakeTransport()
        let handle: OpaquePointer?

        init() throws {
            transport.on("/oauth2/v2.0/initiate", { _, _ in json(["continuation_token": "CT1"]) })
            transport.on(
                "/oauth2/v2.0/challenge",
                { _, _ in json(["continuation_token": "CT2", "challenge_type": "password"]) }
            )
            transport.on("/oauth2/v2.0/token", { _, _ in json(tokenResponse("api://a/read", at: "AT1", rt: "RT1")) })
            let config = ClientConfiguration(authority: try Authority("https://contoso.ciamlogin.com"), clientID: "c1")
            let client = try NativeAuthClient(configuration: config, transport: transport, clock: FakeClock())
            handle = handles.insert(ClientBox(client))
        }

        deinit { na_client_free(handle) }

        func call(_ op: (OpaquePointer?, UnsafePointer<CChar>?, OutString?) -> Int32, _ request: String) -> JSONValue {
            var out: UnsafeMutablePointer<CChar>? = nil
            _ = op(handle, request, &out)
            defer { na_string_free(out) }
            return (try? JSONValue.parse(out.map { String(cString: $0) } ?? "")) ?? .null
        }
    }

    /// A code refused before the flow is looked up names the flow of the request, even one that does not exist
    /// (`{"flow":"f_unknown","code":""}` answers invalid_code with "flow":"f_unknown"); retrying it can only fail.
    @Test func anErrorNamesOnlyAFlowThatExists() throws {
        let c = try Client()
        let r = c.call(na_flow_submit, #"{"flow":"f_unknown","code":""}"#)
        #expect(r["error"]?["code"] != nil)
        #expect(r["error"]?["flow"] == nil, "an unknown flow is named as usable: \(r.serialized())")
    }

    /// An empty password is refused without touching the flow, which stays usable — but unlike an empty code the
    /// error does not name it, so an app that retries only errors with a "flow" starts the sign-in over.
    @Test func aRefusedEmptyPasswordNamesTheFlowItLeavesUsable() throws {
        let c = try Client()
        let start = c.call(na_sign_in, #"{"username":"u@x.com","scopes":["api://a/read"]}"#)
        let flow = try #require(start["flow"]?.stringValue)
        #expect(start["status"] == "password_required")
        let empty = c.call(na_flow_submit, #"{"flow":"\#(flow)","password":""}"#)
        #expect(empty["error"]?["code"] == "invalid_password")
        let retried = c.call(na_flow_submit, #"{"flow":"\#(flow)","password":"p"}"#)
        #expect(retried["status"] == "signed_in")  // the flow was usable…
        #expect(empty["error"]?["flow"]?.stringValue == flow, "…but the error did not say so: \(empty.serialized())")
    }
}
