import ArgumentParser
internal import Glibc
import NativeAuthJSON

/// `nativeauth emulator`: runs the local emulator of Entra External ID (the `nativeauth-emulator` executable:
/// `$NATIVEAUTH_EMULATOR`, else the one installed beside this command, else one on the PATH) and shows what a client
/// needs to use it. In the foreground it runs until Ctrl-C or SIGTERM, which stop the emulator cleanly, and the
/// emulator prints on the terminal (when stderr is one) each one-time code it "sends". With
/// `--print-env` it starts the emulator in the background (its own session, so the terminal's Ctrl-C does not reach
/// it), prints `export` lines for `eval` (and, as comments, how to read its outbox) and returns;
/// `kill $NATIVEAUTH_EMULATOR_PID` stops it.
struct EmulatorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run the local emulator of Entra External ID (for trying things out and tests)."
    )

    @OptionGroup var output: OutputOptions

    @Flag(
        help: ArgumentHelp(
            "Start it in the background and print `export …` lines: eval \"$(nativeauth emulator --print-env)\"; "
                + "stop it with kill $NATIVEAUTH_EMULATOR_PID."
        )
    )
    var printEnv = false

    @Option(help: "TCP port on 127.0.0.1 (default: a free one).")
    var port: Int = 0

    @Option(help: ArgumentHelp("The emulator's JSON tenant configuration.", valueName: "file"))
    var tenantConfig: String?

    @Flag(help: "Serve HTTPS with a freshly generated local CA.")
    var tls = false

    mutating func run() throws {
        let code: Int32
        do throws(CLIError) { code = try start() } catch { code = error.report(json: output.json) }
        throw ExitCodeCarrier(code)
    }

    /// `$NATIVEAUTH_EMULATOR`, else `nativeauth-emulator` beside this executable, else on the PATH.
    static func find() throws(CLIError) -> String {
        if let configured = Settings.env("NATIVEAUTH_EMULATOR") {
            guard access(configured, X_OK) == 0 else {
                throw CLIError("emulator_not_found", "NATIVEAUTH_EMULATOR=\(configured) is not an executable file")
            }
            return configured
        }
        var candidates: [String] = []
        if let me = executablePath() { candidates.append(CacheLikePath.directory(of: me) + "/nativeauth-emulator") }
        for dir in (Settings.env("PATH") ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            candidates.append("\(dir)/nativeauth-emulator")
        }
        guard let found = candidates.first(where: { access($0, X_OK) == 0 }) else {
            throw CLIError(
                "emulator_not_found",
                "no emulator: set NATIVEAUTH_EMULATOR to the nativeauth-emulator executable or put it on the PATH (in "
                    + "the source tree: `make emulator` builds .build/debug/nativeauth-emulator)"
            )
        }
        return found
    }

    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return buffer.withUnsafeBufferPointer { p in p.baseAddress.map { String(cString: $0) } }
    }

    private func start() throws(CLIError) -> Int32 {
        let binary = try Self.find()
        var argv = [binary, "--port", String(port)]
        if let tenantConfig { argv += ["--config", tenantConfig] }
        if tls { argv.append("--tls") }
        if !output.verbose { argv.append("--quiet") }
        // In the foreground the emulator shares this terminal: it prints there the one-time codes it sends (only
        // when its stderr is a terminal) and its errors; in the background (--print-env) it prints nothing.
        let stderr = !printEnv && (output.verbose || isatty(2) != 0)
        let (pid, ready) = try Self.spawn(argv, detach: printEnv, stderr: stderr)
        if printEnv {
            if output.json {
                Terminal.emitJSON(ready)
            } else {
                for (name, value) in Self.environment(ready) {
                    Terminal.write(1, "export \(name)=\(shellQuote(value))\n")
                }
                Terminal.write(1, "# stop it with: kill $NATIVEAUTH_EMULATOR_PID\n")
                Terminal.write(1, "# codes it sends: \(Self.outboxCommand(ready))\n")
                for line in Self.describe(ready) { Terminal.write(1, "# \(line)\n") }
            }
            let base = Terminal.safe(ready["base_url"]?.stringValue ?? "")
            Terminal.info(
                "nativeauth: the emulator runs in the background at \(base) (pid \(pid)); stop it with kill \(pid)"
            )
            return ExitCode.ok.rawValue
        }
        return foreground(pid, ready)
    }

    /// Starts the emulator and reads its ready line (one JSON document, once it listens).
    private static func spawn(_ argv: [String], detach: Bool, stderr: Bool) throws(CLIError) -> (pid_t, JSONValue) {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw CLIError("emulator_failed", "cannot make a pipe") }
        for fd in pipeFDs { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        if !stderr { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child starts with SIGINT unblocked (this process blocks it for its own Ctrl-C thread) and, detached, in
        // its own session.
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = Int16(POSIX_SPAWN_SETSIGMASK)
        if detach { flags |= 0x80 }  // POSIX_SPAWN_SETSID (glibc 2.26; not imported)
        posix_spawnattr_setflags(&attributes, flags)
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, argv[0], &actions, &attributes, &cargs, environ)
        close(pipeFDs[1])
        defer { close(pipeFDs[0]) }
        guard rc == 0 else {
            throw CLIError("emulator_failed", "cannot run \(argv[0]): \(String(cString: strerror(rc)))")
        }
        var line: [UInt8] = []
        var c: UInt8 = 0
        while read(pipeFDs[0], &c, 1) == 1, c != 0x0A { line.append(c) }
        guard !line.isEmpty else {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw CLIError("emulator_failed", "the emulator exited (\(status >> 8))")
        }
        guard let ready = try? JSONValue.parse(line) else {
            kill(pid, SIGTERM)
            throw CLIError("emulator_failed", "the emulator's ready line is not JSON")
        }
        return (pid, ready)
    }

    /// What a client needs, as environment variables.
    static func environment(_ ready: JSONValue) -> [(String, String)] {
        func t(_ key: String) -> String {
            switch ready[key] {
            case .string(let s)?: return Terminal.safe(s)
            case .int(let n)?: return String(n)
            default: return ""
            }
        }
        var env = [
            ("NATIVEAUTH_AUTHORITY", t("authority")), ("NATIVEAUTH_CLIENT_ID", t("client_id")),
            ("NATIVEAUTH_EMULATOR_URL", t("base_url")), ("NATIVEAUTH_EMULATOR_CONTROL_TOKEN", t("control_token")),
            ("NATIVEAUTH_EMULATOR_PID", t("pid")),
        ]
        if ready["ca_file"]?.stringValue != nil { env.append(("NATIVEAUTH_CA_BUNDLE", t("ca_file"))) }
        return env
    }

    /// The one line that reads the outbox (the codes the emulator sent), with the variables `--print-env` exports.
    static func outboxCommand(_ ready: JSONValue) -> String {
        let ca = ready["ca_file"]?.stringValue != nil ? " --cacert \"$NATIVEAUTH_CA_BUNDLE\"" : ""
        return "curl -s\(ca) -H \"X-Emulator-Token: $NATIVEAUTH_EMULATOR_CONTROL_TOKEN\" "
            + "\"$NATIVEAUTH_EMULATOR_URL/_emulator/outbox\""
    }

    /// Its APIs and demo users (the users' passwords are the demo tenant's, printed so the reader can sign in).
    static func describe(_ ready: JSONValue) -> [String] {
        let t = Terminal.safe
        var lines: [String] = []
        for api in ready["apis"]?.arrayValue ?? [] {
            let scopes = (api["scopes"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: " ")
            lines.append(
                "API \(t(api["name"]?.stringValue ?? "")): \(t(api["url"]?.stringValue ?? ""))  scopes: \(t(scopes))"
            )
        }
        for user in ready["users"]?.arrayValue ?? [] {
            let extra = user["password"]?.stringValue.map { "  password: \(t($0))" } ?? "  (email code)"
            lines.append("user \(t(user["email"]?.stringValue ?? "")) (\(t(user["kind"]?.stringValue ?? "")))\(extra)")
        }
        let controls = t(ready["controls"]?.stringValue ?? "")
        lines.append("controls: \(controls) (header X-Emulator-Token: \(t(ready["control_token"]?.stringValue ?? "")))")
        return lines
    }

    /// Shows the emulator and waits for Ctrl-C or SIGTERM, then stops it.
    private func foreground(_ pid: pid_t, _ ready: JSONValue) -> Int32 {
        // SIGINT is blocked in this process (the Ctrl-C thread takes it); SIGTERM is blocked here too and both are
        // waited for with a timeout, so the emulator exiting by itself is noticed. Both before the ready lines: a
        // program that read them may signal at once.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        Interrupts.setHandler { kill(pid, SIGTERM) }
        if output.json {
            Terminal.emitJSON(ready, compact: true)  // one line: a program reads it as the emulator's ready line
        } else {
            let authority = Terminal.safe(ready["authority"]?.stringValue ?? "")
            let clientID = Terminal.safe(ready["client_id"]?.stringValue ?? "")
            Terminal.write(1, "NativeAuth emulator running (pid \(pid)); Ctrl-C stops it.\n")
            Terminal.write(1, "authority: \(authority)\nclient id: \(clientID)\n")
            for line in Self.describe(ready) { Terminal.write(1, line + "\n") }
            if isatty(2) != 0 { Terminal.write(1, "One-time codes it sends are shown here as they are sent.\n") }
            Terminal.write(
                1,
                "\nexport NATIVEAUTH_AUTHORITY=\(shellQuote(authority)) NATIVEAUTH_CLIENT_ID=\(shellQuote(clientID))\n"
            )
        }
        while true {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                if Interrupts.interrupted.load(ordering: .acquiring) { return Self.stopped() }
                return CLIError("emulator_exited", "the emulator exited by itself (\(status >> 8))").report(json: false)
            }
            var timeout = timespec(tv_sec: 0, tv_nsec: 250_000_000)
            if sigtimedwait(&set, nil, &timeout) > 0 || Interrupts.interrupted.load(ordering: .acquiring) {
                kill(pid, SIGTERM)
                for _ in 0..<600 {
                    if waitpid(pid, &status, WNOHANG) == pid { return Self.stopped() }
                    usleep(25_000)
                }
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                return Self.stopped()
            }
        }
    }

    private static func stopped() -> Int32 {
        Terminal.write(2, "nativeauth: the emulator stopped\n")
        return ExitCode.ok.rawValue
    }
}

/// `value` quoted for a POSIX shell (as Python's shlex.quote).
func shellQuote(_ value: String) -> String {
    if !value.isEmpty,
        value.unicodeScalars.allSatisfy({
            $0.properties.isAlphabetic && $0.isASCII || "0123456789@%+=:,./-_".unicodeScalars.contains($0)
        })
    {
        return value
    }
    return "'" + value.replacing("'", with: "'\"'\"'") + "'"
}

/// Path helpers (the directory of a path).
enum CacheLikePath {
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let dir = String(path[..<slash])
        return dir.isEmpty ? "/" : dir
    }
}
