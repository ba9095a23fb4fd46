import Foundation
import Glibc
import NativeAuthCore
import Testing

@testable import NativeAuthKeyring

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// A fresh private directory, removed when released.
final class TempDir: @unchecked Sendable {
    let path: String
    init(_ prefix: String = "na-kr") {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { p in
            guard let base = p.baseAddress, let made = mkdtemp(base) else { return "/tmp/\(prefix)-failed" }
            return String(cString: made)
        }
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Starts `process` with no signal blocked. Foundation's `Process` spawns from the calling thread, whose mask the
/// child inherits, and the test runner's threads block nearly every signal: a dbus-daemon started from one would never
/// see SIGCHLD (so never notice that a service it started has died) nor SIGTERM.
func runUnblocked(_ process: Process) throws {
    var all = sigset_t()
    var old = sigset_t()
    sigemptyset(&all)
    pthread_sigmask(SIG_SETMASK, &all, &old)
    defer { pthread_sigmask(SIG_SETMASK, &old, nil) }
    try process.run()
}

/// What a finished command printed and how it ended.
struct CommandResult {
    let status: Int32
    let output: [UInt8]
    let stdout: String
    let stderr: String
}

/// Runs `argv` (found on PATH) with `environment`, `stdin` as its input, and waits for it.
@discardableResult
func runCommand(_ argv: [String], environment: [String: String]? = nil, stdin: String? = nil) throws -> CommandResult {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = argv
    if let environment { p.environment = environment }
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = input
    try runUnblocked(p)
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    // Two readers, so that neither pipe fills while the other is read.
    let errData = LockedData()
    let t = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    t.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    let stderr = errData.wait()
    return CommandResult(
        status: p.terminationStatus,
        output: Array(outData),
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self)
    )
}

/// Data handed from one thread to another.
final class LockedData: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?
    func set(_ d: Data) {
        condition.lock()
        data = d
        condition.signal()
        condition.unlock()
    }
    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data ?? Data()
    }
}

/// A private session bus (`dbus-daemon` with a configuration of our own: a socket in a temporary directory, EXTERNAL
/// authentication, activation only from our own service directory) and, on request, `gnome-keyring-daemon` serving
/// the Secret Service on it — with its own `HOME`, `XDG_RUNTIME_DIR`, `XDG_DATA_HOME` and so on, so that it never
/// touches the machine's keyrings. `--unlock` reads the login keyring's password ("test") from stdin and creates it
/// unlocked as the default collection. Everything is stopped and removed by `stop()` (and when released).
final class PrivateSecretService: @unchecked Sendable {
    let dir: TempDir
    let address: String
    private let bus = Process()
    private var keyring: Process?
    static let password = "test"

    /// - Parameters:
    ///   - keyring: start gnome-keyring-daemon (else the bus has no Secret Service).
    ///   - activatable: D-Bus service files for our service directory (`name.service` → its `Exec=` line), for
    ///     buses that activate a program when `org.freedesktop.secrets` is called.
    init(keyring startKeyring: Bool = true, activatable: [String: String] = [:]) throws {
        dir = TempDir("na-kr-bus")
        let d = dir.path
        for sub in ["run", "home", "data", "config", "cache", "services"] {
            try FileManager.default.createDirectory(
                atPath: "\(d)/\(sub)",
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        for (name, exec) in activatable {
            let file = "[D-BUS Service]\nName=\(name)\nExec=\(exec)\n"
            try Data(file.utf8).write(to: URL(fileURLWithPath: "\(d)/services/\(name).service"))
        }
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(d)/bus</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(d)/services</servicedir>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try Data(config.utf8).write(to: URL(fileURLWithPath: "\(d)/bus.conf"))

        bus.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        bus.arguments = ["dbus-daemon", "--config-file=\(d)/bus.conf", "--nofork", "--print-address=1"]
        bus.environment = Self.environment(d, address: nil)
        let out = Pipe()
        bus.standardOutput = out
        bus.standardError = FileHandle.nullDevice
        bus.standardInput = FileHandle.nullDevice
        try runUnblocked(bus)
        // The address is printed once the bus listens: readiness, not a delay.
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let more = out.fileHandleForReading.availableData
            guard !more.isEmpty else { throw TestFailure("dbus-daemon exited before printing its address") }
            line.append(more)
        }
        address = String(decoding: line, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""

        guard startKeyring else { return }
        let k = Process()
        k.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        k.arguments = ["gnome-keyring-daemon", "--foreground", "--components=secrets", "--unlock"]
        k.environment = environment
        let input = Pipe()
        k.standardInput = input
        k.standardOutput = FileHandle.nullDevice
        k.standardError = FileHandle.nullDevice
        try runUnblocked(k)
        keyring = k
        input.fileHandleForWriting.write(Data(Self.password.utf8))
        try input.fileHandleForWriting.close()
        try waitForSecretService()
    }

    deinit { stop() }

    /// The environment of programs that use this bus (and only this test's directories).
    var environment: [String: String] { Self.environment(dir.path, address: address) }

    private static func environment(_ d: String, address: String?) -> [String: String] {
        var env = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": "\(d)/home", "XDG_RUNTIME_DIR": "\(d)/run", "XDG_DATA_HOME": "\(d)/data",
            "XDG_CONFIG_HOME": "\(d)/config", "XDG_CACHE_HOME": "\(d)/cache", "LANG": "C.UTF-8",
        ]
        if let address { env["DBUS_SESSION_BUS_ADDRESS"] = address }
        return env
    }

    /// Waits until `org.freedesktop.secrets` has an owner and the default collection exists (polling the bus with
    /// our own client; at most 20 s).
    private func waitForSecretService() throws {
        let deadline = Deadline(seconds: 20)
        while deadline.remainingMilliseconds > 0 {
            guard keyring?.isRunning ?? false else { throw TestFailure("gnome-keyring-daemon exited") }
            if let alias = try? secretsCall("ReadAlias", [.string("default")]), alias.first?.objectPathValue != "/" {
                return
            }
            _ = poll(nil, 0, 10)
        }
        throw TestFailure("the Secret Service did not come up on \(address)")
    }

    /// Whether `name` has an owner on the bus (without starting anyone).
    func hasOwner(_ name: String) throws -> Bool {
        let c = try DBusConnection(address: address, deadline: Deadline(seconds: 5))
        let r = try c.call(
            .call(DBusConnection.bus, "/org/freedesktop/DBus", DBusConnection.bus, "NameHasOwner", [.string(name)])
        )
        guard case .boolean(let b) = r.body.first else { throw TestFailure("NameHasOwner: unexpected answer") }
        return b
    }

    /// A method of the Secret Service's service object, called with our own client, when the name is owned (a call
    /// to an unowned name would activate gnome-keyring from the system's service files… had the bus any).
    @discardableResult
    func secretsCall(
        _ member: String,
        _ body: [DBusValue],
        path: String = "/org/freedesktop/secrets"
    ) throws
        -> [DBusValue]
    {
        guard try hasOwner("org.freedesktop.secrets") else { throw TestFailure("no Secret Service yet") }
        let c = try DBusConnection(address: address, deadline: Deadline(seconds: 5))
        return try c.call(
            .call("org.freedesktop.secrets", path, "org.freedesktop.Secret.Service", member, body)
        ).body
    }

    /// Locks the default collection (gnome-keyring locks without a prompt; unlocking would need one).
    func lockDefaultCollection() throws {
        guard let collection = try secretsCall("ReadAlias", [.string("default")]).first?.objectPathValue else {
            throw TestFailure("no default collection")
        }
        let r = try secretsCall("Lock", [.objectPaths([collection])])
        guard r.count == 2, r[0].objectPathsValue == [collection], r[1].objectPathValue == "/" else {
            throw TestFailure("Lock did not lock \(collection) at once")
        }
    }

    /// `secret-tool` on this bus.
    func secretTool(_ args: [String], stdin: String? = nil) throws -> CommandResult {
        try runCommand(["secret-tool"] + args, environment: environment, stdin: stdin)
    }

    func stop() {
        for p in [keyring, bus].compactMap({ $0 }) where p.isRunning {
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
    }
}

/// A Unix socket that accepts connections and never says anything (on its own thread, until released). It reads and
/// drops what clients send, and counts the connections it accepted and those their client has closed since.
final class SilentListener: @unchecked Sendable {
    let dir = TempDir("na-kr-silent")
    let path: String
    private let stopPipe: [Int32]
    private let counts = Counts()

    /// Accepted and closed connections, shared with the listener's thread.
    final class Counts: @unchecked Sendable {
        let condition = NSCondition()
        var accepted = 0
        var closed = 0
        func update(_ body: (Counts) -> Void) {
            condition.lock()
            body(self)
            condition.broadcast()
            condition.unlock()
        }
    }

    init() throws {
        path = dir.path + "/bus"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var a = sockaddr_un()
        a.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &a.sun_path) {
            for (i, b) in bytes.enumerated() where i < $0.count - 1 { $0[i] = b }
        }
        let rc = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard rc == 0, listen(fd, 8) == 0 else { throw TestFailure("cannot listen on \(path)") }
        var p: [Int32] = [-1, -1]
        guard pipe(&p) == 0 else { throw TestFailure("pipe") }
        stopPipe = p
        let (stopFD, counts) = (p[0], counts)
        Thread {
            var open: [Int32] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                var fds =
                    [
                        pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                        pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0),
                    ] + open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
                _ = poll(&fds, nfds_t(fds.count), -1)
                if fds[1].revents != 0 { break }
                if fds[0].revents != 0 {
                    let c = accept(fd, nil, nil)
                    if c >= 0 {
                        open.append(c)  // never answered
                        counts.update { $0.accepted += 1 }
                    }
                }
                for f in fds.dropFirst(2) where f.revents != 0 {
                    let n = buffer.withUnsafeMutableBytes { read(f.fd, $0.baseAddress, $0.count) }
                    if n <= 0 {
                        close(f.fd)
                        open.removeAll { $0 == f.fd }
                        counts.update { $0.closed += 1 }
                    }
                }
            }
            for c in open { close(c) }
            close(fd)
            close(stopFD)
        }.start()
    }

    var address: String { "unix:path=" + path }

    /// Waits (at most `seconds`) until every accepted connection has been closed by its client; the counts then.
    func waitUntilClientsClose(seconds: Double = 5) -> (accepted: Int, closed: Int) {
        let until = Date().addingTimeInterval(seconds)
        counts.condition.lock()
        defer { counts.condition.unlock() }
        while counts.closed < counts.accepted && counts.condition.wait(until: until) {}
        return (counts.accepted, counts.closed)
    }

    deinit {
        _ = write(stopPipe[1], "x", 1)
        close(stopPipe[1])  // the thread closes its sockets and ends
    }
}
