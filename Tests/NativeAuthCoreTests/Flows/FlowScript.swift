import NativeAuthHTTP
import NativeAuthJSON
import Testing

@testable import NativeAuthCore

// Table-driven tests of the flows as the state machines they are: canned events in (server answers, the app's
// actions, waits), the sequence of effects out (`FlowEffect.trace`), and the state the flow is left in. No sockets, no
// JSON, no emulator, no driver.

/// One step of a script: the event, and the trace of the effect the flow must answer with.
struct Step: Sendable, CustomStringConvertible {
    var event: FlowEvent
    var expect: String
    /// The clock reading the event happens at.
    var at: Double = 1_000

    var description: String { expect }
}

func step(_ event: FlowEvent, _ expect: String, at: Double = 1_000) -> Step {
    Step(event: event, expect: expect, at: at)
}

/// Runs `steps` on `flow` through `on`; records a test issue for the first step whose effect differs.
@discardableResult
func play<F>(
    _ flow: inout F,
    _ steps: [Step],
    _ on: (inout F, FlowEvent, Double) -> FlowEffect,
    sourceLocation: SourceLocation = #_sourceLocation
) -> [FlowEffect] {
    var effects: [FlowEffect] = []
    for (i, s) in steps.enumerated() {
        let effect = on(&flow, s.event, s.at)
        effects.append(effect)
        if effect.trace != s.expect {
            Issue.record("step \(i): expected \(s.expect), got \(effect.trace)", sourceLocation: sourceLocation)
            break
        }
    }
    return effects
}

// Canned values.
func ct(_ name: String) -> ContinuationToken { ContinuationToken(Secret(name)) }
let aCode = CodeChallenge(sentTo: "a***@co**o.com", channel: "email", codeLength: 8, resendInterval: nil)
func tokens(idToken: String? = "header.claims.signature") -> TokenResponse {
    TokenResponse(
        accessToken: Secret("access"),
        expiresIn: 3600,
        extExpiresIn: nil,
        refreshIn: nil,
        grantedScopes: nil,
        refreshToken: RefreshToken(Secret("refresh")),
        idToken: idToken,
        clientInfo: nil
    )
}
let anAccount = Account(
    homeAccountID: "uid.utid",
    username: "ann@contoso.com",
    tenantID: "utid",
    environment: "contoso.ciamlogin.com",
    idToken: nil,
    claims: .object([:])
)
let aSignIn = StoredSignIn(
    account: anAccount,
    token: AccessToken(value: Secret("access"), scopes: ["api"], expiresOn: 5_000, refreshOn: nil, cachedAt: 1_000)
)
let methods = [
    AuthMethod(id: "m1", challengeType: "oob", channel: "email", loginHint: "a***@co**o.com"),
    AuthMethod(id: "m2", challengeType: "oob", channel: "email", loginHint: "b***@co**o.com"),
]

func answer(_ a: ServerAnswer) -> FlowEvent { .answer(.success(a)) }
func failure(_ code: NativeAuthError.Code) -> FlowEvent { .answer(.failure(NativeAuthError(code, "canned"))) }
var storedOK: FlowEvent { .stored(.success(aSignIn)) }
