internal import Glibc
import NativeAuthCABI
import NativeAuthCore
import NativeAuthJSON

/// `login --browser` and `login --no-browser`.
///
/// `--browser`: the library opens the browser (its start page on the loopback listener) and serves the redirect.
/// After `hintAfter` seconds without it, the command says what it waits for, how to stop (Ctrl-C), and — on a
/// terminal — takes the address the browser ended on, pasted, while the listener still waits. When no browser can
/// be opened (an SSH session, no display, a container: the library says why), it offers paste-back instead.
///
/// `--no-browser` (paste-back, as gcloud names it): the provider's authorization URL is shown (shown only: a
/// command line is readable by every local user); the user signs in on any device, whose browser ends on
/// `http://localhost:PORT/?code=…&state=…` (which that device cannot load), and pastes that address. The library
/// checks its `state` and redeems the code with the PKCE verifier. With stdin not a terminal, the address is one line
/// of it. A redirect URI with no listener (Entra's `…/oauth2/nativeclient`) works the same way.
struct BrowserLogin {
    let client: Library
    /// The na_sign_in_interactive request: scopes, login_hint, prompt, timeout_ms.
    let request: [String: JSONValue]
    /// Seconds the whole sign-in may take.
    let timeout: Double
    let noBrowser: Bool

    /// How long the browser is waited for before the command says more.
    static let hintAfter = 10.0

    func run() throws(CLIError) -> JSONValue {
        let deadline = Monotonic.seconds() + timeout
        if noBrowser { return try pasteBack(until: deadline, why: nil) }
        var first = request
        first["wait_ms"] = .int(Int64(Self.hintAfter * 1000))
        let answer: JSONValue
        do {
            answer = try client.started(
                "sign_in_interactive",
                .object(first),
                waiting: "Waiting for the sign-in in the browser"
            )
        } catch  where error.code == "browser_unavailable" {
            return try pasteBack(until: deadline, why: Self.reason(error.message))
        } catch  where error.code == "invalid_argument" && error.message.hasPrefix("browser: a redirect_uri") {
            // The redirect URI has no listener (Entra's nativeclient): only paste-back can complete it.
            return try pasteBack(until: deadline, why: "the redirect URI is not on this machine")
        }
        guard answer["status"]?.stringValue == "browser_pending", let flow = answer["flow"]?.stringValue else {
            return try Self.signedIn(answer)
        }
        let redirect = answer["redirect_uri"]?.stringValue ?? ""
        let reads = isatty(0) != 0
        var lines = [
            "Still waiting for the browser to come back to \(Terminal.safe(redirect)).",
            "  If the sign-in failed in the browser, press Ctrl-C to stop.",
        ]
        if reads {
            lines.append(
                "  If the browser ended on an address it could not load (\(Terminal.safe(redirect))?code=…), "
                    + "paste that address here."
            )
        }
        lines.append("  If no browser opened, press Ctrl-C and run `nativeauth login --no-browser`.")
        Terminal.info(lines.joined(separator: "\n"))
        let wait = RedirectWait(
            client: client,
            flow: flow,
            redirectURI: redirect,
            expectedState: nil,
            deadline: deadline,
            readsInput: reads,
            inputRequired: false
        )
        return try wait.run()
    }

    /// Paste-back: the provider's address shown, the address the browser ended on read back (and the listener
    /// served meanwhile, for a browser on this machine). `why`: why no browser was opened here.
    private func pasteBack(until deadline: Double, why: String?) throws(CLIError) -> JSONValue {
        var none = request
        none["browser"] = "none"
        let pending = try client.call(na_sign_in_interactive, .object(none))
        guard pending["status"]?.stringValue == "browser_pending", let flow = pending["flow"]?.stringValue else {
            return try Self.signedIn(pending)
        }
        let url = pending["authorization_url"]?.stringValue ?? ""
        let redirect = pending["redirect_uri"]?.stringValue ?? ""
        let terminal = isatty(0) != 0
        var text = ""
        if let why {
            text += "No browser was opened here: \(Terminal.safe(why)).\n"
            text += "Sign in on any device instead (or with `nativeauth login --device-code`, where your organization "
            text += "allows it).\n"
        }
        text += "To sign in, open this address in a browser on any device:\n\n  \(Terminal.safe(url))\n\n"
        if RedirectWait.hasListener(redirect) {
            text += "After you sign in, that browser goes to an address starting with \(Terminal.safe(redirect)),\n"
            text += "which it cannot load on another device (\"unable to connect\" is expected).\n"
        } else {
            text += "After you sign in, that browser ends on an address starting with \(Terminal.safe(redirect)).\n"
        }
        text +=
            terminal
            ? "Copy the whole address from its address bar and paste it here."
            : "Reading that address "
                + "from stdin (one line)."
        Terminal.info(text)
        if terminal { Terminal.write(2, "Address: ") }
        let wait = RedirectWait(
            client: client,
            flow: flow,
            redirectURI: redirect,
            expectedState: PastedAddress.parameter("state", of: url),
            deadline: deadline,
            readsInput: true,
            inputRequired: noBrowser && !terminal
        )
        return try wait.run()
    }

    /// The reason in the library's browser_unavailable message ("No browser could be opened (REASON); …").
    static func reason(_ message: String) -> String {
        let head = "No browser could be opened ("
        guard message.hasPrefix(head), let end = message.firstRange(of: "); the sign-in has ended") else {
            return "no browser could be opened"
        }
        return String(message[message.index(message.startIndex, offsetBy: head.count)..<end.lowerBound])
    }

    static func signedIn(_ state: JSONValue) throws(CLIError) -> JSONValue {
        guard state["status"]?.stringValue == "signed_in" else {
            throw CLIError(
                "unsupported_step",
                "unexpected answer \(Terminal.safe(state["status"]?.stringValue ?? "none"))"
            )
        }
        return state
    }
}

/// Waits for a browser sign-in's redirect: on the loopback listener (a browser on this machine), and, when
/// `readsInput`, as an address pasted on stdin (a line; a terminal is polled between short waits on the listener,
/// so either may come first). Ctrl-C cancels the flow.
struct RedirectWait {
    let client: Library
    let flow: String
    let redirectURI: String
    /// This sign-in's `state`, when the command knows it: a pasted address with another one is refused before it
    /// reaches the library (which would end the sign-in).
    let expectedState: String?
    let deadline: Double
    let readsInput: Bool
    /// The end of stdin before an address is an error (`--no-browser` with stdin not a terminal).
    let inputRequired: Bool

    /// A loopback http redirect URI: the library listens there.
    static func hasListener(_ redirectURI: String) -> Bool {
        let lower = redirectURI.lowercased()
        return lower.hasPrefix("http://localhost") || lower.hasPrefix("http://127.0.0.1")
    }

    func run() throws(CLIError) -> JSONValue {
        Interrupts.setHandler { [client, flow] in client.cancel(flow: flow) }
        defer { Interrupts.setHandler(nil) }
        let listening = Self.hasListener(redirectURI)
        var reading = readsInput
        let terminal = isatty(0) != 0
        // Never a blocking read of a whole line: half a line whose rest never comes must not hold the deadline,
        // the listener or Ctrl-C (PastedInput).
        let input = PastedInput()
        while true {
            try stopIfInterrupted()
            let left = deadline - Monotonic.seconds()
            guard left > 0 else {
                client.cancel(flow: flow)
                throw CLIError("timeout", "the browser sign-in did not finish in time", .network)
            }
            if reading {
                switch input.next(waitMs: listening ? 0 : Int32(min(left, 0.5) * 1000)) {
                case .nothing:
                    break
                case .end:
                    reading = false
                    if inputRequired || !listening {
                        client.cancel(flow: flow)
                        throw CLIError("usage", "stdin ended before the address the browser ended on", .usage)
                    }
                    continue
                case .line(let line):
                    if let done = try submit(line.trimmingSpaces, terminal: terminal) { return done }
                    continue
                }
            }
            guard listening else {
                if reading { continue }
                throw CLIError("usage", "this redirect URI has no listener: the address must be pasted", .usage)
            }
            let slice = Int64(min(left, reading ? 0.25 : 5) * 1000)
            let answer: JSONValue
            do {
                answer = try client.call(
                    na_flow_submit,
                    ["v": 1, "flow": .string(flow), "action": "wait", "timeout_ms": .int(max(1, slice))]
                )
            } catch {
                // Ctrl-C cancelled the flow during this wait: interrupted (130), not the flow's "cancelled" (1).
                try stopIfInterrupted()
                throw error
            }
            try stopIfInterrupted()
            if answer["status"]?.stringValue != "browser_pending" {
                if reading && terminal { Terminal.write(2, "\n") }  // the prompt's line, left unanswered
                return try BrowserLogin.signedIn(answer)
            }
        }
    }

    /// Hands a pasted address to the library; nil when it was refused and another may be pasted.
    private func submit(_ text: String, terminal: Bool) throws(CLIError) -> JSONValue? {
        guard !text.isEmpty else { return nil }
        if let problem = PastedAddress.problem(text, redirectURI: redirectURI, state: expectedState) {
            guard terminal else {
                client.cancel(flow: flow)
                throw CLIError("invalid_argument", problem, .usage)
            }
            Terminal.info("nativeauth: \(problem); paste it again.")
            Terminal.write(2, "Address: ")
            return nil
        }
        // Started, not called: Ctrl-C cancels the code's redemption at once and exits 130 (a blocking call could
        // not be interrupted — the flow's cancel does not reach a request under way — and waited out the request
        // timeout). The wait's Ctrl-C handler is put back for another paste.
        defer { Interrupts.setHandler { [client, flow] in client.cancel(flow: flow) } }
        do {
            let done = try client.started(
                "flow_submit",
                ["v": 1, "flow": .string(flow), "action": "submit_redirect", "redirect_url": .string(text)],
                waiting: "Signing in"
            )
            return try BrowserLogin.signedIn(done)
        } catch  where error.code == "invalid_argument" && error.flow != nil && terminal {
            Terminal.info("nativeauth: \(Terminal.safe(error.message)); paste it again.")
            Terminal.write(2, "Address: ")
            return nil
        }
    }

    private func stopIfInterrupted() throws(CLIError) {
        if Interrupts.interrupted.load(ordering: .acquiring) {
            client.cancel(flow: flow)
            Terminal.write(2, "\nnativeauth: interrupted\n")
            exit(130)
        }
    }
}

/// What the command checks of a pasted address before the library sees it: that it is a redirect to this sign-in's
/// redirect URI with a code or an error, and (when the command knows it) this sign-in's `state`. The library checks
/// the same and more; a mismatch there ends the sign-in, here it lets the user paste again.
enum PastedAddress {
    /// Why `text` cannot be this sign-in's redirect, or nil.
    static func problem(_ text: String, redirectURI: String, state: String?) -> String? {
        if text.utf8.count >= 4095 {
            return "that address is cut off: a terminal takes at most 4095 characters in one line "
                + "(pipe it instead: `nativeauth login --no-browser < file`)"
        }
        let base = text.prefix { $0 != "?" && $0 != "#" }
        func trimmed(_ s: Substring) -> String { (s.hasSuffix("/") ? s.dropLast() : s).lowercased() }
        guard trimmed(base) == trimmed(Substring(redirectURI)) else {
            return "that is not the address the sign-in ended on (it starts with \(Terminal.safe(redirectURI)))"
        }
        guard parameter("code", of: text) != nil || parameter("error", of: text) != nil else {
            return "that address carries no code: copy the whole address from the browser's address bar"
        }
        // Every redirect of this sign-in carries its state (the library refuses one without it, ending the sign-in):
        // a copy that lost it (its last parameter) is caught here, where another paste is still possible.
        guard let pasted = parameter("state", of: text) else {
            return "that address carries no state: copy the whole address from the browser's address bar"
        }
        if let state, percentDecoded(pasted) != percentDecoded(state) {
            return "that address is from another sign-in (its state differs)"
        }
        return nil
    }

    /// `%XX` escapes and `+` decoded (invalid escapes kept as they are).
    static func percentDecoded(_ s: String) -> String {
        var out: [UInt8] = []
        var bytes = s.utf8[...]
        while let b = bytes.first {
            bytes = bytes.dropFirst()
            if b == UInt8(ascii: "%"), bytes.count >= 2,
                let v = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            {
                out.append(v)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(b == UInt8(ascii: "+") ? UInt8(ascii: " ") : b)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The first value of `name` in the query or fragment of `url`, as sent.
    static func parameter(_ name: String, of url: String) -> String? {
        guard let start = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return nil }
        let pairs = url[url.index(after: start)...].split(whereSeparator: { $0 == "&" || $0 == "#" || $0 == "?" })
        for pair in pairs {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.count == 2, parts[0] == name { return String(parts[1]) }
        }
        return nil
    }
}
