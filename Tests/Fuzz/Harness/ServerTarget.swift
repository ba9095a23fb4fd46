// Target "server": every parser of server answers — native-auth steps, token responses, error envelopes, Retry-After,
// OIDC discovery, refresh-token grants — reached through the C ABI while a client goes through a whole flow and then
// asks for tokens. The same driver records the seeds from the emulator (Seeds.swift), so a seed replays its flow.
//
// Input: byte 0 chooses the scenario ((b - '0') mod 6, `ServerScenario`), the rest is the server's answers
// (Answers.swift), served in order to every request the library makes; the last one repeats.
import NativeAuthCore
import NativeAuthJSON

@testable import NativeAuthCABI

/// What the driver types in: the demo tenant's users and values that no server answer is likely to contain (the log
/// sink looks for the password and the code).
struct DriverInputs {
    var username = "driver.user@fabrikam.example"
    var password = "Pw-4c1f9e-SECRET"
    var contact = "driver.contact@fabrikam.example"
    var scopes: [String] = ["api://11112222-bbbb-3333-cccc-4444dddd5555/ToDoList.Read"]
    var otherScopes: [String] = ["api://22223333-cccc-4444-dddd-5555eeee6666/Notes.Read"]
    var code: () -> String = { "Code-8d2b7a-SECRET" }
    /// Runs before each flow step (the seed recorder moves the emulator's clock there).
    var beforeStep: (() -> Void)? = nil
}

enum ServerScenario: Int, CaseIterable {
    case signInWithPassword, signInWithoutPassword, signUpWithPassword, signUp, resetPassword, refresh

    var start: (Export, (DriverInputs) -> JSONValue)? {
        switch self {
        case .signInWithPassword:
            return (
                na_sign_in, { ["username": .string($0.username), "password": .string($0.password), "scopes": s($0)] }
            )
        case .signInWithoutPassword:
            return (na_sign_in, { ["username": .string($0.username), "scopes": s($0)] })
        case .signUpWithPassword:
            return (
                na_sign_up,
                {
                    [
                        "username": .string($0.username), "password": .string($0.password),
                        "attributes": ["displayName": "Driver", "city": "Oslo"],
                    ]
                }
            )
        case .signUp:
            return (na_sign_up, { ["username": .string($0.username)] })
        case .resetPassword:
            return (na_reset_password, { ["username": .string($0.username)] })
        case .refresh:
            return nil
        }
    }
}

private func s(_ i: DriverInputs) -> JSONValue { .array(i.scopes.map { .string($0) }) }

/// Takes a flow from its first answer to its end as an app would: each state gets the action it asks for; an error
/// that leaves the flow usable gets one "resend_code". Returns the last answer.
func driveFlow(_ c: FuzzClient, from first: Reply, _ inputs: DriverInputs) -> Reply {
    var r = first
    var retried = false
    for _ in 0..<16 {
        guard let flow = r.flow else { return r }
        var action: [String: JSONValue]
        if r.rc != 0 {
            if retried { return r }
            retried = true
            action = ["action": "resend_code"]
        } else {
            switch r.status ?? "" {
            case "code_required":
                action = ["code": .string(inputs.code())]
            case "password_required":
                action = ["password": .string(inputs.password)]
            case "attributes_required":
                var values: [String: JSONValue] = [:]
                for a in r["required_attributes"]?.arrayValue ?? [] {
                    guard let name = a["name"]?.stringValue else { continue }
                    values[name] = a["regex"] == nil ? "Driver" : "12345"
                }
                action = ["attributes": .object(values)]
            case "mfa_required":
                action = ["action": "request_challenge"]
            case "registration_required":
                action = ["action": "register_method", "contact": .string(inputs.contact)]
            case "sign_up_completed", "password_reset_completed":
                action = ["action": "sign_in", "scopes": s(inputs)]
            default:
                return r
            }
        }
        action["flow"] = .string(flow)
        inputs.beforeStep?()
        r = c.callAPI(na_flow_submit, .object(action))
    }
    return r
}

/// After a sign-in: the token again (from the cache when the server granted what was asked), a token for other
/// scopes (OIDC discovery and a refresh-token grant), a forced refresh, and the account.
func afterSignIn(_ c: FuzzClient, _ signedIn: Reply?, _ inputs: DriverInputs) {
    let again = c.callAPI(na_get_access_token, ["scopes": s(inputs)])
    if let token = signedIn?["token"] {
        let oidc: Set<String> = ["openid", "profile", "offline_access", "email"]
        let granted = Set((token["scopes"]?.arrayValue ?? []).compactMap { $0.stringValue?.lowercased() })
        let asked = Set(inputs.scopes.map { $0.lowercased() }).subtracting(oidc)
        // MSAL's rule (include/nativeauth.h): a token is served from the cache until 5 minutes before it expires, so
        // one granted for less than that is renewed on the next call instead.
        let servable = (token["expires_on"]?.intValue).map { Double($0) - TokenValidity.expiryBuffer > c.clock.now() }
        if asked.isSubset(of: granted), servable == true {
            guard again.rc == 0, again["from_cache"] == true, again["access_token"] == token["access_token"] else {
                finding("a token just granted for these scopes was not served from the cache", again.text)
            }
        }
        guard let expires = token["expires_on"]?.intValue, expires > Int64(FuzzClock.start),
            Double(expires) <= c.clock.now() + 365 * 86_400
        else { finding("a token's expires_on is not within a year of now", signedIn?.text ?? "") }
    }
    _ = c.callAPI(na_get_access_token, ["scopes": .array(inputs.otherScopes.map { .string($0) })])
    _ = c.callAPI(na_get_access_token, ["scopes": s(inputs), "force_refresh": true])
    _ = c.callAPI(na_get_account, ["include_id_token": true])
}

/// Runs one scenario on a client whose server is `player`; in the refresh scenario the scripted server signs the
/// client in first (without a player, the caller has signed it in).
func runScenario(_ scenario: ServerScenario, _ c: FuzzClient, _ player: AnswerPlayer?, _ inputs: DriverInputs) {
    guard let (export, request) = scenario.start else {
        if let player {
            player.scripted = true
            let r = c.callAPI(na_sign_in, ["username": "ann@fabrikam.example", "password": "pw", "scopes": s(inputs)])
            guard r.status == "signed_in" else { finding("the scripted sign-in failed", r.text) }
            player.scripted = false
        }
        afterSignIn(c, nil, inputs)
        return
    }
    let last = driveFlow(c, from: c.callAPI(export, request(inputs)), inputs)
    if last.status == "signed_in" {
        checkAccount(after: last, of: "", on: c)
        afterSignIn(c, last, inputs)
        checkAccount(after: last, of: "", on: c)
    }
}

/// A log sink for clients of a fuzzed server: it may log what the server said, never what the user typed (unless the
/// server said it too: the fuzzer learns these values from the sink's own comparisons).
func driverLogSink(_ inputs: DriverInputs) -> LogSink {
    let secrets = [inputs.password, inputs.code(), inputs.username]
    return { _, message, _ in
        for s in secrets where has(message, s) && !has(currentInput, s) {
            finding("a password, code or username in a log line", message)
        }
    }
}

func fuzzServer(_ data: UnsafeRawBufferPointer) {
    guard let first = data.first else { return }
    let scenario = ServerScenario.allCases[Int(first &- UInt8(ascii: "0")) % ServerScenario.allCases.count]
    let player = AnswerPlayer(Answers.parse(data.dropFirst()))
    let inputs = DriverInputs()
    let client = FuzzClient(transport: player.transport(), logSink: driverLogSink(inputs))
    runScenario(scenario, client, player, inputs)
}
