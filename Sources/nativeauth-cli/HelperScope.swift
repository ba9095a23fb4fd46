import NativeAuthJSON

/// `git-credential`'s host check. git asks every helper it is configured with about every host it talks to: with an
/// unscoped `credential.helper` (common), a clone from any server that answers 401 — a submodule, a mirror, a URL in
/// a README — asks this helper too. It answers only for the hosts the user named (`--host`, else the profile's
/// `git_hosts`), only over https (plain http only to a loopback name), and otherwise answers nothing, so git goes on
/// to its next helper or its own prompt.
enum GitScope {
    /// Whether the helper answers git's `request` (its `protocol` and `host` lines; git writes `host=name:port` when
    /// the URL has a port). When `say`, a refusal that the user's own settings cause — no host named at all, plain
    /// http to a named host — is explained in one line on stderr (git shows it); another host is silently not ours
    /// (said only with `--verbose`).
    static func answers(
        _ request: [String: String],
        hosts: [String],
        _ ctx: Context,
        say: Bool
    ) throws(CLIError) -> Bool {
        let profile = hosts.isEmpty ? try ctx.settings().gitHosts : nil
        let named = try NamedServers(hosts, flag: "--host", profile: profile, key: "git_hosts")
        let scheme = (request["protocol"] ?? "").lowercased()
        let asked = "\(scheme)://\(request["host"] ?? "")"
        guard !named.isEmpty else {
            if say {
                Terminal.info(
                    "nativeauth: git-credential: not answering for \(asked): no git host is named "
                        + "(git_hosts = [\"HOST[:PORT]\"] in the profile, or --host HOST[:PORT])"
                )
            }
            return false
        }
        guard scheme == "https" || scheme == "http", let host = request["host"],
            let address = ServerAddress.hostPort(Substring(host)), named.contains(address, over: scheme)
        else {
            if say && ctx.verbose {
                Terminal.info("nativeauth: git-credential: not answering for \(asked): not a host named")
            }
            return false
        }
        guard scheme == "https" || address.isLoopback else {
            if say { Terminal.info("nativeauth: git-credential: not answering for \(asked): \(httpsOnly)") }
            return false
        }
        return true
    }

    static let httpsOnly = "a token goes over https only (plain http only to localhost, 127.0.0.1 or [::1])"
}

/// `kubectl-credential`'s cluster check. kubectl names the cluster in `KUBERNETES_EXEC_INFO` only when the kubeconfig's
/// exec section says `provideClusterInfo: true`. A cluster it names must be https (plain http only to a loopback
/// name) and, when servers are named (`--server`, else the profile's `kubectl_servers`), one of them; with servers
/// named and no cluster to check, the helper refuses rather than trust what it cannot see. With none named the
/// kubeconfig's user entry is the scope, as before.
enum KubectlScope {
    /// Throws the reason when the helper must not answer `info` (the parsed `KUBERNETES_EXEC_INFO`, if any).
    static func check(_ info: JSONValue?, servers: [String], _ ctx: Context) throws(CLIError) {
        let profile = servers.isEmpty ? try ctx.settings().kubectlServers : nil
        let named = try NamedServers(servers, flag: "--server", profile: profile, key: "kubectl_servers")
        guard let cluster = info?["spec"]?["cluster"], case .object = cluster else {
            guard named.isEmpty else {
                throw CLIError(
                    "invalid_argument",
                    "kubectl gave no cluster to check against kubectl_servers / --server: set "
                        + "provideClusterInfo: true in the kubeconfig's exec section",
                    .usage
                )
            }
            return
        }
        let server = cluster["server"]?.stringValue ?? ""
        guard let address = ServerAddress.url(server), let scheme = address.scheme else {
            throw CLIError(
                "invalid_argument",
                "kubectl asks for a token for '\(server)', which is not an https:// address",
                .usage
            )
        }
        guard scheme == "https" || address.isLoopback else {
            throw CLIError("invalid_argument", "kubectl asks for a token for \(server): \(GitScope.httpsOnly)", .usage)
        }
        guard named.isEmpty || named.contains(address, over: scheme) else {
            throw CLIError(
                "invalid_argument",
                "kubectl asks for a token for \(server), which is not one of the servers named (kubectl_servers in "
                    + "the profile, or --server)",
                .usage
            )
        }
    }
}
