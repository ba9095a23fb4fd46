internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

/// The command's exit codes (docs/command-line.md, "Exit codes and errors").
enum ExitCode: Int32 {
    case ok = 0
    case error = 1
    /// Bad usage or settings (also the library's invalid_argument, not_supported, invalid_scope, invalid_client).
    case usage = 2
    /// Sign-in needed: no_account, account_required, interaction_required, browser_required, …
    case signIn = 3
    case network = 4
    /// A server error, or `call`: the API answered a non-2xx status.
    case server = 5
    /// Authentication refused: invalid_credentials, invalid_code, user_not_found, access_denied, …
    case refused = 6
    /// The token cache cannot be used safely.
    case storage = 7
    case interrupted = 130

    /// An error code's exit code: the command line's own codes, the library's from docs/errors.tsv
    /// (`ofLibraryCode`, generated), and a code neither knows by its NA_* status family.
    static func of(code: String, status: Int32) -> ExitCode {
        switch code {
        case "usage": return .usage
        case "http_error": return .server
        default:
            if let exit = ofLibraryCode[code].flatMap(ExitCode.init(rawValue:)) { return exit }
            switch status {
            case -1: return .usage
            case -2: return .refused
            case -3, -4: return .signIn
            case -5: return .network
            case -6: return .server
            case -10: return .storage
            default: return .error
            }
        }
    }
}

/// An error to report: the library's error code (or one of the command line's own: usage, http_error,
/// unsupported_step, emulator_not_found, …), its message, the exit code, and the error document's other members for
/// `--json` (never the flow handle).
struct CLIError: Error {
    var code: String
    var message: String
    var exit: ExitCode
    var details: [String: JSONValue] = [:]
    /// The flow the library kept usable after this error, when there is one.
    var flow: String? = nil

    init(_ code: String, _ message: String, _ exit: ExitCode = .error) {
        self.code = code
        self.message = message
        self.exit = exit
    }

    /// The error of a library answer (`{"v":1,"error":{…}}` with status `rc`).
    init(library document: JSONValue, status rc: Int32) {
        let error = document["error"] ?? .object([:])
        code = error["code"]?.stringValue ?? "internal"
        message = error["message"]?.stringValue ?? "the library answered \(rc) without an error document"
        exit = ExitCode.of(code: code, status: rc)
        flow = error["flow"]?.stringValue
        if case .object(let members) = error {
            details = members.filter { $0.key != "code" && $0.key != "message" && $0.key != "flow" }
        }
    }

    /// One line on stderr, `nativeauth: <code>: <message>` (with what to do for sign-in errors: `explained`); with
    /// `json` also `{"error": {"code", "message", …}, "exit_code": N}` on stdout. Answers the exit code.
    func report(json: Bool) -> Int32 {
        Terminal.write(2, "nativeauth: \(Terminal.safe(code)): \(explained())\n")
        if json {
            var error = details
            error["code"] = .string(code)
            error["message"] = .string(message)
            Terminal.emitJSON(["error": .object(error), "exit_code": .int(Int64(exit.rawValue))])
        }
        return exit.rawValue
    }
}

/// The library, in this process, through its C ABI: the command line speaks the same documents a C program does.
final class Library: @unchecked Sendable {  // a na_client may be used from any thread
    typealias Operation = (OpaquePointer?, UnsafePointer<CChar>?, OutString?) -> Int32

    let handle: OpaquePointer

    init(configuration: JSONValue) throws(CLIError) {
        var h: OpaquePointer? = nil
        var error: UnsafeMutablePointer<CChar>? = nil
        let rc = na_client_new(configuration.serialized(), &h, &error)
        defer { na_string_free(error) }
        guard rc == 0, let h else {
            let text = error.map { String(cString: $0) } ?? "null"
            throw CLIError(library: (try? JSONValue.parse(text)) ?? .null, status: rc)
        }
        handle = h
    }

    deinit { na_client_free(handle) }

    /// One operation: its result document, or the error it answered.
    func call(_ operation: Operation, _ request: JSONValue) throws(CLIError) -> JSONValue {
        var out: UnsafeMutablePointer<CChar>? = nil
        let rc = request.serialized().withCString { operation(handle, $0, &out) }
        defer { na_string_free(out) }
        let document = out.flatMap { try? JSONValue.parse(String(cString: $0)) } ?? .null
        guard rc == 0 else { throw CLIError(library: document, status: rc) }
        return document
    }

    /// Cancels a flow (for Ctrl-C; a flow that already finished is left as it is).
    func cancel(flow: String) {
        _ = try? call(na_flow_submit, ["v": 1, "flow": .string(flow), "action": "cancel"])
    }

    /// `--verbose`: the library's log lines on stderr, made safe for the terminal.
    func logToStderr() {
        _ = na_client_set_log_callback(
            handle,
            4,
            { level, message, correlation, _ in
                guard let message else { return }
                Terminal.write(
                    2,
                    Library.logLine(level, String(cString: message), correlation.map { String(cString: $0) })
                )
            },
            nil
        )
    }

    /// One `--verbose` line: whatever the library put in the message (it escapes what it logs too; the command does
    /// not count on it), one line of safe text.
    static func logLine(_ level: Int32, _ message: String, _ correlation: String?) -> String {
        let names: [Int32: String] = [1: "error", 2: "warning", 3: "info", 4: "verbose"]
        let name = names[level] ?? String(level)
        let suffix = correlation.map { " [\(Terminal.safe($0))]" } ?? ""
        return "nativeauth: log \(name): \(Terminal.safe(message))\(suffix)\n"
    }
}
