import ArgumentParser
import Testing

@testable import nativeauth_cli

/// The fast commands' own parser (`FastInvocation`) against ArgumentParser: whenever it takes an invocation, it reads
/// it as ArgumentParser does; whatever it is unsure of it leaves to ArgumentParser.
@Suite("Fast path agrees with ArgumentParser")
struct FastPathTests {
    /// ArgumentParser's reading of `args` as a fast command, or nil when it is none (or a usage error).
    static func viaArgumentParser(_ args: [String]) -> FastInvocation? {
        guard let command = try? NativeAuthCommand.parseAsRoot(NativeAuthCommand.reordered(args)) else { return nil }
        func from(_ kind: FastInvocation.Command, _ o: SettingsOptions) -> FastInvocation {
            FastInvocation(
                command: kind,
                given: o.given,
                configFile: o.config,
                profile: o.profile,
                json: o.output.json,
                verbose: o.output.verbose
            )
        }
        switch command {
        case let t as TokenCommand:
            var f = from(.token, t.options)
            f.scopes = t.scopes
            f.account = t.account
            f.forceRefresh = t.forceRefresh
            return f
        case let g as GitCredentialCommand:
            var f = from(.gitCredential, g.options)
            f.scopes = g.scopes
            f.hosts = g.hosts
            f.operation = g.operation
            f.account = g.account
            return f
        case let k as KubectlCredentialCommand:
            var f = from(.kubectlCredential, k.options)
            f.scopes = k.scopes
            f.servers = k.servers
            f.account = k.account
            return f
        default:
            return nil
        }
    }

    @Test(
        "what git, kubectl and scripts run takes the fast path, read as ArgumentParser reads it",
        arguments: [
            ["token"], ["token", "-s", "api://x/Read"], ["token", "--scope", "a b", "--scope=c", "-s", "d"],
            ["token", "--account", "ann@contoso.com", "--force-refresh", "--json"],
            ["-v", "token", "--scope", "s", "--profile", "work"], ["--json", "--config", "/c.toml", "token"],
            ["token", "--authority", "https://h/t", "--client-id", "id", "--authority-type", "oidc"],
            ["token", "--cache-path", "/tmp/c.json", "--plaintext-cache", "--no-cache", "--ca-bundle", "/ca.pem"],
            ["token", "--tenant-subdomain", "contoso", "--redirect-uri", "http://localhost", "--browser-command", "x"],
            ["git-credential", "get"], ["git-credential", "--scope", "s", "erase"],
            ["git-credential", "store", "-s", "s"],
            ["git-credential", "--host", "dev.contoso.com", "--host=git.contoso.com:8443", "-s", "s", "get"],
            ["git-credential", "get", "--host", "h"], ["git-credential", "--account", "ann@contoso.com", "get"],
            ["kubectl-credential", "--account=ann@contoso.com", "-s", "s"],
            ["kubectl-credential", "-s", "s"], ["--verbose", "kubectl-credential", "--scope=s", "--json"],
            ["kubectl-credential", "--server", "k8s.example:6443", "--server=other", "-s", "s"],
        ]
    )
    func agreed(args: [String]) throws {
        let fast = try #require(FastInvocation.parse(args), "not taken: \(args)")
        #expect(fast == Self.viaArgumentParser(args), "\(args)")
    }

    @Test(
        "what it is unsure of goes to ArgumentParser",
        arguments: [
            [], ["--help"], ["token", "--help"], ["token", "-h"], ["help", "token"], ["token", "--version"],
            ["token", "--scope"], ["token", "-s", "-v"], ["token", "--scope=-x"], ["token", "-sx"], ["token", "-s=x"],
            ["token", "--", "x"], ["token", "extra"], ["token", "--account", "a", "--account", "b"],
            ["token", "--json", "--json"], ["token", "-v", "--verbose"], ["token", "--json=1"],
            ["token", "--authority-type", "saml"], ["token", "--unknown"], ["-s", "x", "token"],
            ["git-credential"], ["git-credential", "fill"], ["git-credential", "get", "get"],
            ["git-credential", "get", "--account", "a", "--account", "b"], ["kubectl-credential", "--force-refresh"],
            ["login"],
            ["git-credential", "--server", "s", "get"], ["kubectl-credential", "--host", "h"],
            ["--host", "h", "token"], ["token", "--host", "h"], ["git-credential", "--host", "get"],
            ["git-credential", "--host=-h", "get"], ["--host", "h", "git-credential", "get"],
            ["accounts"], ["token", "--scope", ""], ["token", "--profile"], ["Token"],
        ]
    )
    func declined(args: [String]) {
        #expect(FastInvocation.parse(args) == nil, "\(args)")
    }

    @Test("the command names it knows are ArgumentParser's")
    func commandNames() {
        var names: Set<String> = ["help"]
        for c in NativeAuthCommand.configuration.subcommands {
            names.insert(c.configuration.commandName ?? "")
            names.formUnion(c.configuration.aliases)
        }
        #expect(FastInvocation.commandNames == names)
    }

    /// (Async, yielding between lists: ArgumentParser's reflection is slow under ASan — most of a second a parse — and
    /// a long synchronous test would hold one of the few threads the in-process emulator's tests need.)
    @Test("random argument lists: taken means read exactly as ArgumentParser reads them")
    func random() async {
        let words = [
            "token", "git-credential", "kubectl-credential", "login", "get", "store", "erase", "-s", "--scope",
            "--scope=x", "s1", "s 2", "--account", "a@b", "--force-refresh", "--json", "-v", "--verbose", "--no-cache",
            "--plaintext-cache", "--profile", "p", "--config", "/c", "--authority", "https://h/t", "--authority-type",
            "oidc", "aad", "bad", "--client-id", "--cache-path=/x", "--", "-h", "", "-x", "--json=0", "--host",
            "--host=h:1", "--server", "--server=k:6443",
        ]
        var rng = SplitMix64(seed: 0x6e61_7469_7665)
        var taken = 0
        var tried = 0
        while taken < 80 && tried < 20_000 {
            tried += 1
            func some(_ n: UInt64) -> [String] {
                (0..<Int(rng.next() % n)).map { _ in words[Int(rng.next() % UInt64(words.count))] }
            }
            let commands = ["token", "git-credential", "kubectl-credential"]
            let args = some(3) + [commands[Int(rng.next() % 3)]] + some(6)
            guard let fast = FastInvocation.parse(args) else { continue }
            taken += 1
            #expect(fast == Self.viaArgumentParser(args), "\(args)")
            await Task.yield()
        }
        #expect(taken == 80)  // the generator reaches the fast path
    }
}

/// A small deterministic generator (the same lists on every run).
struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
