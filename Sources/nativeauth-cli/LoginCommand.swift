import ArgumentParser
internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

/// `nativeauth login`: username and password or emailed code (with MFA and strong-auth registration), `--browser`,
/// or `--device-code`.
struct LoginCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in: username and password or emailed code, --browser, or --device-code."
    )

    @OptionGroup var options: SettingsOptions

    @Flag(help: "Sign in through the system browser.")
    var browser = false

    @Flag(help: "Sign in on another device with a code.")
    var deviceCode = false

    @Option(name: .shortAndLong, help: "The username (email); prompted for when missing.")
    var username: String?

    @Flag(help: "Read the password from stdin (one line) instead of prompting.")
    var passwordStdin = false

    @Option(
        name: [.customShort("s"), .customLong("scope")],
        help: ArgumentHelp(
            "Scope to ask for at sign-in (repeatable; default: the profile's scopes).",
            valueName: "scope"
        )
    )
    var scopes: [String] = []

    @Option(help: ArgumentHelp("--browser: pre-fill the username.", valueName: "user"))
    var loginHint: String?

    @Option(help: "--browser: the prompt parameter (select_account, login, consent, none, create).")
    var prompt: String?

    @Option(
        help: ArgumentHelp(
            "--browser / --device-code: give up after this long (default 300 / the code's lifetime).",
            valueName: "seconds"
        )
    )
    var timeout: Double?

    func validate() throws {
        if browser && deviceCode { throw ValidationError("--browser and --device-code exclude each other") }
        if let prompt, !["select_account", "login", "consent", "none", "create"].contains(prompt) {
            throw ValidationError("--prompt must be select_account, login, consent, none or create")
        }
        if let timeout, !(timeout > 0 && timeout <= 86_400) { throw ValidationError("--timeout must be 1 s to a day") }
    }

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        if passwordStdin && (browser || deviceCode) {
            throw CLIError("usage", "--password-stdin is for the username/password sign-in", .usage)
        }
        let client = try ctx.client()
        let done: JSONValue
        if browser {
            done = try browserSignIn(ctx, client)
        } else if deviceCode {
            done = try deviceCodeSignIn(ctx, client)
        } else {
            done = try nativeSignIn(ctx, client)
        }
        let account = done["account"] ?? .object([:])
        if ctx.json {
            Terminal.emitJSON([
                "status": "signed_in", "flow_type": done["flow_type"] ?? .null,
                "account": Self.accountDocument(account), "scopes": done["token"]?["scopes"] ?? .array([]),
                "expires_on": done["token"]?["expires_on"] ?? .null,
            ])
        } else {
            let name = account["username"]?.stringValue ?? ""
            Terminal.out(
                "Signed in as \(Terminal.safe(name.isEmpty ? account["home_account_id"]?.stringValue ?? "" : name))."
            )
        }
        return .ok
    }

    /// What `accounts --json` and `login --json` print of an account.
    static func accountDocument(_ account: JSONValue) -> JSONValue {
        [
            "username": account["username"] ?? .null, "home_account_id": account["home_account_id"] ?? .null,
            "tenant_id": account["tenant_id"] ?? .null, "environment": account["environment"] ?? .null,
            "name": account["claims"]?["name"] ?? .null,
        ]
    }

    // MARK: - Username, password, code

    private func nativeSignIn(_ ctx: Context, _ client: Library) throws(CLIError) -> JSONValue {
        var name = username
        if passwordStdin && name == nil { throw CLIError("usage", "--password-stdin needs --username", .usage) }
        if name == nil { name = try Terminal.prompt("Username: ") }
        let interactive = !passwordStdin
        var request: [String: JSONValue] = ["v": 1, "username": .string(name ?? "")]
        let scopes = try ctx.scopes(self.scopes)
        if !scopes.isEmpty { request["scopes"] = .array(scopes.map { .string($0) }) }
        var state = try client.call(na_sign_in, .object(request))
        var refusals = 0
        let maxRefusals = interactive ? 3 : 1  // a mistyped password or code may be typed again
        while state["status"]?.stringValue != "signed_in" {
            let flow = state["flow"] ?? .null
            switch state["status"]?.stringValue ?? "" {
            case "password_required":
                let password = passwordStdin ? try readPassword() : try Terminal.promptSecret("Password: ")
                let next = try retrying(refused: "invalid_credentials", may: refusals + 1 < maxRefusals) {
                    () throws(CLIError) -> JSONValue in
                    try client.call(na_flow_submit, ["v": 1, "flow": flow, "password": .string(password)])
                }
                if let next { state = next } else { refusals += 1 }
            case "code_required":
                if refusals == 0 {
                    let to = state["sent_to"]?.stringValue.map { " to \(Terminal.safe($0))" } ?? ""
                    Terminal.info("A one-time code was sent\(to).")
                }
                let code = try Terminal.promptSecret("Code: ").trimmingSpaces
                let next = try retrying(refused: "invalid_code", may: refusals + 1 < maxRefusals) {
                    () throws(CLIError) -> JSONValue in
                    try client.call(na_flow_submit, ["v": 1, "flow": flow, "code": .string(code)])
                }
                if let next { state = next } else { refusals += 1 }
            case "mfa_required":
                let methods = state["methods"]?.arrayValue ?? []
                var method = methods.first
                if methods.count > 1 && interactive {
                    for (n, m) in methods.enumerated() {
                        let label = Terminal.safe(
                            m["channel"]?.stringValue ?? m["challenge_type"]?.stringValue ?? "method"
                        )
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
                state = try client.call(na_flow_submit, .object(request))
            case "registration_required":
                guard interactive else {
                    throw CLIError(
                        "unsupported_step",
                        "the account must register a strong-authentication method; run `nativeauth login` in a "
                            + "terminal",
                        .signIn
                    )
                }
                Terminal.info("This account needs a verification method (an email address) for the second factor.")
                let contact = try Terminal.prompt("Email address to verify: ")
                state = try client.call(
                    na_flow_submit,
                    ["v": 1, "flow": flow, "action": "register_method", "contact": .string(contact)]
                )
            default:
                let status = Terminal.safe(state["status"]?.stringValue ?? "none")
                throw CLIError(
                    "unsupported_step",
                    "the sign-in needs a step the command line cannot drive (\(status)); "
                        + "try `nativeauth login --browser`",
                    .signIn
                )
            }
        }
        return state
    }

    /// Submits; when the input is refused and may be typed again (the flow stays usable), reports it and answers nil
    /// (the same state again).
    private func retrying(
        refused: String,
        may: Bool,
        _ submit: () throws(CLIError) -> JSONValue
    ) throws(CLIError) -> JSONValue? {
        do { return try submit() } catch {
            guard error.code == refused, may, error.flow != nil else { throw error }
            Terminal.info("nativeauth: \(Terminal.safe(error.code)): \(Terminal.safe(error.message)); try again")
            return nil
        }
    }

    private func readPassword() throws(CLIError) -> String {
        guard let line = Terminal.readLine() else {
            throw CLIError("usage", "--password-stdin: stdin is empty", .usage)
        }
        return line
    }

    // MARK: - Browser

    private func browserSignIn(_ ctx: Context, _ client: Library) throws(CLIError) -> JSONValue {
        var request: [String: JSONValue] = ["v": 1]
        let scopes = try ctx.scopes(self.scopes)
        if !scopes.isEmpty { request["scopes"] = .array(scopes.map { .string($0) }) }
        if let loginHint { request["login_hint"] = .string(loginHint) }
        if let prompt { request["prompt"] = .string(prompt) }
        let timeoutMs = Int64((timeout ?? 300) * 1000)
        request["timeout_ms"] = .int(timeoutMs)
        do {
            let started = try Interrupts.whileWaiting("Waiting for the browser sign-in", cancel: {}) {
                () throws(CLIError) -> JSONValue in try client.call(na_sign_in_interactive, .object(request))
            }
            return try signedIn(started)
        } catch  where error.code == "browser_unavailable" {
            // No browser could be opened: show the address and wait on the loopback listener.
            request["browser"] = "none"
            let pending = try client.call(na_sign_in_interactive, .object(request))
            let url = pending["authorization_url"]?.stringValue ?? ""
            Terminal.info(
                "No browser could be opened. To sign in, open this address in a browser on this machine:\n  "
                    + Terminal.safe(url)
            )
            let flow = pending["flow"]?.stringValue ?? ""
            let done = try Interrupts.whileWaiting(
                "Waiting for the browser sign-in",
                cancel: { [client] in client.cancel(flow: flow) }
            ) { () throws(CLIError) -> JSONValue in
                try client.call(
                    na_flow_submit,
                    ["v": 1, "flow": .string(flow), "action": "wait", "timeout_ms": .int(timeoutMs)]
                )
            }
            if done["status"]?.stringValue == "browser_pending" {
                client.cancel(flow: flow)
                throw CLIError("timeout", "the browser sign-in did not finish in time", .network)
            }
            return try signedIn(done)
        }
    }

    private func signedIn(_ state: JSONValue) throws(CLIError) -> JSONValue {
        guard state["status"]?.stringValue == "signed_in" else {
            throw CLIError(
                "unsupported_step",
                "unexpected answer \(Terminal.safe(state["status"]?.stringValue ?? "none"))"
            )
        }
        return state
    }

    // MARK: - Device code

    private func deviceCodeSignIn(_ ctx: Context, _ client: Library) throws(CLIError) -> JSONValue {
        var request: [String: JSONValue] = ["v": 1]
        let scopes = try ctx.scopes(self.scopes)
        if !scopes.isEmpty { request["scopes"] = .array(scopes.map { .string($0) }) }
        let device = try client.call(na_sign_in_device_code, .object(request))
        guard device["status"]?.stringValue == "device_code_required", let flow = device["flow"]?.stringValue else {
            return try signedIn(device)
        }
        let uri = Terminal.safe(device["verification_uri"]?.stringValue ?? "")
        Terminal.info(
            "To sign in, open \(uri) and enter the code \(Terminal.safe(device["user_code"]?.stringValue ?? ""))"
        )
        if let complete = device["verification_uri_complete"]?.stringValue {
            Terminal.info("  (or open \(Terminal.safe(complete)))")
        }
        let limit = timeout ?? Double(device["expires_in"]?.intValue ?? 900)
        let deadline = monotonicNow() + limit
        var current = device
        while current["status"]?.stringValue == "device_code_required" {
            let remaining = deadline - monotonicNow()
            guard remaining > 0 else {
                client.cancel(flow: flow)
                throw CLIError("timeout", "the device-code sign-in was not approved in time", .network)
            }
            let waitMs = Int64(min(remaining, 60) * 1000)
            current = try Interrupts.whileWaiting(
                "Waiting for the sign-in on the other device",
                cancel: { [client] in client.cancel(flow: flow) }
            ) { () throws(CLIError) -> JSONValue in
                try client.call(
                    na_flow_submit,
                    ["v": 1, "flow": .string(flow), "action": "wait", "timeout_ms": .int(waitMs)]
                )
            }
        }
        return try signedIn(current)
    }
}

func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
