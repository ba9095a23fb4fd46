import ArgumentParser
internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

/// `nativeauth accounts`.
struct AccountsCommand: ContextCommand {
    static let configuration = CommandConfiguration(commandName: "accounts", abstract: "List the signed-in accounts.")

    @OptionGroup var options: SettingsOptions

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        let accounts = try ctx.client().call(na_get_accounts, ["v": 1])["accounts"]?.arrayValue ?? []
        if ctx.json {
            Terminal.emitJSON(["accounts": .array(accounts.map(LoginCommand.accountDocument))])
        } else if accounts.isEmpty {
            Terminal.info("No account is signed in (run `nativeauth login`).")
        } else {
            let rows = accounts.map {
                (
                    Terminal.safe($0["username"]?.stringValue ?? ""),
                    Terminal.safe($0["home_account_id"]?.stringValue ?? "")
                )
            }
            let width = rows.map(\.0.count).max() ?? 0
            for (name, id) in rows {
                Terminal.out(name + String(repeating: " ", count: width - name.count) + "  " + id)
            }
        }
        return .ok
    }
}

/// `nativeauth token`.
struct TokenCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an access token (for curl -H \"Authorization: Bearer $(nativeauth token …)\")."
    )

    @OptionGroup var options: SettingsOptions

    @Option(
        name: [.customShort("s"), .customLong("scope")],
        help: ArgumentHelp("Scope (repeatable; default: the profile's scopes, else the sign-in's).", valueName: "scope")
    )
    var scopes: [String] = []

    @Option(help: ArgumentHelp("Username or home_account_id, when several are signed in.", valueName: "account"))
    var account: String?

    @Flag(help: "Get a new token even if a cached one is valid.")
    var forceRefresh = false

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        try Self.run(ctx, scopes: scopes, account: account, forceRefresh: forceRefresh)
    }

    /// (Also `FastPath`'s: the same command without ArgumentParser.)
    static func run(_ ctx: Context, scopes: [String], account: String?, forceRefresh: Bool) throws(CLIError) -> ExitCode
    {
        let token = try Self.token(ctx, scopes: scopes, account: account, forceRefresh: forceRefresh)
        if ctx.json {
            Terminal.emitJSON([
                "access_token": token["access_token"] ?? .null, "token_type": token["token_type"] ?? .null,
                "expires_on": token["expires_on"] ?? .null, "scopes": token["scopes"] ?? .array([]),
                "from_cache": token["from_cache"] ?? .null,
            ])
        } else {
            try refuseDPoPToken(token)
            Terminal.out(Terminal.safe(token["access_token"]?.stringValue ?? ""))  // a real token has nothing to escape
        }
        return .ok
    }

    /// The token document for these settings.
    static func token(
        _ ctx: Context,
        scopes given: [String],
        account: String?,
        forceRefresh: Bool
    ) throws(CLIError) -> JSONValue {
        var request: [String: JSONValue] = ["v": 1, "force_refresh": .bool(forceRefresh)]
        let scopes = try ctx.scopes(given)
        if !scopes.isEmpty { request["scopes"] = .array(scopes.map { .string($0) }) }
        if let account = try ctx.account(account) { request["account"] = .string(account) }
        return try ctx.client().call(na_get_access_token, .object(request))
    }
}

/// `nativeauth call`.
struct CallCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Call an API with the access token; prints the response body."
    )

    @OptionGroup var options: SettingsOptions

    @Argument(help: "The API's URL.")
    var url: String

    @Option(
        name: [.customShort("s"), .customLong("scope")],
        help: ArgumentHelp("Scope (repeatable; default: the profile's scopes).", valueName: "scope")
    )
    var scopes: [String] = []

    @Option(name: [.customShort("X"), .customLong("request")], help: "HTTP method (default GET, POST with -d).")
    var method: String?

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: ArgumentHelp(
            "Request body; @FILE reads a file, @- stdin. A JSON object or array is sent as application/json "
                + "unless -H sets it."
        )
    )
    var data: String?

    @Option(
        name: [.customShort("H"), .customLong("header")],
        help: ArgumentHelp("Request header (repeatable).", valueName: "'name: value'")
    )
    var headers: [String] = []

    @Option(help: ArgumentHelp("Username or home_account_id, when several are signed in.", valueName: "account"))
    var account: String?

    @Flag(help: "Get a new token even if a cached one is valid.")
    var forceRefresh = false

    @Flag(help: "Write the body's exact bytes even on a terminal (a terminal is otherwise shown controls escaped).")
    var raw = false

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        let scopes = try ctx.scopes(self.scopes)
        guard !scopes.isEmpty else {
            throw CLIError("usage", "call needs --scope (or scopes in the profile or NATIVEAUTH_SCOPES)", .usage)
        }
        var headerMembers: [String: JSONValue] = [:]
        for (n, header) in headers.enumerated() {
            guard let colon = header.firstIndex(of: ":"), !header[..<colon].trimmingCharactersSpace.isEmpty else {
                // Not quoted back: a header without its colon ("X-Api-Key s3cret") may hold a secret.
                throw CLIError("usage", "-H (header \(n + 1) of \(headers.count)): expected 'Name: value'", .usage)
            }
            headerMembers[String(header[..<colon]).trimmingSpaces] = .string(
                String(header[header.index(after: colon)...]).trimmingSpaces
            )
        }
        var body: JSONValue? = nil
        if let data {
            let text = try Self.readBody(data)
            body = .string(text)
            if !headerMembers.keys.contains(where: { $0.lowercased() == "content-type" }),
                let parsed = try? JSONValue.parse(text)
            {
                if case .object = parsed { body = parsed }  // sent as application/json
                if case .array = parsed { body = parsed }
            }
        }
        var request: [String: JSONValue] = [
            "v": 1, "url": .string(url), "method": .string((method ?? (body == nil ? "GET" : "POST")).uppercased()),
            "scopes": .array(scopes.map { .string($0) }), "force_refresh": .bool(forceRefresh),
        ]
        if !headerMembers.isEmpty { request["headers"] = .object(headerMembers) }
        if let body { request["body"] = body }
        if let account = try ctx.account(account) { request["account"] = .string(account) }
        let response = try ctx.client().call(na_call_api, .object(request))
        let status = response["status"]?.intValue ?? 0
        if ctx.json {
            var document: [String: JSONValue] = [
                "status": .int(status), "headers": response["headers"] ?? .object([:]),
                "body": response["body"] ?? .null,
            ]
            if let b64 = response["body_base64"] { document["body_base64"] = b64 }
            Terminal.emitJSON(.object(document))
        } else {
            Self.printBody(response, raw: raw)  // escaped on a terminal, exact with --raw or to a pipe or file
        }
        guard (200..<300).contains(status) else {
            Terminal.info("nativeauth: http_error: the API answered HTTP \(status)")
            return .server
        }
        return .ok
    }

    static func readBody(_ data: String) throws(CLIError) -> String {
        guard data.hasPrefix("@") else { return data }
        let path = String(data.dropFirst())
        let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw CLIError("usage", "-d \(Terminal.safe(data)): \(String(cString: strerror(errno)))", .usage)
        }
        defer { if fd != 0 { close(fd) } }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError("usage", "-d \(Terminal.safe(data)): not UTF-8", .usage)
        }
        return text
    }
}

extension Substring {
    var trimmingCharactersSpace: String { String(self).trimmingSpaces }
}

/// `nativeauth logout`.
struct LogoutCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Sign out (forget the account's tokens)."
    )

    @OptionGroup var options: SettingsOptions

    @Option(help: ArgumentHelp("The account to sign out, when several are signed in.", valueName: "account"))
    var account: String?

    @Flag(help: "Sign every account out.")
    var all = false

    @Flag(help: "Also end the provider's browser session.")
    var browser = false

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        let client = try ctx.client()
        let before = client.accountNames()
        var request: [String: JSONValue] = ["v": 1, "all": .bool(all), "browser": browser ? "system" : "none"]
        if let account = try ctx.account(account) { request["account"] = .string(account) }
        let result = try client.call(na_sign_out, .object(request))
        let removed = result["accounts"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let gone = removed.map { before[$0].flatMap { $0.isEmpty ? nil : $0 } ?? $0 }
        if ctx.json {
            Terminal.emitJSON([
                "was_signed_in": result["was_signed_in"] ?? false, "signed_out": .array(gone.map { .string($0) }),
                "end_session_url": result["end_session_url"] ?? .null,
            ])
        } else if result["was_signed_in"]?.boolValue == true {
            Terminal.out(
                gone.isEmpty ? "Signed out." : "Signed out \(gone.map(Terminal.safe).joined(separator: ", "))."
            )
        } else {
            Terminal.out("Nobody was signed in.")
        }
        return .ok
    }
}

extension Library {
    /// home_account_id → username of the signed-in accounts.
    func accountNames() -> [String: String] {
        let accounts = (try? call(na_get_accounts, ["v": 1]))?["accounts"]?.arrayValue ?? []
        var out: [String: String] = [:]
        for a in accounts {
            if let id = a["home_account_id"]?.stringValue { out[id] = a["username"]?.stringValue ?? "" }
        }
        return out
    }
}
