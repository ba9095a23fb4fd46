import NativeAuthJSON

/// How the command line composes an error's message with what to do next.
extension CLIError {
    /// What to do after these errors (`account_required`: `explained` names the accounts and how to choose).
    static let hints: [String: String] = [
        "no_account": "run `nativeauth login`",
        "interaction_required": "run `nativeauth login`",
        "refresh_token_expired": "run `nativeauth login`",
        "password_change_required": "change the password, then run `nativeauth login`",
        "browser_required": "run `nativeauth login --browser`",
    ]

    /// `message` followed by `clause`: "The code is not valid. Try again." when the message ends a sentence,
    /// "cannot connect; try again" when it does not.
    static func then(_ message: String, _ clause: String) -> String {
        let text = message.trimmingSpaces
        guard let last = text.last, let first = clause.first else { return text + clause }
        if last == "." || last == "!" || last == "?" { return "\(text) \(first.uppercased())\(clause.dropFirst())." }
        return "\(text); \(clause)"
    }

    /// The text after `nativeauth: <code>: `, safe for the terminal: the message and the hint for its code (else
    /// `fallback`). `account_required` names the signed-in accounts and how to choose one: `--account` (when the
    /// command takes it), `NATIVEAUTH_ACCOUNT`, the profile's `account`.
    func explained(accountOption: Bool = true, fallback: String? = nil) -> String {
        if code == "account_required" {
            let names = (details["accounts"]?.arrayValue ?? []).compactMap {
                $0["username"]?.stringValue ?? $0["home_account_id"]?.stringValue
            }
            let list = names.isEmpty ? "" : ": " + names.map(Terminal.safe).joined(separator: ", ")
            let ways = accountOption ? "--account, NATIVEAUTH_ACCOUNT or" : "NATIVEAUTH_ACCOUNT or"
            return "several accounts are signed in\(list); choose one with \(ways) the profile's account setting"
        }
        guard let hint = Self.hints[code] ?? fallback else { return Terminal.safe(message) }
        return Self.then(Terminal.safe(message), hint)
    }
}
