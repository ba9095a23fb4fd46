internal import Glibc
import NativeAuthCore
import NativeAuthJSON
import Synchronization

/// What the command line prints, and how it reads from the user.
///
/// Text that came from outside — usernames, codes, addresses and messages from a server, a redirect, an ID token or
/// the token cache, the library's error messages and `--verbose` log lines — never reaches the terminal raw: C0
/// controls (a newline inside a value too), DEL, C1 controls, the bidirectional controls and the line and paragraph
/// separators become visible escapes (`\x1b`, `\u202e`); `--json` documents are written in ASCII, every other
/// character as a `\u` escape of the same value. `call`'s response body is escaped the same way on a terminal
/// (`safeBody`: its newlines and tabs kept); with `--raw` or to a pipe or file it is written as it came.
enum Terminal {
    /// `text` with each unsafe character as a visible escape; one line of printable text.
    static func safe(_ text: String) -> String {
        var plain = true
        for b in text.utf8 where b < 0x20 || b == 0x7F {
            plain = false
            break
        }
        if plain && text.utf8.allSatisfy({ $0 < 0x80 }) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            let v = scalar.value
            if isUnsafe(v) {
                out += v < 0x100 ? "\\x" + hex(v, 2) : "\\u" + hex(v, 4)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func isUnsafe(_ v: UInt32) -> Bool {
        switch v {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    static func hex(_ v: UInt32, _ width: Int) -> String {
        let digits = String(v, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// `safe` for each line of a message of the command line's own (its own newlines stay).
    static func lines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { safe(String($0)) }.joined(separator: "\n")
    }

    /// A document as `--json` prints it: indented (or on one line: `compact`), ASCII only, with no control
    /// character raw — every character a terminal would act on is a `\u` escape of the same value.
    static func json(_ document: JSONValue, compact: Bool = false) -> String {
        var bytes = document.serializedBytes(pretty: !compact, asciiOnly: true) ?? Array("null".utf8)
        // jansson's ASCII output still holds DEL (0x7f) raw; in JSON text it can only be inside a string.
        if bytes.contains(0x7F) {
            bytes = bytes.flatMap { $0 == 0x7F ? Array("\\u007f".utf8) : [$0] }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Output

    /// A line of the command line's own on stdout (values from outside in it are `safe` already).
    static func out(_ text: String) { write(1, lines(text) + "\n") }

    /// Bytes as they came (`call`'s response body with `--raw` or to a pipe or file).
    static func outBytes(_ bytes: [UInt8]) { bytes.withUnsafeBytes { writeAll(1, $0) } }

    /// A message on stderr.
    static func info(_ text: String) { write(2, lines(text) + "\n") }

    static func emitJSON(_ document: JSONValue, compact: Bool = false) {
        write(1, json(document, compact: compact) + "\n")
    }

    static func write(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    private static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        var done = 0
        while done < bytes.count, let base = bytes.baseAddress {
            let n = Glibc.write(fd, base + done, bytes.count - done)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            done += n
        }
    }

    // MARK: - Input

    /// Whether the spinner may draw on stderr: a terminal that is not `TERM=dumb`, and `NO_COLOR` unset or empty
    /// (https://no-color.org: no escape sequence at all then — the command has no colour, its spinner's are the
    /// only ones).
    static var mayDrawOnStderr: Bool {
        guard isatty(2) != 0 else { return false }
        if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { return false }
        guard let term = getenv("TERM") else { return true }
        return String(cString: term) != "dumb"
    }

    /// One line from stdin, without its line end; nil at end of input.
    static func readLine() -> String? {
        var bytes: [UInt8] = []
        var c: UInt8 = 0
        while true {
            let n = read(0, &c, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if c == 0x0A { break }
            bytes.append(c)
        }
        if bytes.last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A visible line (a username, a contact): the prompt on stderr, the answer from stdin. At the end of the input
    /// the prompt's line is ended before the error is reported (it starts a line of its own).
    static func prompt(_ label: String) throws(CLIError) -> String {
        write(2, safe(label))
        guard let line = readLine() else {
            write(2, "\n")
            throw CLIError("usage", "no input for \"\(label.trimmingSpaces)\"", .usage)
        }
        return line.trimmingSpaces
    }

    /// A secret, without echo: from the terminal (/dev/tty) when there is one, as getpass does; else a line of stdin.
    static func promptSecret(_ label: String) throws(CLIError) -> String {
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else {
            write(2, safe(label))
            guard let line = readLine() else {
                write(2, "\n")
                throw CLIError("usage", "no input for the secret", .usage)
            }
            return line
        }
        defer { close(tty) }
        write(tty, safe(label))
        var saved = termios()
        let canHide = tcgetattr(tty, &saved) == 0
        if canHide {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(tty, TCSAFLUSH, &quiet)
            Interrupts.restoreOnInterrupt(tty, saved)
        }
        defer {
            if canHide {
                _ = tcsetattr(tty, TCSAFLUSH, &saved)
                Interrupts.restoreOnInterrupt(-1, saved)
                write(tty, "\n")
            }
        }
        var bytes: [UInt8] = []
        defer { bytes.withUnsafeMutableBytes { if let p = $0.baseAddress { memset(p, 0, $0.count) } } }
        var c: UInt8 = 0
        while true {
            let n = read(tty, &c, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 || c == 0x0A || c == 0x0D { break }
            bytes.append(c)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\n" || l == "\r" { s.removeLast() }
        return String(s)
    }
}

/// Ctrl-C: a thread waits for SIGINT (blocked everywhere else). While a sign-in waits (`Interrupts.whileWaiting`),
/// it cancels that wait and the command exits 130 when the call returns; otherwise it restores the terminal (a
/// password prompt turns echo off) and exits 130 at once.
enum Interrupts {
    private static let state = Mutex<(cancel: (@Sendable () -> Void)?, tty: Int32, saved: termios?)>(
        (nil, -1, nil)
    )
    static let interrupted = Atomic<Bool>(false)

    /// Blocks SIGINT in this thread (and the threads it makes) and starts the thread that waits for it.
    static func install() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        var thread = pthread_t()
        _ = pthread_create(
            &thread,
            nil,
            { _ in
                var set = sigset_t()
                sigemptyset(&set)
                sigaddset(&set, SIGINT)
                var signal: Int32 = 0
                while sigwait(&set, &signal) == 0 {
                    Interrupts.interrupted.store(true, ordering: .releasing)
                    let (cancel, tty, saved) = Interrupts.state.withLock { ($0.cancel, $0.tty, $0.saved) }
                    if let cancel {
                        cancel()  // the waiting call returns "cancelled"; the command then exits 130
                        continue
                    }
                    if var saved, tty >= 0 { _ = tcsetattr(tty, TCSAFLUSH, &saved) }
                    Terminal.write(2, "\nnativeauth: interrupted\n")
                    _exit(130)
                }
                return nil
            },
            nil
        )
    }

    /// What Ctrl-C does from now on instead of exiting (nil: exit 130 at once).
    static func setHandler(_ handler: (@Sendable () -> Void)?) {
        state.withLock { $0.cancel = handler }
    }

    static func restoreOnInterrupt(_ tty: Int32, _ saved: termios) {
        state.withLock {
            $0.tty = tty
            $0.saved = tty >= 0 ? saved : nil
        }
    }

    /// Runs `work` (a blocking library call) with `cancel` as what Ctrl-C does meanwhile, showing a spinner with
    /// `label` on stderr when it may draw there (`Terminal.mayDrawOnStderr`); on a terminal where it may not
    /// (`NO_COLOR`, `TERM=dumb`), one plain line instead; into a pipe or a file, nothing.
    static func whileWaiting<T>(
        _ label: String,
        cancel: @escaping @Sendable () -> Void,
        _ work: () throws(CLIError) -> T
    ) throws(CLIError) -> T {
        state.withLock { $0.cancel = cancel }
        let spinner = Terminal.mayDrawOnStderr ? Spinner(label) : nil
        spinner?.start()
        if spinner == nil && isatty(2) != 0 { Terminal.info("\(label)… (Ctrl-C to stop)") }
        defer {
            spinner?.stop()
            state.withLock { $0.cancel = nil }
        }
        let result = Result { () throws(CLIError) -> T in try work() }
        if interrupted.load(ordering: .acquiring) {
            Terminal.write(2, "\nnativeauth: interrupted\n")
            exit(130)
        }
        return try result.get()
    }
}

/// A spinner line on stderr ("⠋ Waiting for … (12 s, Ctrl-C to stop)"), redrawn every 100 ms by its own thread.
final class Spinner: @unchecked Sendable {  // `thread` is touched by start/stop on the main thread only
    private let label: String
    private let running = Atomic<Bool>(false)
    private var thread = pthread_t()
    private static let frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

    /// `label` may hold text from outside (a server's message): it is shown `Terminal.safe`.
    init(_ label: String) { self.label = Terminal.safe(label) }

    /// One frame of the spinner line: its own controls (CR, erase to the end of the line) around safe text.
    static func line(_ frame: Int, _ label: String, seconds: Int) -> String {
        "\r\(frames[frame % frames.count]) \(label) (\(seconds) s, Ctrl-C to stop)\u{1B}[K"
    }

    func start() {
        running.store(true, ordering: .releasing)
        let box = Unmanaged.passRetained(self).toOpaque()
        _ = pthread_create(
            &thread,
            nil,
            { raw in
                guard let raw else { return nil }
                let spinner = Unmanaged<Spinner>.fromOpaque(raw).takeRetainedValue()
                let started = Monotonic.seconds()
                var i = 0
                while spinner.running.load(ordering: .acquiring) {
                    let seconds = Int(Monotonic.seconds() - started)
                    Terminal.write(2, Spinner.line(i, spinner.label, seconds: seconds))
                    i += 1
                    usleep(100_000)
                }
                Terminal.write(2, "\r\u{1B}[K")
                return nil
            },
            box
        )
    }

    func stop() {
        running.store(false, ordering: .releasing)
        pthread_join(thread, nil)
    }
}
