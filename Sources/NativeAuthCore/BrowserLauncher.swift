internal import Glibc
import Synchronization

/// Opens a URL in the user's browser. Returns false when it could not.
public protocol BrowserLauncher: Sendable {
    func open(_ url: String) -> Bool
}

/// The desktop's browser: the configured `browser_command`, else `$BROWSER` (a colon-separated list of commands,
/// `%s` standing for the URL, as Python's `webbrowser` reads it), else `xdg-open`. Commands are run directly
/// (`posix_spawnp`, no shell), with the URL as one argument and stdin/stdout/stderr on /dev/null. A command that
/// exits non-zero within two seconds failed and the next one is tried; one still running then (a browser itself)
/// opened the URL.
public struct SystemBrowserLauncher: BrowserLauncher {
    public let command: String?
    public let environment: @Sendable (String) -> String?
    /// The last resort (`xdg-open`; tests replace it).
    public let fallback: String

    public init(
        command: String?,
        environment: @escaping @Sendable (String) -> String?,
        fallback: String = "xdg-open"
    ) {
        self.command = command
        self.environment = environment
        self.fallback = fallback
    }

    /// The command lines to try, each as argv with the URL in place.
    public func candidates(for url: String) -> [[String]] {
        var lines: [String] = []
        if let command, !command.isEmpty { lines.append(command) }
        if let browser = environment("BROWSER"), !browser.isEmpty {
            lines += browser.split(separator: ":").map(String.init).filter { !$0.isEmpty }
        }
        lines.append(fallback)
        return lines.compactMap { line in
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard !words.isEmpty else { return nil }
            if words.contains(where: { $0.contains("%s") }) {
                return words.map { $0.replacing("%s", with: url) }
            }
            return words + [url]
        }
    }

    public func open(_ url: String) -> Bool {
        ChildReaper.shared.reap()
        for argv in candidates(for: url) where Self.run(argv) { return true }
        return false
    }

    /// Spawns `argv`; true when it exits 0 within two seconds or is still running then.
    static func run(_ argv: [String]) -> Bool {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, &cargs, environ)
        guard rc == 0 else { return false }
        for _ in 0..<200 {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                // WIFEXITED && WEXITSTATUS == 0, spelled out (the macros are not imported).
                return (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0
            }
            if r < 0 { return false }
            usleep(10_000)
        }
        ChildReaper.shared.adopt(pid)
        return true
    }
}

/// Children still running when `open` returned (browsers started directly): reaped later, never left as zombies
/// for long.
final class ChildReaper: Sendable {
    static let shared = ChildReaper()
    private let pids = Mutex<[pid_t]>([])

    func adopt(_ pid: pid_t) { pids.withLock { $0.append(pid) } }

    func reap() {
        pids.withLock { list in
            list = list.filter { pid in
                var status: Int32 = 0
                return waitpid(pid, &status, WNOHANG) == 0
            }
        }
    }
}
