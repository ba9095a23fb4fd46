import NativeAuthCABI
import NativeAuthJSON

/// Steps of `NativeSteps.drive` that take more than a few lines.
extension NativeSteps {
    /// After a sign-up, with a flow: the server lets the new account sign in without its password again. The command
    /// then says both in one line ("Signed up and signed in as …"), unless the sign-in needs a step of its own or
    /// fails: then "Signed up." first.
    func signInAfterSignUp(_ flow: JSONValue) throws(CLIError) -> JSONValue {
        var request: [String: JSONValue] = ["v": 1, "flow": flow, "action": "sign_in"]
        if !scopes.isEmpty { request["scopes"] = .array(scopes.map { .string($0) }) }
        let state: JSONValue
        do { state = try client.call(na_flow_submit, .object(request)) } catch {
            Terminal.info("Signed up.")
            throw error
        }
        if state["status"]?.stringValue != "signed_in" { Terminal.info("Signed up.") }
        return state
    }

    /// `mfa_required`: the request for a code to the method the user picks (the first without a terminal or when
    /// there is only one).
    func challengeRequest(_ state: JSONValue, flow: JSONValue) throws(CLIError) -> [String: JSONValue] {
        let methods = state["methods"]?.arrayValue ?? []
        var method = methods.first
        if methods.count > 1 && interactive {
            for (n, m) in methods.enumerated() {
                let label = Terminal.safe(m["channel"]?.stringValue ?? m["challenge_type"]?.stringValue ?? "method")
                let hint = Terminal.safe(m["login_hint"]?.stringValue ?? "")
                Terminal.info(hint.isEmpty ? "  \(n + 1). \(label)" : "  \(n + 1). \(label) \(hint)")
            }
            let choice = try Terminal.prompt("Second factor [1-\(methods.count), default 1]: ")
            guard let n = Int(choice.isEmpty ? "1" : choice), n >= 1, n <= methods.count else {
                throw CLIError("usage", "no method '\(Terminal.safe(choice))'", .usage)
            }
            method = methods[n - 1]
        }
        var request: [String: JSONValue] = ["v": 1, "flow": flow, "action": "request_challenge"]
        if let id = method?["id"] { request["method_id"] = id }
        return request
    }
}
