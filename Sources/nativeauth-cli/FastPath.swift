// The commands git, kubectl and scripts run on every operation — `token`, `git-credential`, `kubectl-credential` —
// parsed without ArgumentParser when their arguments are plain: ArgumentParser builds its model of every command by
// reflection at each start (perf: about 1.5 ms of a 7 ms `nativeauth token`, most of it in the Swift runtime's
// conformance and metadata lookups). Anything this parser is not certain about — help, an unknown or repeated
// option, a value that starts with '-', `--`, an option stuck to its value — is left to ArgumentParser, which
// gives the same answer or the usage error; NativeAuthCLITests checks the two agree.

/// One plain invocation of a fast command, as ArgumentParser would have parsed it.
struct FastInvocation: Equatable {
    enum Command: String {
        case token
        case gitCredential = "git-credential"
        case kubectlCredential = "kubectl-credential"
    }

    var command: Command
    var scopes: [String] = []
    /// git-credential's `--host`, kubectl-credential's `--server`.
    var hosts: [String] = []
    var servers: [String] = []
    var account: String?
    var forceRefresh = false
    var operation: String?
    var given: [String: Settings.Given] = [:]
    var configFile: String?
    var profile: String?
    var json = false
    var verbose = false

    var context: Context {
        Context(given: given, configFile: configFile, profile: profile, json: json, verbose: verbose)
    }

    /// Runs the command; its exit code.
    func run() -> Int32 {
        let ctx = context
        do throws(CLIError) {
            switch command {
            case .token:
                return try TokenCommand.run(ctx, scopes: scopes, account: account, forceRefresh: forceRefresh).rawValue
            case .gitCredential:
                return try GitCredentialCommand.run(
                    ctx,
                    operation: operation ?? "",
                    scopes: scopes,
                    hosts: hosts,
                    account: account
                ).rawValue
            case .kubectlCredential:
                return try KubectlCredentialCommand.run(ctx, scopes: scopes, servers: servers, account: account)
                    .rawValue
            }
        } catch {
            return error.report(json: ctx.json)
        }
    }

    /// The settings options' names → their key in `Settings.Given` (as `SettingsOptions.given` names them).
    static let settingOptions: [String: String] = [
        "--authority": "authority", "--tenant-subdomain": "tenant_subdomain", "--client-id": "client_id",
        "--authority-type": "authority_type", "--redirect-uri": "redirect_uri", "--ca-bundle": "ca_bundle",
        "--browser-command": "browser_command", "--cache-path": "cache_path", "--proxy": "proxy",
    ]

    /// `args` (without the program's name) as a plain invocation of a fast command, or nil: ArgumentParser decides.
    static func parse(_ args: [String]) -> FastInvocation? {
        var invocation: FastInvocation?
        var seen: Set<String> = []
        var given: [String: Settings.Given] = [:]
        var json = false
        var verbose = false
        var profile: String?
        var configFile: String?
        var i = 0
        // An option's value: the next argument, or the text after '=' of a long option.
        func value(_ arg: String, _ name: String) -> String? {
            if arg.count > name.count {
                let v = String(arg.dropFirst(name.count + 1))
                return v.isEmpty || v.hasPrefix("-") ? nil : v
            }
            guard i + 1 < args.count else { return nil }
            let v = args[i + 1]
            // A value that names a command: `NativeAuthCommand.reordered` would take it for the command.
            guard !v.isEmpty, !v.hasPrefix("-"), !commandNames.contains(v) else { return nil }
            i += 1
            return v
        }
        while i < args.count {
            let arg = args[i]
            defer { i += 1 }
            guard arg.hasPrefix("-") else {
                // The command's name, then (git-credential only) its operation.
                guard let next = positional(arg, invocation, seen: seen) else { return nil }
                invocation = next
                continue
            }
            let eq = arg.firstIndex(of: "=")
            let name = eq.map { String(arg[..<$0]) } ?? arg
            guard !name.hasPrefix("--") || name.count > 2 else { return nil }  // "--"
            if eq != nil && !name.hasPrefix("--") { return nil }  // "-s=x" is not ArgumentParser's
            let canonical = ["-v": "--verbose", "-s": "--scope"][name] ?? name
            if !Self.repeatable.contains(canonical) {
                guard seen.insert(canonical).inserted else { return nil }  // repeated: ArgumentParser's rules
            }
            if eq != nil && flagNames.contains(canonical) { return nil }
            switch canonical {
            case "--json": json = true
            case "--verbose": verbose = true
            case "--no-cache": given["cache"] = .flag(false)
            case "--plaintext-cache": given["plaintext_cache"] = .flag(true)
            case "--profile":
                guard let v = value(arg, name) else { return nil }
                profile = v
            case "--config":
                guard let v = value(arg, name) else { return nil }
                configFile = v
            case "--scope", "--account", "--force-refresh", "--host", "--server":
                // Before the command: ArgumentParser's error.
                guard let current = invocation,
                    let next = commandOption(canonical, current, stuck: eq != nil, { value(arg, name) })
                else { return nil }
                invocation = next
            default:
                guard let key = settingOptions[canonical], let v = value(arg, name) else { return nil }
                if key == "authority_type" && !["ciam", "aad", "oidc"].contains(v) { return nil }
                given[key] = .text(v)
            }
        }
        guard var result = invocation else { return nil }
        if result.command == .gitCredential && result.operation == nil { return nil }
        result.given = given
        result.json = json
        result.verbose = verbose
        result.profile = profile
        result.configFile = configFile
        return result
    }

    /// A plain argument: the command's name (only global options before it), or git-credential's operation.
    static func positional(_ arg: String, _ invocation: FastInvocation?, seen: Set<String>) -> FastInvocation? {
        if invocation == nil, seen.subtracting(globalNames).isEmpty, let command = Command(rawValue: arg) {
            return FastInvocation(command: command)
        }
        guard var current = invocation, current.command == .gitCredential, current.operation == nil,
            ["get", "store", "erase"].contains(arg)
        else { return nil }
        current.operation = arg
        return current
    }

    /// An option of the command (`stuck`: given as `--name=value`); nil when ArgumentParser must decide.
    static func commandOption(
        _ canonical: String,
        _ invocation: FastInvocation,
        stuck: Bool,
        _ value: () -> String?
    ) -> FastInvocation? {
        var current = invocation
        switch canonical {
        case "--host":
            guard current.command == .gitCredential, let v = value() else { return nil }
            current.hosts.append(v)
        case "--server":
            guard current.command == .kubectlCredential, let v = value() else { return nil }
            current.servers.append(v)
        case "--force-refresh":
            guard current.command == .token, !stuck else { return nil }
            current.forceRefresh = true
        case "--account":
            guard let v = value() else { return nil }
            current.account = v
        default:
            guard let v = value() else { return nil }
            current.scopes.append(v)
        }
        return current
    }

    /// Every command's name (NativeAuthCLITests checks it against ArgumentParser's list).
    static let commandNames: Set<String> = [
        "login", "signup", "accounts", "token", "call", "logout", "status", "doctor", "emulator", "git-credential",
        "kubectl-credential", "cache", "help",
    ]

    /// The options that may be given more than once (each adds a value).
    static let repeatable: Set<String> = ["--scope", "--host", "--server"]

    static let flagNames: Set<String> = ["--json", "--verbose", "--no-cache", "--plaintext-cache", "--force-refresh"]
    /// The options every command takes, before or after its name (`NativeAuthCommand.reordered` moves the same).
    static let globalNames = NativeAuthCommand.globalFlags.union(NativeAuthCommand.globalOptions)
}
