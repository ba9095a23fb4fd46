import Synchronization

/// Where log lines go: the host's callback (level, message, correlation id). Silent by default.
///
/// Messages are built by the library from non-secret parts only (endpoint paths, status codes, error codes);
/// no request or response body, header value, token, code, password or username is ever logged.
public typealias LogSink = @Sendable (LogLevel, String, String?) -> Void

/// A level-filtered logger whose sink can be replaced at any time from any thread.
public final class Logger: Sendable {
    private struct State {
        var level: LogLevel
        var sink: LogSink?
    }

    private let state: Mutex<State>

    public init(level: LogLevel = .off, sink: LogSink? = nil) {
        state = Mutex(State(level: level, sink: sink))
    }

    public func configure(level: LogLevel, sink: LogSink?) {
        state.withLock { $0 = State(level: level, sink: sink) }
    }

    public func setLevel(_ level: LogLevel) { state.withLock { $0.level = level } }

    public var level: LogLevel { state.withLock { $0.level } }

    /// Logs `message()` at `level` if enabled. The sink is called outside the lock.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, correlationID: String? = nil) {
        guard level != .off else { return }
        let sink: LogSink? = state.withLock { s in (s.sink != nil && level <= s.level) ? s.sink : nil }
        guard let sink else { return }
        sink(level, message(), correlationID)
    }
}
