import NativeAuthJSON
import Testing

@testable import NativeAuthCore

@Suite struct DeviceCodeFlowTests {
    func on(_ f: inout DeviceCodeFlow, _ e: FlowEvent, _ now: Double) -> FlowEffect { f.on(e, at: now) }

    static let metadata = OIDCMetadata(
        tokenEndpoint: "https://idp.example/token",
        issuer: "https://idp.example",
        deviceAuthorizationEndpoint: "https://idp.example/devicecode",
        userinfoEndpoint: "https://idp.example/userinfo"
    )
    static let authorization = DeviceAuthorization(
        deviceCode: Secret("dc"),
        userCode: "ABCD-EFGH",
        verificationURI: "https://idp.example/device",
        verificationURIComplete: nil,
        expiresIn: 600,
        interval: 5,
        message: nil
    )
    /// Started at t = 1000: the first poll may go at 1005, the code expires at 1600.
    static var started: [Step] {
        [
            step(.start, "send discovery", at: 1000), step(answer(.metadata(metadata)), "send deviceAuthorization"),
            step(answer(.deviceAuthorization(authorization)), "finish device_code_required", at: 1000),
        ]
    }

    static var cases: [(name: String, steps: [Step], ended: Bool)] {
        [
            (
                "polls at the interval, slows down by 5 s, and signs in",
                started + [
                    step(.action(.wait(timeoutMs: nil)), "wait 5.0", at: 1000),
                    step(.waited, "send pollDeviceCode", at: 1005),
                    step(answer(.devicePoll(.pending)), "wait 5.0", at: 1005),
                    step(.waited, "send pollDeviceCode", at: 1010),
                    step(answer(.devicePoll(.slowDown)), "wait 10.0", at: 1010),
                    step(.waited, "send pollDeviceCode", at: 1020),
                    step(answer(.devicePoll(.tokens(tokens()))), "store", at: 1020),
                    step(storedOK, "finish signed_in ended", at: 1020),
                ], true
            ),
            (
                "the call's own deadline comes first: the pending state again, flow intact",
                started + [
                    step(.action(.wait(timeoutMs: 7000)), "wait 5.0", at: 1000),
                    step(.waited, "send pollDeviceCode", at: 1005),
                    step(answer(.devicePoll(.pending)), "wait 2.0", at: 1005),
                    step(.waited, "finish device_code_required", at: 1007),
                ], false
            ),
            (
                "no ID token: the account comes from userinfo",
                started + [
                    step(.action(.wait(timeoutMs: nil)), "wait 5.0", at: 1000),
                    step(.waited, "send pollDeviceCode", at: 1005),
                    step(answer(.devicePoll(.tokens(tokens(idToken: nil)))), "send userinfo", at: 1005),
                    step(answer(.userinfo(["sub": "s"])), "store", at: 1005),
                    step(storedOK, "finish signed_in ended", at: 1005),
                ], true
            ),
            (
                "the user refuses",
                started + [
                    step(.action(.wait(timeoutMs: nil)), "wait 5.0", at: 1000),
                    step(.waited, "send pollDeviceCode", at: 1005),
                    step(answer(.devicePoll(.denied)), "fail access_denied", at: 1005),
                ], true
            ),
            (
                "a poll without a verdict keeps the flow; the code then expires",
                started + [
                    step(.action(.wait(timeoutMs: nil)), "wait 5.0", at: 1000),
                    step(.waited, "send pollDeviceCode", at: 1005),
                    step(failure(.network), "fail network kept", at: 1005),
                    step(.action(.wait(timeoutMs: nil)), "fail flow_expired", at: 1600),
                ], true
            ),
            (
                "a provider without device code",
                [
                    step(.start, "send discovery"),
                    step(
                        answer(.metadata(OIDCMetadata(tokenEndpoint: "https://idp.example/token", issuer: nil))),
                        "fail not_supported"
                    ),
                ], true
            ),
            (
                "only wait is possible",
                started + [step(.action(.submitCode(Secret("1"))), "fail flow_invalid kept")], false
            ),
        ]
    }

    @Test(arguments: cases.indices)
    func script(_ i: Int) {
        let c = Self.cases[i]
        var f = DeviceCodeFlow(scopes: ["openid"], state: .new)
        play(&f, c.steps, on)
        if case .ended = f.state { #expect(c.ended, "\(c.name)") } else { #expect(!c.ended, "\(c.name)") }
    }
}
