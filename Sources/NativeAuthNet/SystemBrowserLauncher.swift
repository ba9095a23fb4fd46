internal import CLinux
internal import Glibc
public import NativeAuthCore
import Synchronization

/// The desktop's browser: the configured `browser_command`, else `$BROWSER` (a colon-separated list of commands,
/// `%s` standing for the URL, as Python's `webbrowser` reads it), else `xdg-open`. Commands are run directly
/// (`posix_spawnp`, no shell), with the URL as one argument, stdin/stdout/stderr on /dev/null, and the host's
/// environment without its `NATIVEAUTH_*` variables (they may hold secrets, such as a cache key). A command that
/// exits non-zero within two seconds failed and the next one is tried; one still running then (a browser itself)
/// opened the URL. Every URL the library opens is a one-time address on its loopback listener (a command line is
/// readable by every local user), except a custom-scheme sign-in's authorization URL.
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

    /// The environment a browser is started with: the host's, without `NATIVEAUTH_*` variables.
    static func childEnvironment() -> [String] {
        var out: [String] = []
        let env: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = environ
        guard var p = env else { return out }
        while let entry = p.pointee {
            let variable = String(cString: entry)
            if !variable.hasPrefix("NATIVEAUTH_") { out.append(variable) }
            p += 1
        }
        return out
    }

    /// Spawns `argv`; true when it exits 0 within two seconds or is still running then.
    ///
    /// The child is watched through a pidfd (Linux 5.4+), which names that process and no other: the host may reap
    /// our child itself (a SIGCHLD handler calling `waitpid(-1)`), after which its PID may be reused, and
    /// `waitpid(pid)` would then reap (and steal the status of) an unrelated child of the host. A child reaped
    /// elsewhere before we looked (by the kernel under `SIGCHLD=SIG_IGN`, or by the host) exited with a status we
    /// cannot know: it counts as opened (commands such as xdg-open exit 0 once the browser is asked to show the
    /// page; a command that failed then looks like a browser the user never used, and the sign-in times out).
    static func run(_ argv: [String]) -> Bool {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var cenv: [UnsafeMutablePointer<CChar>?] = childEnvironment().map { strdup($0) } + [nil]
        defer { for p in cenv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, &cargs, &cenv)
        guard rc == 0 else { return false }
        let pidfd = nashim_pidfd_open(pid)
        guard pidfd >= 0 else { return Self.waitWithoutPidfd(pid) }
        var leftMs: Int32 = 2000
        var started = timespec()
        clock_gettime(CLOCK_MONOTONIC, &started)
        while true {
            switch ChildReaper.check(pidfd) {
            case .exited(let code):
                close(pidfd)
                return code == 0
            case .gone:
                close(pidfd)
                return true  // reaped elsewhere, status unknown (see above)
            case .unsupported:
                close(pidfd)  // Linux 5.3 has pidfd_open but not waitid(P_PIDFD)
                return Self.waitWithoutPidfd(pid)
            case .running:
                guard leftMs > 0 else {
                    ChildReaper.shared.adopt(pidfd)
                    return true
                }
                var p = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
                _ = poll(&p, 1, leftMs)  // readable when the child exits
                var t = timespec()
                clock_gettime(CLOCK_MONOTONIC, &t)
                let elapsed = (t.tv_sec - started.tv_sec) * 1000 + (t.tv_nsec - started.tv_nsec) / 1_000_000
                leftMs = Int32(clamping: max(0, 2000 - elapsed))
            }
        }
    }

    /// Kernels before 5.4 cannot wait on a pidfd: the first two seconds are watched with `waitpid` (right after the
    /// spawn the PID is still our child's, unless the host reaps it meanwhile), and a child still running then is not
    /// watched any longer (a zombie after it exits, until the host or process exit reaps it) rather than waited for
    /// by a PID that may have been reused.
    private static func waitWithoutPidfd(_ pid: pid_t) -> Bool {
        for _ in 0..<200 {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid {
                // WIFEXITED && WEXITSTATUS == 0, spelled out (the macros are not imported).
                return (status & 0x7f) == 0 && ((status >> 8) & 0xff) == 0
            }
            if r < 0 { return errno == ECHILD }  // reaped elsewhere: status unknown, counted as opened
            usleep(10_000)
        }
        return true
    }
}

/// Children still running when `open` returned (browsers started directly), each held by its pidfd: reaped later,
/// never left as zombies for long, and never confused with another process that got the same PID.
final class ChildReaper: Sendable {
    static let shared = ChildReaper()
    private let pidfds = Mutex<[Int32]>([])

    enum State: Equatable {
        case running
        /// Exited and reaped now: its exit status (-1: ended by a signal).
        case exited(Int32)
        /// Reaped already (by the kernel under SIGCHLD=SIG_IGN, or by the host), or not ours (ECHILD).
        case gone
        /// The kernel cannot wait on a pidfd (EINVAL before Linux 5.4).
        case unsupported
    }

    /// Whether the child behind `pidfd` still runs; reaps it if it exited. Only that child is ever waited for.
    static func check(_ pidfd: Int32) -> State {
        while true {
            var code: Int32 = 0
            switch nashim_pidfd_reap(pidfd, &code) {
            case 0: return .running
            case 1: return .exited(code)
            default:
                switch errno {
                case EINTR: continue
                case ECHILD: return .gone
                default: return .unsupported
                }
            }
        }
    }

    func adopt(_ pidfd: Int32) { pidfds.withLock { $0.append(pidfd) } }

    func reap() {
        pidfds.withLock { list in
            list = list.filter { fd in
                guard Self.check(fd) != .running else { return true }
                close(fd)
                return false
            }
        }
    }

    var watched: Int { pidfds.withLock { $0.count } }
}
