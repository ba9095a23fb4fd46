internal import CLinux
internal import Glibc
internal import NativeAuthCore
import Synchronization

/// Starting a browser command, and letting it go.
///
/// A command is started as the child of a small `/bin/sh` (`"$@" & wait $!`, the command and the URL as its
/// arguments: nothing is parsed by the shell), which exits with the command's status. That shell is our child,
/// watched through a pidfd (a descriptor naming that process and no other, whatever reaps it and whatever gets its
/// number later). The library needs the status only until the browser fetched its start page — an opener that
/// exits non-zero before then failed, and the next command is tried. Once the page was fetched, or when the
/// sign-in's wait ends, the command is let go: the shell is killed (SIGKILL through its pidfd) and reaped at once,
/// and the command — a browser that runs for hours — is orphaned to init (or the nearest subreaper), which reaps it
/// when it exits. So no zombie is left and no thread is needed: nothing of the library outlives the call that
/// waited, or na_client_free. Without /bin/sh (a distroless image) the command is our child itself; one still
/// running when it is let go is reaped by a later launch (`ChildReaper`).
///
/// The child gets the signal mask and dispositions of a fresh process (the host may block SIGINT, or ignore
/// SIGCHLD, which would make the shell's `wait` lose the status), stdin/stdout/stderr on /dev/null, and the host's
/// environment without its `NATIVEAUTH_*` variables (they may hold secrets, such as a cache key).
final class LaunchedCommands: LaunchedBrowser, Sendable {
    private struct Running {
        let pidfd: Int32
        let viaShell: Bool
        let command: BrowserCommand
    }

    private struct State {
        var pending: [BrowserCommand]
        var current: Running?
        /// Why each command tried so far failed, in order.
        var failures: [String] = []
        var done: BrowserLaunchCheck?
    }

    private let url: String
    /// Why the default opener is not among the commands, if it is not (the last reason of a failure).
    private let skipped: String?
    private let state: Mutex<State>

    private init(url: String, commands: [BrowserCommand], skipped: String?) {
        self.url = url
        self.skipped = skipped
        state = Mutex(State(pending: commands, current: nil, done: nil))
    }

    /// Starts the first of `commands` that can be started (each found on PATH already, or not).
    static func start(_ url: String, _ commands: [BrowserCommand], skipped: String?) -> BrowserLaunch {
        let launched = LaunchedCommands(url: url, commands: commands, skipped: skipped)
        switch launched.state.withLock({ launched.next(&$0) }) {
        case .running: return .running(launched)
        case .opened: return .opened
        case .failed(let reason): return .failed(reason: reason)
        }
    }

    func check() -> BrowserLaunchCheck {
        state.withLock { s in
            if let done = s.done { return done }
            guard let running = s.current else { return next(&s) }
            switch ChildReaper.check(running.pidfd) {
            case .running:
                return .running
            case .exited(let code):
                close(running.pidfd)
                s.current = nil
                if running.command.opened.contains(code) { return finish(&s, .opened) }
                let how = code < 0 ? "was ended by a signal" : "exited with status \(code)"
                s.failures.append("\(running.command.name) \(how)")
                return next(&s)
            case .gone, .unsupported:
                // Reaped elsewhere (the host's SIGCHLD handler, SIGCHLD=SIG_IGN): the status is unknown; commands
                // such as xdg-open exit 0 once the browser was asked to show the page, so it counts as opened.
                close(running.pidfd)
                s.current = nil
                return finish(&s, .opened)
            }
        }
    }

    func release() {
        let running: Running? = state.withLock { s in
            defer {
                s.current = nil
                if s.done == nil { s.done = .opened }
            }
            return s.current
        }
        guard let running else { return }
        if running.viaShell {
            _ = nashim_pidfd_send_signal(running.pidfd, SIGKILL)
            var p = pollfd(fd: running.pidfd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, 1000)  // readable once it has exited (at once: SIGKILL cannot be caught)
        }
        if ChildReaper.check(running.pidfd) == .running {
            ChildReaper.shared.adopt(running.pidfd)  // a browser that is our child itself (no /bin/sh)
        } else {
            close(running.pidfd)
        }
    }

    deinit { release() }

    private func finish(_ s: inout State, _ outcome: BrowserLaunchCheck) -> BrowserLaunchCheck {
        s.done = outcome
        return outcome
    }

    /// Starts the next command that can be started (the state is locked).
    private func next(_ s: inout State) -> BrowserLaunchCheck {
        while !s.pending.isEmpty {
            let command = s.pending.removeFirst()
            guard command.path != nil else {
                s.failures.append("\(command.name) was not found")
                continue
            }
            switch BrowserSpawn.start(command.argv(for: url)) {
            case .failed(let reason):
                s.failures.append("\(command.name) \(reason)")
            case .finished(let opened):
                // A kernel without waitid(P_PIDFD) (before 5.4): the command was watched for two seconds.
                if opened { return finish(&s, .opened) }
                s.failures.append("\(command.name) failed")
            case .started(let pidfd, let viaShell):
                s.current = Running(pidfd: pidfd, viaShell: viaShell, command: command)
                return .running
            }
        }
        let reasons = s.failures + (skipped.map { [$0] } ?? [])
        let reason = reasons.isEmpty ? nil : reasons.joined(separator: "; ")
        return finish(&s, .failed(reason: reason))
    }
}

/// `posix_spawn` of one command line (argv[0] a path), through /bin/sh when there is one.
enum BrowserSpawn {
    enum Outcome {
        case started(pidfd: Int32, viaShell: Bool)
        /// Could not be started (the reason ends a sentence that starts with the command's name).
        case failed(String)
        /// Watched to its end already (no pidfd on this kernel): whether it opened.
        case finished(Bool)
    }

    static let shell = "/bin/sh"
    /// The command as the shell's child; the shell exits with its status.
    static let script = "\"$@\" & wait $!"

    static func start(_ argv: [String]) -> Outcome {
        guard !argv.isEmpty else { return .failed("is empty") }
        let viaShell = access(shell, X_OK) == 0
        let line = viaShell ? [shell, "-c", script, "sh"] + argv : argv
        var pid: pid_t = 0
        let rc = spawn(line, &pid)
        guard rc == 0 else {
            return .failed("could not be started (\(String(cString: strerror(rc))))")
        }
        let pidfd = nashim_pidfd_open(pid)
        guard pidfd >= 0 else { return .finished(waitWithoutPidfd(pid)) }
        if ChildReaper.check(pidfd) == .unsupported {
            close(pidfd)  // Linux 5.3 has pidfd_open but not waitid(P_PIDFD)
            return .finished(waitWithoutPidfd(pid))
        }
        return .started(pidfd: pidfd, viaShell: viaShell)
    }

    /// posix_spawn with stdin/stdout/stderr on /dev/null, an empty signal mask, default signal dispositions and the
    /// host's environment without NATIVEAUTH_* variables. An errno, or 0.
    private static func spawn(_ argv: [String], _ pid: inout pid_t) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var cargs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for p in cargs { free(p) } }
        var cenv: [UnsafeMutablePointer<CChar>?] = childEnvironment().map { strdup($0) } + [nil]
        defer { for p in cenv { free(p) } }
        return posix_spawn(&pid, argv[0], &actions, &attributes, &cargs, &cenv)
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

/// Children still running when they were let go without a shell to orphan them (no /bin/sh), each held by its
/// pidfd: reaped by a later launch, and never confused with another process that got the same PID.
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
                guard Self.check(fd) == .running else {
                    close(fd)
                    return false
                }
                return true
            }
        }
    }

    var watched: Int { pidfds.withLock { $0.count } }
}
