import ArgumentParser
internal import Glibc
import NativeAuthCABI
import NativeAuthCache
import NativeAuthCore
import NativeAuthJSON
import NativeAuthKeyring

/// `nativeauth status`: where the tokens are kept and whether they are safe there, without a secret — the cache file,
/// whether it is encrypted and where its key lives, whether each key store answers (and how fast), the file's and
/// directory's modes, the lock files, the signed-in accounts. Exit code 0 when tokens can be stored safely, 7
/// otherwise (a plaintext file, a file or directory others may read or change, no key store that answers).
struct StatusCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Where tokens are kept and whether that is safe (exit code 7 if not); no secrets.",
        aliases: ["doctor"]
    )

    @OptionGroup var options: SettingsOptions

    /// One key store's answer: reachable or not (with the reason), how long it took, whether it holds a key for the
    /// cache file.
    struct Probe {
        let name: String
        var reachable = false
        var holdsKey = false
        var milliseconds = 0.0
        var message: String?

        var document: JSONValue {
            var d: [String: JSONValue] = [
                "reachable": .bool(reachable), "microseconds": .int(Int64(milliseconds * 1000)),
            ]
            if reachable { d["holds_key"] = .bool(holdsKey) }
            if let message { d["message"] = .string(message) }
            return .object(d)
        }

        var line: String {
            let tenths = Int(milliseconds * 10)
            let time = milliseconds < 1 ? "\(Int(milliseconds * 1000)) µs" : "\(tenths / 10).\(tenths % 10) ms"
            guard reachable else { return "unavailable (\(time)): \(message ?? "")" }
            return "reachable (\(time)), " + (holdsKey ? "holds this cache's key" : "no key for this cache")
        }
    }

    /// Asks `store` for the key of the cache file at `cachePath`: under its canonical name, then (where that differs)
    /// under the path as given, as earlier versions named it.
    static func probe(_ store: any CacheKeyStore, cachePath: String) -> Probe {
        var probe = Probe(name: store.name)
        let start = Monotonic.seconds()
        let canonical = CacheKeyring.keyName(for: cachePath)
        do {
            probe.holdsKey = try store.lookup(cachePath: canonical) != nil
            if !probe.holdsKey && canonical != cachePath {
                probe.holdsKey = try store.lookup(cachePath: cachePath) != nil
            }
            probe.reachable = true
        } catch {
            probe.message = error.message
        }
        probe.milliseconds = (Monotonic.seconds() - start) * 1000
        return probe
    }

    /// A file's mode and owner, or nil when it is not there.
    static func mode(_ path: String) -> (mode: UInt32, uid: UInt32, size: Int, isLink: Bool)? {
        var s = stat()
        guard lstat(path, &s) == 0 else { return nil }
        return (UInt32(s.st_mode) & 0o7777, s.st_uid, Int(s.st_size), (UInt32(s.st_mode) & S_IFMT) == S_IFLNK)
    }

    /// Where the key would be kept, when the client could not be made to say it: what `key_store` asks for, the first
    /// store that answered for `auto`.
    static func expectedKeyStore(_ s: Settings, secretService: Probe, kernel: Probe) -> String? {
        if s.cacheEncryptionKey != nil { return "encryption_key" }
        if s.plaintextCache { return nil }
        switch s.keyStore {
        case "auto": return secretService.reachable ? "secret_service" : kernel.reachable ? "kernel_keyring" : "none"
        default: return s.keyStore
        }
    }

    static func octal(_ mode: UInt32) -> String { "0" + String(mode, radix: 8) }

    /// The lock files beside the cache file: there or not (the library leaves them: a lock file that exists is
    /// normal), and whether a process holds it now — a non-blocking shared `flock`, refused while another process
    /// holds the lock (nil: it could not be asked, e.g. a file of another user).
    static func lockFiles(_ path: String) -> (documents: [JSONValue], lines: [String]) {
        var documents: [JSONValue] = []
        var lines: [String] = []
        for (suffix, when, now) in [
            (".lockfile", "while the file is written", "the file is being written"),
            (".refresh-lock", "during a refresh", "a refresh is running"),
        ] {
            let lock = path + suffix
            let present = mode(lock) != nil
            let held = present ? isHeld(lock) : false
            documents.append([
                "path": .string(lock), "present": .bool(present), "held": held.map { .bool($0) } ?? .null,
            ])
            let state =
                switch (present, held) {
                case (false, _): "absent; held only \(when)"
                case (true, false?): "present, not held; held only \(when)"
                case (true, true?): "present, held now: \(now)"
                case (true, nil): "present; whether it is held cannot be told"
                }
            lines.append("  lock file: \(Terminal.safe(lock)) (\(state))")
        }
        return (documents, lines)
    }

    /// Whether another process holds a `flock` on the file at `path` (nil: it cannot be opened or asked).
    static func isHeld(_ path: String) -> Bool? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK ? true : nil
    }

    /// The first bytes of the file: "NACE" is the encrypted format (NativeAuthCache's CacheEncryption).
    static func isEncrypted(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var magic = [UInt8](repeating: 0, count: 4)
        return read(fd, &magic, 4) == 4 && magic == Array("NACE".utf8)
    }

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        let settings = try ctx.settings()
        var r = StatusReport()
        var noStore = false

        // The key stores, each asked (bounded) whether it answers and holds a key for this cache.
        let path = try ctx.cachePath()
        let probePath = path ?? Settings.defaultCachePath
        let secretService = Self.probe(SecretServiceKeyStore(), cachePath: probePath)
        let kernel = Self.probe(KernelKeyringStore(), cachePath: probePath)
        r.report["key_stores"] = ["secret_service": secretService.document, "kernel_keyring": kernel.document]

        // The client these settings make (it looks the key up as `token` would), for its key store and accounts.
        var client: Library?
        var clientError: CLIError?
        do { client = try ctx.client() } catch { clientError = error }
        let info = client.flatMap { try? $0.call(na_client_info, ["v": 1]) }

        if let path {
            var cache: [String: JSONValue] = ["path": .string(path)]
            r.lines.append("Token cache: \(Terminal.safe(path))")
            Self.describeFile(path, &cache, into: &r)
            let keyStore =
                info?["config"]?["cache"]?["key_store"]?.stringValue
                ?? Self.expectedKeyStore(settings, secretService: secretService, kernel: kernel)
            noStore = Self.describeProtection(path, keyStore: keyStore, settings, &cache, into: &r)
            r.report["cache"] = .object(cache)
        } else {
            r.report["cache"] = ["type": "memory"]
            r.lines.append("Token cache: none (--no-cache): tokens stay in this process's memory")
        }
        r.lines.append("Key stores:")
        r.lines.append("  Secret Service: \(Terminal.safe(secretService.line))")
        r.lines.append("  kernel keyring: \(Terminal.safe(kernel.line))")

        if let client {
            let names = client.accountNames().values.sorted()
            r.report["accounts"] = .array(names.map { .string($0) })
            r.lines.append(
                "Accounts: " + (names.isEmpty ? "none signed in" : names.map(Terminal.safe).joined(separator: ", "))
            )
        } else if let clientError {
            r.report["client_error"] = ["code": .string(clientError.code), "message": .string(clientError.message)]
            r.lines.append(
                "Accounts: unknown (\(Terminal.safe(clientError.code)): \(Terminal.safe(clientError.message)))"
            )
            if clientError.exit == .storage, !noStore { r.problems.append(clientError.message) }
        }

        if let info {
            let network = NetworkStatus.report(info)
            r.report["network"] = network.document
            r.lines += network.lines
        }
        return r.emit(json: ctx.json)
    }

    /// The cache file: its mode, size and format, and what makes it unsafe.
    static func describeFile(_ path: String, _ cache: inout [String: JSONValue], into r: inout StatusReport) {
        if let file = Self.mode(path) {
            let encrypted = Self.isEncrypted(path)
            cache["exists"] = true
            cache["mode"] = .string(Self.octal(file.mode))
            cache["encrypted"] = .bool(encrypted)
            cache["bytes"] = .int(Int64(file.size))
            let owner = file.uid == getuid()
            var line = "  file: \(Self.octal(file.mode)), \(file.size) bytes, "
            line += encrypted ? "encrypted" : "plaintext"
            if file.isLink {
                r.problems.append("the cache file is a symbolic link (the library refuses it)")
            } else if file.mode & 0o077 != 0 || !owner {
                r.problems.append("the cache file may be read by others (\(Self.octal(file.mode)); want 0600)")
            }
            if !encrypted {
                r.problems.append(
                    "the cache file is plaintext: encrypt it with `nativeauth cache encrypt` (without "
                        + "--plaintext-cache / NATIVEAUTH_PLAINTEXT_CACHE), or sign in again without them"
                )
            }
            r.lines.append(line)
        } else {
            cache["exists"] = false
            r.lines.append("  file: not there yet (written at the first sign-in)")
        }
    }

    /// The cache's directory, its lock files and its key store; whether no key store can keep the key.
    static func describeProtection(
        _ path: String,
        keyStore: String?,
        _ settings: Settings,
        _ cache: inout [String: JSONValue],
        into r: inout StatusReport
    ) -> Bool {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        if let dir = Self.mode(directory) {
            cache["directory"] = ["path": .string(directory), "mode": .string(Self.octal(dir.mode))]
            r.lines.append("  directory: \(Terminal.safe(directory)) \(Self.octal(dir.mode))")
            if dir.mode & 0o022 != 0 || dir.uid != getuid() {
                r.problems.append("others may change the cache's directory (\(Self.octal(dir.mode)))")
            }
        } else {
            r.lines.append("  directory: \(Terminal.safe(directory)) (not there yet)")
        }
        let locks = Self.lockFiles(path)
        r.lines += locks.lines
        cache["lock_files"] = .array(locks.documents)
        // How the file is protected: the library's own answer when the client could be made (`keyStore`).
        cache["key_store"] = keyStore.map { .string($0) } ?? .null
        let noStore = keyStore == "none"
        if noStore {
            r.problems.append(
                "neither the Secret Service nor the kernel keyring can keep the cache key: give an encryption key "
                    + "(NATIVEAUTH_CACHE_ENCRYPTION_KEY) or ask for a plaintext cache (--plaintext-cache)"
            )
        }
        if let keyStore {
            let configured = settings.cacheEncryptionKey != nil ? "encryption_key" : settings.keyStore
            r.lines.append("  key: \(Terminal.safe(keyStore)) (key_store \(Terminal.safe(configured)))")
        } else {
            r.lines.append("  key: none — plaintext asked for (--plaintext-cache)")
            if Self.mode(path) == nil {
                r.problems.append(
                    "tokens would be kept in plaintext (--plaintext-cache / NATIVEAUTH_PLAINTEXT_CACHE)"
                )
            }
        }
        return noStore
    }
}

/// What `status` found: the document (`--json`), the lines (text), and the problems that make storing unsafe.
struct StatusReport {
    var problems: [String] = []
    var report: [String: JSONValue] = [:]
    var lines: [String] = []

    func emit(json: Bool) -> ExitCode {
        var report = report
        report["safe"] = .bool(problems.isEmpty)
        report["problems"] = .array(problems.map { .string($0) })
        if json {
            Terminal.emitJSON(.object(report))
        } else {
            for line in lines { Terminal.out(line) }
            if problems.isEmpty {
                Terminal.out("Tokens can be stored safely.")
            } else {
                for p in problems { Terminal.out("Not safe: \(p)") }
            }
        }
        return problems.isEmpty ? .ok : .storage
    }
}
