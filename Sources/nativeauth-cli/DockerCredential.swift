internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

/// `docker-credential-nativeauth [--registry HOST[:PORT] …] [--scope SCOPE …] get|store|erase|list` (this executable
/// under that name): Docker's credential-helper protocol. `get` reads the registry's server URL on stdin and prints
/// {"ServerURL","Username","Secret"}. It answers only for a registry the user named — a key of the profile's
/// `registries = { "registry.example" = ["scope"] }`, or a `--registry` (which replaces them, as git-credential's
/// `--host` replaces `git_hosts`) — with docker's `credsStore` docker asks about every registry, and one nobody named
/// must not get the user's token, `--scope` or not. The scopes are `--scope`'s, else the registry's in the profile;
/// never the default scopes. The server URL is parsed strictly (`ServerAddress.parse`) and its host[:port] compared
/// exactly with the registries'. An unknown or unparseable registry, or nobody signed in, answers the protocol's
/// "credentials not found in native keychain" on stdout with a non-zero exit, as docker-credential-helpers do.
enum DockerCredential {
    static let notFound = "credentials not found in native keychain"

    /// The command line's options (docker itself passes none: a wrapper script does).
    struct Options {
        var scopes: [String] = []
        var registries: [String] = []
    }

    static func main(_ args: [String]) -> Int32 {
        Interrupts.install()
        var arguments = args
        guard let operation = arguments.popLast(), ["get", "store", "erase", "list", "version"].contains(operation)
        else {
            Terminal.write(2, "usage: \(usage)\n")
            return 2
        }
        let options: Options
        do throws(CLIError) { options = try parse(arguments) } catch {
            Terminal.write(2, "docker-credential-nativeauth: \(Terminal.safe(error.message))\nusage: \(usage)\n")
            return 2
        }
        let ctx: Context
        do { ctx = Context(try SettingsOptions.parse([])) } catch { return 1 }
        do throws(CLIError) {
            return try run(operation, options, ctx)
        } catch {
            Terminal.write(1, "\(Terminal.safe(error.message))\n")
            return 1
        }
    }

    static let usage =
        "docker-credential-nativeauth [--registry HOST[:PORT] …] [--scope SCOPE …] get|store|erase|list"

    /// `--scope`/`-s` and `--registry`, each `NAME VALUE` or `--NAME=VALUE`; a registry must parse.
    static func parse(_ args: [String]) throws(CLIError) -> Options {
        var options = Options()
        var i = 0
        while i < args.count {
            let arg = args[i]
            let value: String
            let name: String
            if let eq = arg.firstIndex(of: "="), arg.hasPrefix("--") {
                (name, value) = (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
                i += 1
            } else if i + 1 < args.count {
                (name, value) = (arg, args[i + 1])
                i += 2
            } else {
                throw CLIError("usage", "unknown option \(arg)", .usage)
            }
            switch name {
            case "--scope", "-s": options.scopes.append(value)
            case "--registry":
                guard registry(value) != nil else {
                    throw CLIError(
                        "usage",
                        "--registry: '\(value)' is not HOST[:PORT] (e.g. registry.contoso.com)",
                        .usage
                    )
                }
                options.registries.append(value)
            default: throw CLIError("usage", "unknown option \(name)", .usage)
            }
        }
        return options
    }

    /// A server URL's host[:port] ("https://registry.example:5000/v2/" → "registry.example:5000"), or nil when it is
    /// not a bare host[:port] nor http(s):// + host[:port] + an optional path.
    static func registry(_ serverURL: String) -> String? { ServerAddress.parse(serverURL)?.hostPort }

    /// The scopes to answer `serverURL` with, or nil when it is not a registry the user named (said on stderr when
    /// nobody named any).
    static func scopes(for serverURL: String, _ options: Options, _ settings: Settings) -> [String]? {
        guard let registry = registry(serverURL) else { return nil }
        // The profile's entry for it (its scopes), whichever way it is spelled there.
        let entry = settings.registries.keys.sorted().first { Self.registry($0) == registry }
        let named =
            options.registries.isEmpty ? entry != nil : options.registries.contains { Self.registry($0) == registry }
        guard named else {
            if options.registries.isEmpty && settings.registries.isEmpty {
                Terminal.info(
                    "docker-credential-nativeauth: not answering for \(registry): no registry is named "
                        + "(registries = { \"HOST[:PORT]\" = [\"scope\"] } in the profile, or --registry HOST[:PORT])"
                )
            }
            return nil
        }
        let scopes = options.scopes.isEmpty ? entry.flatMap { settings.registries[$0] } ?? [] : options.scopes
        return scopes.isEmpty ? nil : scopes
    }

    static func run(_ operation: String, _ options: Options, _ ctx: Context) throws(CLIError) -> Int32 {
        let settings = try ctx.settings()
        switch operation {
        case "get":
            let serverURL = Terminal.readLine() ?? ""
            // Only the registry's own scopes (the profile's `registries`) or `--scope`: never the default scopes
            // of `nativeauth token` (the profile's `scopes`, NATIVEAUTH_SCOPES).
            guard let scopes = scopes(for: serverURL, options, settings),
                let (token, username) = try helperToken(ctx, scopes: scopes, accountOption: false)
            else {
                Terminal.write(1, notFound + "\n")
                return 1
            }
            let answer: JSONValue = [
                "ServerURL": .string(serverURL), "Username": .string(username),
                "Secret": token["access_token"] ?? .null,
            ]
            Terminal.write(1, String(decoding: answer.serializedBytes() ?? [], as: UTF8.self) + "\n")
        case "list":
            var out: [String: JSONValue] = [:]
            let username = ((try? ctx.client())?.accountNames().values.first).map { $0 } ?? ""
            let names = options.registries.isEmpty ? Array(settings.registries.keys) : options.registries
            for registry in names { out[registry] = .string(username) }
            Terminal.write(1, String(decoding: JSONValue.object(out).serializedBytes() ?? [], as: UTF8.self) + "\n")
        case "version":
            Terminal.write(1, "docker-credential-nativeauth \(String(cString: na_version()))\n")
        default:
            // store: the credential comes from the sign-in (nothing of Docker's is kept); erase: nothing to forget.
            _ = Terminal.readLine()
        }
        return 0
    }
}
