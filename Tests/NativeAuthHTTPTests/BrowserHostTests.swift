import Foundation
import NativeAuthCore
import Testing

@testable import NativeAuthNet

/// Which browser the library may open, by machine: a desktop runs xdg-open; an SSH session, a machine without a
/// display and a container without one run no default opener (a sign-in then answers browser_unavailable at once,
/// saying why), though an explicit browser_command or $BROWSER still runs; WSL opens the Windows browser (wslview,
/// else explorer.exe). Each test has its own PATH of fake commands that record their arguments, and its own fake
/// /proc/version and container markers (internal parameters, not environment variables).
@Suite struct BrowserHostTests {
    /// A directory of fake commands and files, removed at the end.
    final class Machine {
        let dir: URL
        var env: [String: String]
        var files = BrowserHost.Files(procVersion: "/nonexistent/version", containerMarkers: [])

        init() throws {
            dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-host-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            env = ["PATH": dir.path]
        }

        deinit { try? FileManager.default.removeItem(at: dir) }

        /// A fake command on PATH that appends its arguments to `<name>.ran` and exits with `status`.
        func command(_ name: String, status: Int = 0) throws {
            let script = "#!/bin/sh\necho \"$@\" >> '\(dir.path)/\(name).ran'\nexit \(status)\n"
            try writeExecutable(dir.appendingPathComponent(name).path, script)
        }

        /// What the fake command was run with, one line a run (nil: never run).
        func ran(_ name: String) -> String? {
            try? String(contentsOfFile: dir.appendingPathComponent("\(name).ran").path, encoding: .utf8)
        }

        func file(_ name: String, _ text: String) throws -> String {
            let path = dir.appendingPathComponent(name).path
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }

        func launcher(command: String? = nil) -> SystemBrowserLauncher {
            let env = self.env
            return SystemBrowserLauncher(command: command, environment: { env[$0] }, fallback: nil, hostFiles: files)
        }

        /// Launches and waits (bounded) for the outcome of the commands.
        func launch(_ url: String, command: String? = nil) -> BrowserLaunchCheck {
            switch launcher(command: command).launch(url) {
            case .opened: return .opened
            case .failed(let reason): return .failed(reason: reason)
            case .running(let process):
                defer { process.release() }
                for _ in 0..<3000 {
                    let state = process.check()
                    if state != .running { return state }
                    usleep(10_000)
                }
                return .running
            }
        }
    }

    /// Written with O_CLOEXEC and closed before it is run (no child of another test's thread keeps it open for
    /// writing, which would make running it fail with "text file busy").
    static func writeExecutable(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    static let url = "http://127.0.0.1:1/start"

    @Test func aDesktopRunsXdgOpen() throws {
        let m = try Machine()
        try m.command("xdg-open")
        m.env["DISPLAY"] = ":0"
        #expect(m.launch(Self.url) == .opened)
        #expect(m.ran("xdg-open") == Self.url + "\n")
    }

    @Test(arguments: [
        (["WAYLAND_DISPLAY": ""], "there is no display (neither DISPLAY nor WAYLAND_DISPLAY is set)"),
        (["DISPLAY": ":0", "SSH_CONNECTION": "10.0.0.1 5000 10.0.0.2 22"], "an SSH session (SSH_CONNECTION is set)"),
        (["WAYLAND_DISPLAY": "wayland-0", "SSH_TTY": "/dev/pts/3"], "an SSH session (SSH_TTY is set)"),
        (["container": "podman"], "a container (container=podman) without a display"),
    ])
    func noDefaultOpenerWhereNoBrowserCanShow(variables: [String: String], why: String) throws {
        let m = try Machine()
        try m.command("xdg-open")
        m.env.merge(variables) { $1 }
        guard case .failed(let reason?) = m.launch(Self.url) else {
            Issue.record("a browser was opened")
            return
        }
        #expect(reason.contains(why), "\(reason)")
        #expect(!reason.contains(Self.url))
        #expect(m.ran("xdg-open") == nil)  // never run
    }

    @Test func aContainerMarkerFileWithoutADisplayRunsNothing() throws {
        let m = try Machine()
        try m.command("xdg-open")
        m.files.containerMarkers = ["/nonexistent/marker", try m.file("dockerenv", "")]
        guard case .failed(let reason?) = m.launch(Self.url) else {
            Issue.record("a browser was opened")
            return
        }
        #expect(reason.contains("this is a container (\(m.dir.path)/dockerenv) without a display"), "\(reason)")
        #expect(m.ran("xdg-open") == nil)
        // With a display (toolbox, distrobox, an X socket passed in) a container is a desktop.
        m.env["DISPLAY"] = ":1"
        #expect(m.launch(Self.url) == .opened)
        #expect(m.ran("xdg-open") == Self.url + "\n")
    }

    @Test func anSSHSessionStillRunsTheBrowserVariable() throws {
        let m = try Machine()
        try m.command("xdg-open")
        try m.command("remote-open")
        m.env["SSH_CONNECTION"] = "10.0.0.1 5000 10.0.0.2 22"
        m.env["BROWSER"] = "remote-open --tab %s"
        #expect(m.launch(Self.url) == .opened)
        #expect(m.ran("remote-open") == "--tab \(Self.url)\n")
        #expect(m.ran("xdg-open") == nil)
    }

    @Test(arguments: [
        "Linux version 5.15.153.1-microsoft-standard-WSL2 (root@…) #1 SMP", "Linux version 4.4.0-19041-Microsoft",
    ])
    func wslOpensTheWindowsBrowser(version: String) throws {
        let m = try Machine()
        try m.command("xdg-open")
        try m.command("wslview")
        m.files.procVersion = try m.file("version", version)
        #expect(m.launch(Self.url) == .opened)
        #expect(m.ran("wslview") == Self.url + "\n")
        #expect(m.ran("xdg-open") == nil)
    }

    @Test func wslWithoutWslviewUsesExplorerWhoseExitStatusIsOneWhenItOpened() throws {
        let m = try Machine()
        try m.command("explorer.exe", status: 1)
        m.env["WSL_DISTRO_NAME"] = "Ubuntu"
        #expect(m.launch(Self.url) == .opened)
        #expect(m.ran("explorer.exe") == Self.url + "\n")
        // Interop turned off: the Windows program cannot be run (the shell reads it as a script, and fails).
        let off = try Machine()
        try Self.writeExecutable(off.dir.appendingPathComponent("explorer.exe").path, "MZ not a Linux program\n")
        off.env["WSL_DISTRO_NAME"] = "Ubuntu"
        guard case .failed(let reason?) = off.launch(Self.url) else {
            Issue.record("opened")
            return
        }
        #expect(reason.contains("wslview was not found") && reason.contains("explorer.exe exited with status"))
    }

    @Test func theReasonRepeatsNoControlFromTheEnvironment() throws {
        let m = try Machine()
        m.env["container"] = "x\u{1B}]0;pwned\u{07}"
        m.env["BROWSER"] = "\u{1B}[2Jfake\nline"
        guard case .failed(let reason?) = m.launch(Self.url) else {
            Issue.record("a browser was opened")
            return
        }
        #expect(!reason.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(reason)")
        #expect(reason.contains("container=x]0;pwned") && reason.contains("[2Jfake"), "\(reason)")
    }

    @Test func aProcVersionWithoutMicrosoftIsNotWSL() throws {
        let m = try Machine()
        m.files.procVersion = try m.file("version", "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)")
        #expect(BrowserHost.probe(environment: { m.env[$0] }, files: m.files).wsl == false)
        m.files.procVersion = "/nonexistent/version"
        #expect(BrowserHost.probe(environment: { m.env[$0] }, files: m.files).wsl == false)
    }

    @Test func commandsAreFoundOnPATHOnlyInAbsoluteDirectories() throws {
        let m = try Machine()
        try m.command("opener")
        #expect(SystemBrowserLauncher.find("opener", path: "relative/bin::\(m.dir.path)") == m.dir.path + "/opener")
        #expect(SystemBrowserLauncher.find("opener", path: "") == nil)
        #expect(SystemBrowserLauncher.find("sh", path: nil) != nil)  // /usr/local/bin:/usr/bin:/bin
        #expect(SystemBrowserLauncher.find(m.dir.path, path: nil) == nil)  // a directory
    }
}

/// A browser command that stays running (a browser started directly rather than through xdg-open) does not hold the
/// sign-in back: `launch` answers at once, and once let go the command runs on as an orphan — not the library's
/// child, never its zombie — while the shell that watched it is reaped.
@Suite struct BrowserProcessTests {
    static func parent(of pid: Int32) -> Int32? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }

    @Test func aCommandThatStaysRunningIsLetGoWithoutAZombie() throws {
        let m = try BrowserHostTests.Machine()
        let pidFile = m.dir.appendingPathComponent("pid").path
        try BrowserHostTests.writeExecutable(
            m.dir.appendingPathComponent("browser").path,
            "#!/bin/sh\necho $$ > '\(pidFile).tmp'\nmv '\(pidFile).tmp' '\(pidFile)'\nexec sleep 30\n"
        )
        let env = m.env
        let launcher = SystemBrowserLauncher(
            command: "browser",
            environment: { env[$0] },
            fallback: nil,
            hostFiles: m.files
        )
        guard case .running(let process) = launcher.launch(BrowserHostTests.url) else {
            Issue.record("launch did not answer while the command runs")
            return
        }
        var pid: Int32? = nil
        for _ in 0..<3000 where pid == nil {
            let text = try? String(contentsOfFile: pidFile, encoding: .utf8)
            pid = text.flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if pid == nil { usleep(10_000) }
        }
        guard let pid, let shell = Self.parent(of: pid) else {
            Issue.record("the command did not start")
            return
        }
        defer { kill(pid, SIGKILL) }
        #expect(Self.parent(of: shell) == getpid())  // the watching shell is ours; the browser is its child
        #expect(process.check() == .running)
        process.release()
        #expect(kill(pid, 0) == 0)  // the browser runs on
        #expect(Self.parent(of: pid) != shell && Self.parent(of: pid) != getpid())  // orphaned: not ours to reap
        #expect(Self.parent(of: shell) != getpid())  // the shell was reaped (gone, not a zombie of ours)
        #expect(process.check() == .opened)
        process.release()  // idempotent
    }
}
