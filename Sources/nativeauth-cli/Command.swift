import ArgumentParser
internal import CNativeAuthHeader
internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

/// `nativeauth`: sign in to Microsoft Entra External ID (or any OpenID Connect provider) and use access tokens from
/// the shell and from tools that call a credential helper (git, kubectl, docker), over the library in this process.
struct NativeAuthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nativeauth",
        abstract: "Sign in to Microsoft Entra External ID (or any OpenID Connect provider) and use access tokens from "
            + "the shell.",
        discussion: epilog,
        version: versionText,
        subcommands: [
            LoginCommand.self, SignUpCommand.self, AccountsCommand.self, TokenCommand.self, CallCommand.self,
            LogoutCommand.self,
            StatusCommand.self, CacheCommand.self, EmulatorCommand.self, GitCredentialCommand.self,
            KubectlCredentialCommand.self,
        ]
    )

    /// `--version`: the command's version (the header it was built with) and the library's (the one running).
    static let versionText =
        "nativeauth \(NA_VERSION_STRING)\nlibnativeauth \(String(cString: NativeAuthCABI.na_version())) "
        + "(ABI \(NativeAuthCABI.na_abi_version()))"

    static let epilog = """
        Settings (first found wins): flags, then the environment
        (NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, NATIVEAUTH_AUTHORITY_TYPE,
        NATIVEAUTH_TENANT_SUBDOMAIN, NATIVEAUTH_REDIRECT_URI, NATIVEAUTH_CA_BUNDLE,
        NATIVEAUTH_BROWSER_COMMAND, NATIVEAUTH_CACHE (0/1), NATIVEAUTH_CACHE_PATH,
        NATIVEAUTH_KEY_STORE, NATIVEAUTH_PLAINTEXT_CACHE,
        NATIVEAUTH_CACHE_ENCRYPTION_KEY, NATIVEAUTH_SCOPES,
        NATIVEAUTH_ACCOUNT, NATIVEAUTH_PROFILE, NATIVEAUTH_CONFIG), then the
        profile of $XDG_CONFIG_HOME/nativeauth/config.toml ([profiles.NAME]
        tables; "default" unless --profile, $NATIVEAUTH_PROFILE or
        default_profile names one).

        Tokens are kept in $XDG_CACHE_HOME/nativeauth/token_cache.json
        (--cache-path, --no-cache), encrypted with a key kept in the desktop's
        Secret Service or the kernel keyring (--plaintext-cache opts out), so
        `login` and `token` may run in separate processes. `nativeauth status`
        says where tokens are kept and whether that is safe.

        Exit codes:
          0  success
          1  other error
          2  bad usage or settings (invalid_argument, not_supported, …)
          3  sign-in needed: no_account, interaction_required, …
          4  network: network, timeout, tls
          5  server error, or `call`: the API answered a non-2xx status
          6  authentication refused: invalid_credentials, invalid_code, …
          7  token cache: cache_unreadable, …, keyring_unavailable
        130  interrupted (Ctrl-C)
        Errors are one line on stderr, `nativeauth: <code>: <message>`; with
        --json also {"error": {"code", "message"}, "exit_code": N} on stdout.

        Example:
          curl -H "Authorization: Bearer $(nativeauth token -s SCOPE)" URL
        """

    /// The options every command takes, before or after its name (see `main.swift`).
    static let globalFlags: Set<String> = ["--json", "-v", "--verbose", "--no-cache", "--plaintext-cache"]
    static let globalOptions: Set<String> = [
        "--profile", "--config", "--authority", "--tenant-subdomain", "--client-id", "--authority-type",
        "--redirect-uri", "--ca-bundle", "--browser-command", "--cache-path", "--proxy",
    ]
}

extension NativeAuthCommand {
    /// The global options given before the command's name, moved after it (ArgumentParser reads a command's options
    /// after its name; `nativeauth -v login` and `nativeauth login -v` mean the same).
    static func reordered(_ args: [String]) -> [String] {
        let commands = Set(NativeAuthCommand.configuration.subcommands.compactMap { $0.configuration.commandName })
        guard let at = args.firstIndex(where: { commands.contains($0) }), at > 0 else { return args }
        var moved: [String] = []
        var kept: [String] = []
        var i = 0
        while i < at {
            let a = args[i]
            let name = String(a.split(separator: "=", maxSplits: 1).first ?? "")
            if NativeAuthCommand.globalFlags.contains(a) {
                moved.append(a)
            } else if NativeAuthCommand.globalOptions.contains(name) {
                moved.append(a)
                if !a.contains("="), i + 1 < at {
                    moved.append(args[i + 1])
                    i += 1
                }
            } else {
                kept.append(a)
            }
            i += 1
        }
        return kept + [args[at]] + moved + args[(at + 1)...]
    }
}

/// `--json` and `--verbose`.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON documents (errors too) on stdout.")
    var json = false

    @Flag(name: .shortAndLong, help: "The library's log lines (no secrets) on stderr.")
    var verbose = false
}

/// The settings every command that signs in or uses tokens takes; flags override the environment and the profile.
struct SettingsOptions: ParsableArguments {
    @OptionGroup var output: OutputOptions

    @Option(name: .long, help: ArgumentHelp("Profile of the configuration file.", valueName: "name"))
    var profile: String?

    @Option(
        help: ArgumentHelp("Configuration file (default $XDG_CONFIG_HOME/nativeauth/config.toml).", valueName: "file")
    )
    var config: String?

    @Option(help: ArgumentHelp("e.g. https://contoso.ciamlogin.com/contoso.onmicrosoft.com", valueName: "url"))
    var authority: String?

    @Option(help: ArgumentHelp("contoso → its ciamlogin.com authority.", valueName: "name"))
    var tenantSubdomain: String?

    @Option(help: ArgumentHelp("The app registration's client id.", valueName: "id"))
    var clientId: String?

    @Option(help: ArgumentHelp("ciam, aad or oidc.", valueName: "type"))
    var authorityType: String?

    @Option(help: ArgumentHelp("For --browser (default http://localhost).", valueName: "uri"))
    var redirectUri: String?

    @Option(help: ArgumentHelp("CA certificates to verify the server with.", valueName: "file"))
    var caBundle: String?

    @Option(help: ArgumentHelp("Opens the browser (the URL is appended, or replaces %s).", valueName: "cmd"))
    var browserCommand: String?

    @Option(
        help: ArgumentHelp(
            "Proxy, http[s]://[user:password@]host:port (\"\" for none); default: https_proxy, … (NO_PROXY applies).",
            valueName: "url"
        )
    )
    var proxy: String?

    @Option(
        help: ArgumentHelp("Token cache file (default $XDG_CACHE_HOME/nativeauth/token_cache.json).", valueName: "file")
    )
    var cachePath: String?

    @Flag(help: "Keep tokens in memory only (this process).")
    var noCache = false

    @Flag(help: "Keep the token cache in plaintext (0600), as MSAL for Python reads it, instead of encrypted.")
    var plaintextCache = false

    func validate() throws {
        if let t = authorityType, !["ciam", "aad", "oidc"].contains(t) {
            throw ValidationError("--authority-type must be ciam, aad or oidc")
        }
    }

    /// What the user gave on the command line, for `Settings.resolve`.
    var given: [String: Settings.Given] {
        var g: [String: Settings.Given] = [:]
        let texts: [(String, String?)] = [
            ("authority", authority), ("tenant_subdomain", tenantSubdomain), ("client_id", clientId),
            ("authority_type", authorityType), ("redirect_uri", redirectUri), ("ca_bundle", caBundle),
            ("browser_command", browserCommand), ("cache_path", cachePath), ("proxy", proxy),
        ]
        for (key, value) in texts { if let value { g[key] = .text(value) } }
        if noCache { g["cache"] = .flag(false) }
        if plaintextCache { g["plaintext_cache"] = .flag(true) }
        return g
    }
}

/// One command's run: its settings (resolved once) and the library client.
final class Context {
    let given: [String: Settings.Given]
    let configFile: String?
    let profile: String?
    let json: Bool
    let verbose: Bool
    private var resolved: Settings?

    init(given: [String: Settings.Given], configFile: String?, profile: String?, json: Bool, verbose: Bool) {
        self.given = given
        self.configFile = configFile
        self.profile = profile
        self.json = json
        self.verbose = verbose
    }

    convenience init(_ options: SettingsOptions) {
        self.init(
            given: options.given,
            configFile: options.config,
            profile: options.profile,
            json: options.output.json,
            verbose: options.output.verbose
        )
    }

    func settings() throws(CLIError) -> Settings {
        if let resolved { return resolved }
        let s = try Settings.resolve(flags: given, configFile: configFile, profile: profile)
        resolved = s
        return s
    }

    /// Scopes: the flag's (space or comma separated, repeatable), else the settings'.
    func scopes(_ given: [String]) throws(CLIError) -> [String] {
        let flags = given.flatMap(Settings.splitScopes)
        return flags.isEmpty ? try settings().scopes : flags
    }

    func account(_ given: String?) throws(CLIError) -> String? {
        if let given { return given }
        return try settings().account
    }

    /// The file the tokens are kept in, when they are.
    func cachePath() throws(CLIError) -> String? {
        let s = try settings()
        return s.cache ? (s.cachePath ?? Settings.defaultCachePath) : nil
    }

    /// The library client these settings describe; `migratePlaintext`: a plaintext cache file where the encrypted one
    /// should be is encrypted (`nativeauth cache encrypt`) rather than refused.
    func client(migratePlaintext: Bool = false) throws(CLIError) -> Library {
        let s = try settings()
        guard let clientID = s.clientID else {
            throw CLIError(
                "usage",
                "no client id: give --client-id, set NATIVEAUTH_CLIENT_ID, or set client_id in the profile "
                    + "'\(s.profile)' of the configuration file",
                .usage
            )
        }
        guard s.authority != nil || s.tenantSubdomain != nil else {
            throw CLIError(
                "usage",
                "no authority: give --authority, set NATIVEAUTH_AUTHORITY, or set authority in the profile "
                    + "'\(s.profile)' of the configuration file",
                .usage
            )
        }
        var config: [String: JSONValue] = ["v": 1, "client_id": .string(clientID)]
        let texts: [(String, String?)] = [
            ("authority", s.authority), ("tenant_subdomain", s.tenantSubdomain), ("authority_type", s.authorityType),
            ("redirect_uri", s.redirectURI), ("post_logout_redirect_uri", s.postLogoutRedirectURI),
            ("ca_bundle", s.caBundle), ("browser_command", s.browserCommand), ("proxy", s.proxy),
            ("proxy_ca_bundle", s.proxyCABundle),
        ]
        for (key, value) in texts { if let value { config[key] = .string(value) } }
        if let system = s.caBundleSystem { config["ca_bundle_system"] = .bool(system) }
        // The command line drives MFA and strong-auth registration.
        let capabilities =
            s.capabilities ?? (s.authorityType == "oidc" ? [] : ["mfa_required", "registration_required"])
        config["capabilities"] = .array(capabilities.map { .string($0) })
        if let types = s.challengeTypes { config["challenge_types"] = .array(types.map { .string($0) }) }
        if let ms = s.connectTimeoutMs { config["connect_timeout_ms"] = .int(ms) }
        if let ms = s.requestTimeoutMs { config["request_timeout_ms"] = .int(ms) }
        if let path = try cachePath() {
            var cache: [String: JSONValue] = ["type": "file", "path": .string(path)]
            if let key = s.cacheEncryptionKey {
                cache["encryption_key"] = .string(key)
            } else if !s.plaintextCache {
                cache["key_store"] = .string(s.keyStore)
            }
            if migratePlaintext && (cache["encryption_key"] != nil || cache["key_store"] != nil) {
                cache["migrate_plaintext_cache"] = true
            }
            config["cache"] = .object(cache)
        }
        let library: Library
        do {
            library = try Library(configuration: .object(config))
        } catch  where error.code == "keyring_unavailable" {
            throw CLIError(
                error.code,
                error.message
                    + " On the command line: set NATIVEAUTH_CACHE_ENCRYPTION_KEY (base64 of 32 random bytes), "
                    + "or keep the cache in plaintext with --plaintext-cache (NATIVEAUTH_PLAINTEXT_CACHE=1).",
                error.exit
            )
        }
        if verbose { library.logToStderr() }
        if case .text(let p)? = given["proxy"], Self.holdsPassword(p) {
            Terminal.info(
                "nativeauth: warning: --proxy holds a password, which other users of this machine can see (ps); "
                    + "set it in the profile's proxy or in https_proxy instead"
            )
        }
        return library
    }

    /// Whether a proxy address has a non-empty password (`scheme://user:password@host`).
    static func holdsPassword(_ proxy: String) -> Bool {
        let rest = proxy.firstRange(of: "://").map { proxy[$0.upperBound...] } ?? proxy[...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
            return false
        }
        return authority.index(after: colon) < at
    }
}

/// A command that runs with a `Context` and answers an exit code; errors are reported the command line's way.
protocol ContextCommand: ParsableCommand {
    var options: SettingsOptions { get }
    func run(_ ctx: Context) throws(CLIError) -> ExitCode
}

extension ContextCommand {
    mutating func run() throws {
        let ctx = Context(options)
        let code: Int32
        do throws(CLIError) { code = try run(ctx).rawValue } catch { code = error.report(json: ctx.json) }
        throw ExitCodeCarrier(code)
    }
}

/// Carries a command's exit code out of ArgumentParser's `run()` (see `main.swift`).
struct ExitCodeCarrier: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}
