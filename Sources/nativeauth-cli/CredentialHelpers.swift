import ArgumentParser
internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

// Credential helpers: git, kubectl and docker ask a helper for a credential on every operation. Each answers from the
// token cache (refreshing when needed) in a fresh process, never prompts (a helper's stdin belongs to its client),
// and answers the client's own "no credential" when nobody is signed in, so git, kubectl and docker show their own
// error or fall back to their own prompt.

/// The token a helper hands out, with the account's username, or nil when there is none to hand out (nobody signed
/// in, the sign-in must be renewed interactively). Other errors are errors.
/// `account`: the helper's `--account` (nil: NATIVEAUTH_ACCOUNT or the profile's; docker's helper takes no option).
func helperToken(
    _ ctx: Context,
    scopes: [String],
    account: String? = nil,
    accountOption: Bool = true,
    forceRefresh: Bool = false
) throws(CLIError) -> (
    token: JSONValue, username: String
)? {
    let client = try ctx.client()
    var request: [String: JSONValue] = ["v": 1, "force_refresh": .bool(forceRefresh)]
    let scopes = try ctx.scopes(scopes)
    if !scopes.isEmpty { request["scopes"] = .array(scopes.map { .string($0) }) }
    if let account = try ctx.account(account) { request["account"] = .string(account) }
    do {
        let token = try client.call(na_get_access_token, .object(request))
        try refuseDPoPToken(token)
        var account: [String: JSONValue] = ["v": 1]
        if let a = request["account"] { account["account"] = a }
        let username = (try? client.call(na_get_account, .object(account)))?["account"]?["username"]?.stringValue
        return (token, username ?? "nativeauth")
    } catch  where error.exit == .signIn {
        let text = error.explained(accountOption: accountOption, fallback: "run `nativeauth login`")
        Terminal.info("nativeauth: \(Terminal.safe(error.code)): \(text)")
        return nil
    }
}

/// A DPoP-bound token (RFC 9449) is useless as a bearer token, and is never handed out as one — not printed for
/// `Authorization: Bearer`, not given to git, kubectl or docker: `nativeauth call` sends it with a proof (`--json`
/// shows it with its type).
func refuseDPoPToken(_ token: JSONValue) throws(CLIError) {
    guard token["token_type"]?.stringValue?.lowercased() == "dpop" else { return }
    throw CLIError(
        "dpop_token",
        "The access token is DPoP-bound (token_type DPoP): it works only with a proof of the account's key, never as "
            + "a bearer token. Use `nativeauth call`, which sends it with one (or --json to see it with its type).",
        .usage
    )
}

/// A Unix time as RFC 3339 UTC ("2026-11-24T15:04:05Z").
func rfc3339(_ seconds: Int64) -> String {
    var t = time_t(seconds)
    var parts = tm()
    gmtime_r(&t, &parts)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : String(n) }
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
        + "\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
}

/// `nativeauth git-credential [--host …] [--scope …] get|store|erase`: git's credential-helper protocol
/// (`git config credential.https://dev.example.helper "!nativeauth git-credential --host dev.example --scope …"`:
/// the `!` runs it as a shell command; without it git would run `git credential-nativeauth`). It answers only for
/// the hosts named (`GitScope`).
struct GitCredentialCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "git's credential helper: the account and an access token as git's username and password."
    )

    @OptionGroup var options: SettingsOptions

    @Option(
        name: [.customShort("s"), .customLong("scope")],
        help: ArgumentHelp("Scope (repeatable).", valueName: "scope")
    )
    var scopes: [String] = []

    @Option(
        name: .customLong("host"),
        help: ArgumentHelp(
            "A host it answers for, HOST[:PORT] (repeatable; default: the profile's git_hosts).",
            valueName: "host"
        )
    )
    var hosts: [String] = []

    @Option(help: ArgumentHelp("Username or home_account_id, when several are signed in.", valueName: "account"))
    var account: String?

    @Argument(help: "get, store or erase (git calls it).")
    var operation: String

    func validate() throws {
        guard ["get", "store", "erase"].contains(operation) else { throw ValidationError("get, store or erase") }
    }

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        try Self.run(ctx, operation: operation, scopes: scopes, hosts: hosts, account: account)
    }

    /// (Also `FastPath`'s: the same command without ArgumentParser.)
    static func run(
        _ ctx: Context,
        operation: String,
        scopes: [String],
        hosts: [String],
        account: String? = nil
    ) throws(CLIError) -> ExitCode {
        // git writes the request (protocol, host, path, username, password, …) as key=value lines.
        var request: [String: String] = [:]
        while let line = Terminal.readLine(), !line.isEmpty {
            guard let eq = line.firstIndex(of: "=") else { continue }
            request[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        switch operation {
        case "get":
            guard try GitScope.answers(request, hosts: hosts, ctx, say: true) else { return .ok }  // not ours
            guard let (token, username) = try helperToken(ctx, scopes: scopes, account: account) else {
                return .ok  // none: git asks on
            }
            let value = token["access_token"]?.stringValue ?? ""
            // git takes every key=value line of the answer, so a line break in a value the provider chose would
            // write the provider's own lines (another `host`, `quit`) into git's credential. Checked byte by byte:
            // Swift's Character "\r\n" is not the Character "\n".
            guard isCredentialValue(value) && isCredentialValue(username) else {
                Terminal.info(
                    "nativeauth: git-credential: not answering: the account's username or access token holds a "
                        + "control character (a line break would end git's line)"
                )
                return .ok
            }
            var out = "username=\(username)\npassword=\(value)\n"
            if let expires = token["expires_on"]?.intValue { out += "password_expiry_utc=\(expires)\n" }
            Terminal.write(1, out)
        case "erase":
            // git rejected this password: if it is the cached token, get a new one (a forced refresh); the sign-in
            // itself is never forgotten. Only a named host's refusal counts.
            guard let rejected = request["password"], !rejected.isEmpty,
                try GitScope.answers(request, hosts: hosts, ctx, say: false),
                let (token, _) = try helperToken(ctx, scopes: scopes, account: account),
                token["access_token"]?.stringValue == rejected
            else { return .ok }
            _ = try helperToken(ctx, scopes: scopes, account: account, forceRefresh: true)
        default:
            break  // store: the credential comes from the sign-in; nothing of git's is kept
        }
        return .ok
    }
}

/// Whether `text` may be a value of git's credential protocol as this helper writes it: no control character
/// (C0, DEL) at all — git reads a line break (LF, or CR LF) as the end of the value and a NUL as the end of the text,
/// and a username or token never holds any of them.
func isCredentialValue(_ text: String) -> Bool {
    !text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
}

/// `nativeauth kubectl-credential --scope …`: a client-go exec credential plugin (kubectl runs it for every command).
struct KubectlCredentialCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "kubectl-credential",
        abstract: "kubectl's exec credential plugin: prints an ExecCredential with an access token."
    )

    @OptionGroup var options: SettingsOptions

    @Option(
        name: [.customShort("s"), .customLong("scope")],
        help: ArgumentHelp("Scope (repeatable).", valueName: "scope")
    )
    var scopes: [String] = []

    @Option(
        name: .customLong("server"),
        help: ArgumentHelp(
            "A cluster it answers for, HOST[:PORT], checked when kubectl names it (provideClusterInfo; repeatable; "
                + "default: the profile's kubectl_servers).",
            valueName: "server"
        )
    )
    var servers: [String] = []

    @Option(help: ArgumentHelp("Username or home_account_id, when several are signed in.", valueName: "account"))
    var account: String?

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        try Self.run(ctx, scopes: scopes, servers: servers, account: account)
    }

    /// (Also `FastPath`'s: the same command without ArgumentParser.)
    static func run(
        _ ctx: Context,
        scopes: [String],
        servers: [String],
        account: String? = nil
    ) throws(CLIError) -> ExitCode {
        // KUBERNETES_EXEC_INFO (set by kubectl) names the apiVersion it expects, and the cluster when the kubeconfig
        // asks it to (provideClusterInfo).
        let info = Settings.env("KUBERNETES_EXEC_INFO").flatMap { try? JSONValue.parse($0) }
        var apiVersion = "client.authentication.k8s.io/v1beta1"
        if let version = info?["apiVersion"]?.stringValue, version.hasPrefix("client.authentication.k8s.io/") {
            apiVersion = version
        }
        try KubectlScope.check(info, servers: servers, ctx)
        // None: helperToken has said why on stderr (kubectl shows it); a second error line would only repeat it.
        guard let (token, _) = try helperToken(ctx, scopes: scopes, account: account) else { return .signIn }
        var status: [String: JSONValue] = ["token": token["access_token"] ?? .null]
        if let expires = token["expires_on"]?.intValue { status["expirationTimestamp"] = .string(rfc3339(expires)) }
        Terminal.write(
            1,
            String(
                decoding: JSONValue.object([
                    "apiVersion": .string(apiVersion), "kind": "ExecCredential", "status": .object(status),
                ]).serializedBytes() ?? [],
                as: UTF8.self
            ) + "\n"
        )
        return .ok
    }
}
