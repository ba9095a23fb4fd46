internal import Glibc
import Synchronization

/// Log levels, from least to most verbose. `off` is the default.
public enum LogLevel: Int32, Sendable, Comparable, CaseIterable {
    case off = 0
    case error = 1
    case warning = 2
    case info = 3
    case verbose = 4

    public var name: String {
        switch self {
        case .off: return "off"
        case .error: return "error"
        case .warning: return "warning"
        case .info: return "info"
        case .verbose: return "verbose"
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rawValue < b.rawValue }
}

/// A log line. It is built by string interpolation from non-secret parts only: `Secret`, `ContinuationToken` and
/// `RefreshToken` have no interpolation here, so putting one in a log line does not compile (`unsafeExposed` would be
/// needed, and is greppable). Messages never include request or response bodies, header values or usernames.
public struct LogMessage: ExpressibleByStringInterpolation, Sendable {
    public let text: String

    public init(stringLiteral value: String) { text = value }
    public init(stringInterpolation: Interpolation) { text = stringInterpolation.text }

    public struct Interpolation: StringInterpolationProtocol {
        var text = ""
        public init(literalCapacity: Int, interpolationCount: Int) { text.reserveCapacity(literalCapacity + 16) }
        public mutating func appendLiteral(_ literal: String) { text += literal }
        /// Text may come from outside (a server's error code, an attribute name): it is cleaned and bounded
        /// (`DisplayText`), so no log line carries a terminal escape sequence.
        public mutating func appendInterpolation(_ s: String) { text += DisplayText.bounded(s) }
        public mutating func appendInterpolation(_ s: Substring) { text += DisplayText.bounded(s) }
        public mutating func appendInterpolation<I: BinaryInteger>(_ i: I) { text += String(i) }
        public mutating func appendInterpolation(_ code: NativeAuthError.Code) { text += code.rawValue }
    }
}

/// Where log lines go: the host's sink (level, message, correlation id). Silent by default.
public typealias LogSink = @Sendable (LogLevel, String, String?) -> Void

/// A level-filtered logger whose sink the host can replace at any time from any thread.
///
/// - The level is an atomic: a disabled level costs one load, no lock.
/// - The sink is a `CallbackSlot`: replacing it waits until invocations of the old one already running on other
///   threads have returned — after `configure` returns the old sink is never called again — and a line never waits
///   for a replacement (it goes to the sink current when it starts).
/// - A sink that logs through the same logger again (it called back into the library) gets its line like any
///   other; a sink that tries to replace itself gets `false` from `configure` instead of a deadlock.
/// - Lines logged while the thread holds one of the library's locks (`holdingLines`) are delivered when it has let go
///   of them: a sink that calls back into the library never finds its own thread holding what the call needs.
public final class Logger: Sendable {
    private let level = Atomic<Int32>(0)
    private let sink: CallbackSlot<LogSink>
    /// The logger whose sink the current thread is running, if any.
    private static let running = ThreadLocal()

    public init(level: LogLevel = .off, sink: LogSink? = nil) {
        self.sink = CallbackSlot(sink)
        self.level.store(level.rawValue, ordering: .relaxed)
    }

    private var isRunningOnThisThread: Bool {
        Logger.running.value == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Replaces the sink and level. Returns false, changing nothing, when called from inside this logger's own sink.
    @discardableResult
    public func configure(level: LogLevel, sink: LogSink?) -> Bool {
        guard !isRunningOnThisThread else { return false }
        self.sink.replace(sink) { self.level.store(level.rawValue, ordering: .releasing) }
        return true
    }

    public var currentLevel: LogLevel { LogLevel(rawValue: level.load(ordering: .relaxed)) ?? .off }

    /// True when a line at `level` would reach a sink.
    public func isEnabled(_ level: LogLevel) -> Bool {
        level != .off && level.rawValue <= self.level.load(ordering: .relaxed)
    }

    /// Logs `message()` at `level` if enabled.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> LogMessage, correlationID: String? = nil) {
        guard isEnabled(level) else { return }
        if let held = HeldLines.ifAny, held.depth > 0 {
            held.lines.append((self, level, message().text, correlationID))
            return
        }
        deliver(level, message().text, correlationID)
    }

    private func deliver(_ level: LogLevel, _ text: String, _ correlationID: String?) {
        guard isEnabled(level) else { return }
        sink.invoke { sink in
            guard let sink, isEnabled(level) else { return }
            let me = Unmanaged.passUnretained(self).toOpaque()
            let outer = Logger.running.value
            Logger.running.value = me
            defer { Logger.running.value = outer }
            sink(level, text, correlationID)
        }
    }
}

extension Logger {
    /// Runs `body` holding back the log lines this thread logs meanwhile (through any logger), and delivers them when
    /// the outermost such call returns. The library wraps the places where it holds a lock that a call from a log
    /// callback could need (the token cache, the cache file's state, a flow's commit): the callback then runs after
    /// the lock is released, so it may call into the library without waiting for its own thread.
    public static func holdingLines<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        let held = HeldLines.current
        held.depth += 1
        defer {
            held.depth -= 1
            if held.depth == 0 && !held.lines.isEmpty {
                let lines = held.lines
                held.lines = []
                for (logger, level, text, correlationID) in lines { logger.deliver(level, text, correlationID) }
            }
        }
        return try body()
    }
}

/// The calling thread's held-back log lines (see `Logger.holdingLines`); one per thread, released when it ends.
private final class HeldLines {
    var depth = 0
    var lines: [(Logger, LogLevel, String, String?)] = []

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { p in
            if let p { Unmanaged<HeldLines>.fromOpaque(p).release() }
        }
        return k
    }()

    /// This thread's, if it has one (no allocation on the logging path).
    static var ifAny: HeldLines? {
        pthread_getspecific(key).map { Unmanaged<HeldLines>.fromOpaque($0).takeUnretainedValue() }
    }

    static var current: HeldLines {
        if let held = ifAny { return held }
        let held = HeldLines()
        pthread_setspecific(key, Unmanaged.passRetained(held).toOpaque())
        return held
    }
}
