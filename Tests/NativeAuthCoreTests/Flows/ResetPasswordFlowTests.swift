import Testing

@testable import NativeAuthCore

@Suite struct ResetPasswordFlowTests {
    func flow() -> ResetPasswordFlow { ResetPasswordFlow(username: "ann@contoso.com", state: .new) }
    func on(_ f: inout ResetPasswordFlow, _ e: FlowEvent, _ now: Double) -> FlowEffect { f.on(e, at: now) }

    static var submitted: [Step] {
        [
            step(.start, "send resetStart"), step(answer(.continuation(ct("c1"))), "send resetChallenge"),
            step(answer(.codeChallenge(ct("c2"), aCode)), "finish code_required"),
            step(.action(.submitCode(Secret("1"))), "send resetContinue"),
            step(answer(.continuation(ct("c3"))), "finish password_required"),
            step(.action(.submitPassword(Secret("new"))), "send resetSubmit"),
        ]
    }

    static var cases: [(name: String, steps: [Step], ended: Bool)] {
        [
            (
                "polls at the server's interval until it succeeds, then signs in",
                submitted + [
                    step(answer(.resetSubmitted(ct("p1"), interval: 3)), "send resetPoll"),
                    step(answer(.resetPoll(.inProgress)), "wait 3.0"), step(.waited, "send resetPoll"),
                    step(answer(.resetPoll(.succeeded(ct("c4")))), "finish password_reset_completed"),
                    step(.action(.signIn(scopes: ["api"], claims: nil)), "send token(continuation)"),
                    step(answer(.token(.tokens(tokens()))), "store"), step(storedOK, "finish signed_in ended"),
                ], true
            ),
            (
                "an interval of 0 (or none) is 2 s, and more than 10 is 10",
                submitted + [
                    step(answer(.resetSubmitted(ct("p1"), interval: 0)), "send resetPoll"),
                    step(answer(.resetPoll(.inProgress)), "wait 2.0"), step(.waited, "send resetPoll"),
                ], false
            ),
            (
                "polling stops on failed",
                submitted + [
                    step(answer(.resetSubmitted(ct("p1"), interval: 60)), "send resetPoll"),
                    step(answer(.resetPoll(.inProgress)), "wait 10.0"), step(.waited, "send resetPoll"),
                    step(answer(.resetPoll(.failed)), "fail password_reset_failed"),
                ], true
            ),
            (
                "a poll without a verdict pauses polling; the next submit_password polls again without the password",
                submitted + [
                    step(answer(.resetSubmitted(ct("p1"), interval: 2)), "send resetPoll"),
                    step(failure(.network), "fail network kept"),
                    step(.action(.submitPassword(Secret("ignored"))), "send resetPoll"),
                    step(answer(.resetPoll(.succeeded(nil))), "finish password_reset_completed"),
                    step(.action(.signIn(scopes: nil, claims: nil)), "fail flow_invalid"),
                ], false
            ),
            (
                "a password-policy error while polling goes back to password_required's state",
                submitted + [
                    step(answer(.resetSubmitted(ct("p1"), interval: 2)), "send resetPoll"),
                    step(failure(.invalidPassword), "fail invalid_password kept"),
                    step(.action(.submitPassword(Secret("better"))), "send resetSubmit"),
                ], false
            ),
            (
                "a wrong code keeps the flow; an unknown user ends it at the start",
                [
                    step(.start, "send resetStart"), step(answer(.continuation(ct("c1"))), "send resetChallenge"),
                    step(answer(.codeChallenge(ct("c2"), aCode)), "finish code_required"),
                    step(.action(.submitCode(Secret("1"))), "send resetContinue"),
                    step(failure(.invalidCode), "fail invalid_code kept"),
                    step(.action(.submitPassword(Secret("x"))), "fail flow_invalid kept"),
                ], false
            ),
        ]
    }

    @Test(arguments: cases.indices)
    func script(_ i: Int) {
        let c = Self.cases[i]
        var f = flow()
        play(&f, c.steps, on)
        if case .ended = f.state { #expect(c.ended, "\(c.name)") } else { #expect(!c.ended, "\(c.name)") }
    }

    /// The shape's example: in-progress waits the interval, failed ends the flow.
    @Test func pollingStopsOnFailed() {
        var f = ResetPasswordFlow(
            username: "u",
            state: .polling(ct("p"), interval: 2, polled: 0, from: .newPassword(ct("c")))
        )
        #expect(f.on(answer(.resetPoll(.inProgress)), at: 0).trace == "wait 2.0")
        #expect(f.on(.waited, at: 2).trace == "send resetPoll")
        #expect(f.on(answer(.resetPoll(.failed)), at: 2).trace == "fail password_reset_failed")
    }

    /// Polling gives up after 300 s of waiting (MSAL Android and msal-browser).
    @Test func pollingHasABudget() {
        var f = ResetPasswordFlow(
            username: "u",
            state: .polling(ct("p"), interval: 10, polled: 0, from: .newPassword(ct("c")))
        )
        var traces: [String] = []
        for _ in 0..<40 {
            let t = f.on(answer(.resetPoll(.inProgress)), at: 0).trace
            traces.append(t)
            guard t == "wait 10.0" else { break }
            #expect(f.on(.waited, at: 0).trace == "send resetPoll")
        }
        #expect(traces.filter { $0 == "wait 10.0" }.count == 30)
        #expect(traces.last == "fail server")
    }
}
