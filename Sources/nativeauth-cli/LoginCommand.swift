import ArgumentParser
internal import Glibc
import NativeAuthCABI
import NativeAuthCore
import NativeAuthJSON

/// `nativeauth login`: username and password or emailed code (with MFA and strong-auth registration), `--browser`,
/// `--no-browser` (paste-back: `BrowserLogin`), or `--device-code`.
struct LoginCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in: username and password or emailed code, --browser, --no-browser, or --device-code."
    )

    @OptionGroup var options: SettingsOptions

    @Flag(help: "Sign in through the system browser.")
    var browser = false

    @Flag(help: "Sign in on another device with a code.")
    var deviceCode = false

    @Flag(
        help: ArgumentHelp(
            "Sign in through a browser on any device: show the sign-in address, then paste the address the "
                + "browser ended on (for SSH sessions, containers, machines without a display)."
        )
    )
    var noBrowser = false

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

    @Option(help: ArgumentHelp("--browser, --no-browser: pre-fill the username.", valueName: "user"))
    var loginHint: String?

    @Option(help: "--browser, --no-browser: the prompt parameter (select_account, login, consent, none, create).")
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
        if noBrowser && deviceCode { throw ValidationError("--no-browser and --device-code exclude each other") }
        if let prompt, !["select_account", "login", "consent", "none", "create"].contains(prompt) {
            throw ValidationError("--prompt must be select_account, login, consent, none or create")
        }
        if let timeout, !(timeout > 0 && timeout <= 86_400) { throw ValidationError("--timeout must be 1 s to a day") }
    }

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        if passwordStdin && (browser || noBrowser || deviceCode) {
            throw CLIError("usage", "--password-stdin is for the username/password sign-in", .usage)
        }
        let client = try ctx.client()
        let done: JSONValue
        if browser || noBrowser {
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
        var request: [String: JSONValue] = ["v": 1, "username": .string(name ?? "")]
        let scopes = try ctx.scopes(self.scopes)
        if !scopes.isEmpty { request["scopes"] = .array(scopes.map { .string($0) }) }
        let driver = NativeSteps(client: client, passwordStdin: passwordStdin)
        return try driver.drive(try client.call(na_sign_in, .object(request)))
    }

    // MARK: - Browser

    private func browserSignIn(_ ctx: Context, _ client: Library) throws(CLIError) -> JSONValue {
        var request: [String: JSONValue] = ["v": 1]
        let scopes = try ctx.scopes(self.scopes)
        if !scopes.isEmpty { request["scopes"] = .array(scopes.map { .string($0) }) }
        if let loginHint { request["login_hint"] = .string(loginHint) }
        if let prompt { request["prompt"] = .string(prompt) }
        let seconds = timeout ?? 300
        request["timeout_ms"] = .int(Int64(seconds * 1000))
        return try BrowserLogin(client: client, request: request, timeout: seconds, noBrowser: noBrowser).run()
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
        let deadline = Monotonic.seconds() + limit
        var current = device
        while current["status"]?.stringValue == "device_code_required" {
            let remaining = deadline - Monotonic.seconds()
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

/// The steps of a native sign-in after its first answer, driven at the terminal: password, emailed code, MFA,
/// strong-auth registration (`login`, and `signup` once the account exists). A mistyped password or code may be
/// typed again (three tries in all; one with `--password-stdin`).
struct NativeSteps {
    let client: Library
    var passwordStdin = false
    /// Steps of a sign-up before it signs in (`signup`): a new password (typed twice) and attributes.
    var signUp = false
    /// The scopes of the sign-in that follows a sign-up.
    var scopes: [String] = []

    var interactive: Bool { !passwordStdin }

    func drive(_ first: JSONValue) throws(CLIError) -> JSONValue {
        var state = first
        var refusals = 0
        let maxRefusals = interactive ? 3 : 1  // a mistyped password or code may be typed again
        while state["status"]?.stringValue != "signed_in" {
            let flow = state["flow"] ?? .null
            switch state["status"]?.stringValue ?? "" {
            case "password_required" where signUp:
                let password = try newPassword()
                let next = try retrying(refused: "invalid_password", may: refusals + 1 < maxRefusals) {
                    () throws(CLIError) -> JSONValue in
                    try client.call(na_flow_submit, ["v": 1, "flow": flow, "password": .string(password)])
                }
                if let next { state = next } else { refusals += 1 }
            case "attributes_required":
                let attributes = try Self.promptAttributes(state["required_attributes"]?.arrayValue ?? [])
                let next = try retrying(refused: "attributes_invalid", may: refusals + 1 < maxRefusals) {
                    () throws(CLIError) -> JSONValue in
                    try client.call(na_flow_submit, ["v": 1, "flow": flow, "attributes": .object(attributes)])
                }
                if let next { state = next } else { refusals += 1 }
            case "sign_up_completed":
                guard case .string = flow else { return state }  // signed up; no sign-in offered
                state = try signInAfterSignUp(flow)
                refusals = 0
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
                state = try client.call(na_flow_submit, .object(try challengeRequest(state, flow: flow)))
            case "registration_required":
                state = try registerMethod(flow)
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

    /// `registration_required`: a strong-authentication method (an email address) to register, asked in a terminal.
    func registerMethod(_ flow: JSONValue) throws(CLIError) -> JSONValue {
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
        return try client.call(
            na_flow_submit,
            ["v": 1, "flow": flow, "action": "register_method", "contact": .string(contact)]
        )
    }

    /// Submits; when the input is refused and may be typed again (the flow stays usable), reports it and answers nil
    /// (the same state again).
    func retrying(
        refused: String,
        may: Bool,
        _ submit: () throws(CLIError) -> JSONValue
    ) throws(CLIError) -> JSONValue? {
        do { return try submit() } catch {
            guard error.code == refused, may, error.flow != nil else { throw error }
            let text = CLIError.then(Terminal.safe(error.message), "try again")
            Terminal.info("nativeauth: \(Terminal.safe(error.code)): \(text)")
            return nil
        }
    }

    /// A sign-up's password: typed twice, hidden.
    private func newPassword() throws(CLIError) -> String {
        if passwordStdin { return try readPassword() }
        for _ in 0..<3 {
            let first = try Terminal.promptSecret("New password: ")
            if try Terminal.promptSecret("Repeat the password: ") == first { return first }
            Terminal.info("The two passwords differ; try again.")
        }
        throw CLIError("invalid_password", "the two passwords differ", .refused)
    }

    /// Asks for each attribute the server requires (`required_attributes`: name, type, options.regex).
    static func promptAttributes(_ required: [JSONValue]) throws(CLIError) -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for attribute in required {
            guard let name = attribute["name"]?.stringValue, !name.isEmpty else { continue }
            var label = Terminal.safe(name)
            if let regex = attribute["options"]?["regex"]?.stringValue { label += " (\(Terminal.safe(regex)))" }
            out[name] = .string(try Terminal.prompt("\(label): ").trimmingSpaces)
        }
        return out
    }

    private func readPassword() throws(CLIError) -> String {
        guard let line = Terminal.readLine() else {
            throw CLIError("usage", "--password-stdin: stdin is empty", .usage)
        }
        return line
    }
}

/// `nativeauth signup`: a new account — the email is verified with a one-time code, then the password (typed twice)
/// and the attributes the tenant requires are asked for, and the new account is signed in.
struct SignUpCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "signup",
        abstract: "Create an account: email code, password, attributes; then signed in."
    )

    @OptionGroup var options: SettingsOptions

    @Option(name: .shortAndLong, help: "The username (email); prompted for when missing.")
    var username: String?

    @Option(
        name: [.customShort("a"), .customLong("attribute")],
        help: ArgumentHelp("An attribute given up front, NAME=VALUE (repeatable; e.g. city=Oslo).", valueName: "n=v")
    )
    var attributes: [String] = []

    @Option(
        name: [.customShort("s"), .customLong("scope")],
        help: ArgumentHelp(
            "Scope for the sign-in that follows (repeatable; default: the profile's).",
            valueName: "scope"
        )
    )
    var scopes: [String] = []

    func validate() throws {
        for a in attributes where !a.contains("=") || a.hasPrefix("=") {
            throw ValidationError("--attribute takes NAME=VALUE")
        }
    }

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        let client = try ctx.client()
        var name = username ?? ""
        if username == nil { name = try Terminal.prompt("Username: ") }
        var request: [String: JSONValue] = ["v": 1, "username": .string(name)]
        if !attributes.isEmpty {
            var given: [String: JSONValue] = [:]
            for a in attributes {
                let eq = a.firstIndex(of: "=") ?? a.endIndex
                given[String(a[..<eq])] = .string(String(a[a.index(after: eq)...]))
            }
            request["attributes"] = .object(given)
        }
        let driver = NativeSteps(client: client, signUp: true, scopes: try ctx.scopes(scopes))
        let done = try driver.drive(try client.call(na_sign_up, .object(request)))
        if done["status"]?.stringValue != "signed_in" {  // signed up, but the server wants a sign-in of its own
            if ctx.json {
                Terminal.emitJSON(["status": "sign_up_completed"])
            } else {
                Terminal.out("Signed up. Sign in with `nativeauth login -u \(Terminal.safe(name))`.")
            }
            return .ok
        }
        let account = done["account"] ?? .object([:])
        if ctx.json {
            Terminal.emitJSON(["status": "signed_in", "account": LoginCommand.accountDocument(account)])
        } else {
            Terminal.out("Signed up and signed in as \(Terminal.safe(account["username"]?.stringValue ?? name)).")
        }
        return .ok
    }
}
