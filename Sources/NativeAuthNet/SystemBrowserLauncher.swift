internal import Glibc
public import NativeAuthCore

/// The desktop's browser: the configured `browser_command`, else `$BROWSER` (a colon-separated list of commands,
/// `%s` standing for the URL, as Python's `webbrowser` reads it), else the default opener — `xdg-open` on a desktop;
/// under WSL the Windows browser (`wslview`, else `explorer.exe`); none in an SSH session, or without a display
/// (`BrowserHost`), where a sign-in then answers `browser_unavailable` at once, saying why, instead of waiting on an
/// opener that cannot show anything. Commands are found on `PATH` (of the environment the launcher is given) and run
/// without a shell parsing them (`BrowserSpawn`), with the URL as one argument.
///
/// `launch` does not wait for a command: the sign-in serves its start page at once, and looks at the command while
/// it waits (`LaunchedCommands`). A command that exits non-zero before its page was fetched failed, and the next one
/// is tried; one still running (a browser itself) is let go once the page was fetched. Every URL the library opens
/// is a one-time address on its loopback listener (a command line is readable by every local user).
public struct SystemBrowserLauncher: BrowserLauncher {
    public let command: String?
    public let environment: @Sendable (String) -> String?
    /// Replaces the default opener (tests).
    let fallback: String?
    /// The files `BrowserHost` reads (tests give others).
    let hostFiles: BrowserHost.Files

    public init(command: String?, environment: @escaping @Sendable (String) -> String?, fallback: String? = nil) {
        self.init(command: command, environment: environment, fallback: fallback, hostFiles: BrowserHost.Files())
    }

    init(
        command: String?,
        environment: @escaping @Sendable (String) -> String?,
        fallback: String?,
        hostFiles: BrowserHost.Files
    ) {
        self.command = command
        self.environment = environment
        self.fallback = fallback
        self.hostFiles = hostFiles
    }

    /// The commands to try, in order, and why the default opener is not among them (when it is not).
    func commands() -> (commands: [BrowserCommand], skipped: String?) {
        var out: [BrowserCommand] = []
        if let command, let c = BrowserCommand.parse(command, source: "browser_command") { out.append(c) }
        if let browser = environment("BROWSER") {
            out += browser.split(separator: ":").compactMap { BrowserCommand.parse(String($0), source: "$BROWSER") }
        }
        if let fallback {
            if let c = BrowserCommand.parse(fallback, source: nil) { out.append(c) }
            return (out, nil)
        }
        let defaults = BrowserHost.probe(environment: environment, files: hostFiles).defaultOpeners()
        return (out + defaults.commands, defaults.skipped)
    }

    /// The command lines to try, each as argv with the URL in place (the programs as named, not yet found).
    public func candidates(for url: String) -> [[String]] {
        commands().commands.map { $0.argv(for: url) }
    }

    public func launch(_ url: String) -> BrowserLaunch {
        ChildReaper.shared.reap()
        var (commands, skipped) = commands()
        let path = environment("PATH")
        for i in commands.indices { commands[i].path = Self.find(commands[i].words[0], path: path) }
        return LaunchedCommands.start(url, commands, skipped: skipped)
    }

    /// Opens `url`, giving a command that still runs two seconds to fail (a launch that serves no page meanwhile).
    public func open(_ url: String) -> Bool { open(url, within: 2) }

    /// `open`, with `seconds` (of the monotonic clock) for a command to fail before it counts as the browser itself.
    public func open(_ url: String, within seconds: Double) -> Bool {
        switch launch(url) {
        case .opened: return true
        case .failed: return false
        case .running(let process):
            defer { process.release() }
            let deadline = Monotonic.seconds() + seconds
            while Monotonic.seconds() < deadline {
                switch process.check() {
                case .running: usleep(10_000)
                case .opened: return true
                case .failed: return false
                }
            }
            return true  // still running: a browser itself
        }
    }

    /// `name` as `execvp` finds it: a name with a slash as it is; else the first executable regular file of that
    /// name in `PATH` (empty entries, the current directory, are skipped; no PATH: /usr/local/bin:/usr/bin:/bin).
    static func find(_ name: String, path: String?) -> String? {
        guard !name.isEmpty else { return nil }
        if name.contains("/") { return isExecutableFile(name) ? name : nil }
        let directories = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        for dir in directories where dir.hasPrefix("/") {
            let candidate = dir.hasSuffix("/") ? "\(dir)\(name)" : "\(dir)/\(name)"
            if isExecutableFile(candidate) { return candidate }
        }
        return nil
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }
}
