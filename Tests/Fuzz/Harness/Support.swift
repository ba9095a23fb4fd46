// What the fuzz targets share: a clock that never waits, clients in the C ABI's handle table, calls through the
// exports, and the checks every answer must pass. A failed check is a `finding` — a crash, which is how libFuzzer
// reports one (and saves the input).
import Glibc
import NativeAuthCore
import NativeAuthHTTP
import NativeAuthJSON
import Synchronization

@testable import NativeAuthCABI

/// Writes a line to stderr.
func printError(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Whether `text` holds the bytes of `needle` (a byte search: the checks run on every answer and log line).
func has(_ text: String, _ needle: String) -> Bool {
    var t = text
    var n = needle
    return t.withUTF8 { tb in
        n.withUTF8 { nb in
            guard let tp = tb.baseAddress, let np = nb.baseAddress else { return nb.isEmpty }
            var i = 0
            while i + nb.count <= tb.count {
                if tp[i] == np[0] && memcmp(tp + i, np, nb.count) == 0 { return true }
                i += 1
            }
            return false
        }
    }
}

/// Stops the process with a finding: what was wrong, and the document or value it was about.
func finding(_ what: String, _ context: String = "") -> Never {
    fatalError("finding: \(what)\n\(context.prefix(4000))")
}

/// Time for fuzzing: starts at a fixed instant and moves only when the library sleeps, which returns at once. As with
/// `SystemClock`, a wait that is not positive (NaN, zero, negative) returns at once. A wait the library says it never
/// makes — longer than 10 s, the longest Retry-After or poll interval it honours — is a finding: `SystemClock` would
/// block the caller that long, or trap on an infinite wait.
final class FuzzClock: Clock, Sendable {
    static let start = 1_800_000_000.0
    private let t = Mutex<Double>(FuzzClock.start)

    func now() -> Double { t.withLock { $0 } }

    /// Jumps forward to `time` (recording seeds: the client's clock follows the emulator's).
    func advance(to time: Double) { t.withLock { $0 = max($0, time) } }

    func sleep(_ seconds: Double) {
        guard seconds > 0 else { return }
        guard seconds <= 10 else { finding("the library asked to sleep \(seconds) s (it waits at most 10 s)") }
        t.withLock { $0 += seconds }
    }
}

typealias Export = @Sendable (OpaquePointer?, UnsafePointer<CChar>?, OutString?) -> Int32

/// Every export that takes a client and a request document, by name.
let requestExports: [(name: String, fn: Export)] = [
    ("na_sign_in", na_sign_in), ("na_sign_up", na_sign_up), ("na_reset_password", na_reset_password),
    ("na_flow_submit", na_flow_submit), ("na_get_access_token", na_get_access_token), ("na_call_api", na_call_api),
    ("na_get_account", na_get_account), ("na_sign_out", na_sign_out), ("na_client_info", na_client_info),
    ("na_dpop_proof", na_dpop_proof),
]

/// One answer of an export: its status, its document as text and parsed.
struct Reply {
    let rc: Int32
    let text: String
    let doc: JSONValue

    subscript(_ key: String) -> JSONValue? { doc[key] }
    var status: String? { doc["status"]?.stringValue }
    var flow: String? { doc["flow"]?.stringValue ?? doc["error"]?["flow"]?.stringValue }
    var errorCode: String? { doc["error"]?["code"]?.stringValue }
}

/// Calls `export` with `request` as a C string (a NUL inside the input ends it, as it would for a C caller) and
/// checks the answer.
func call(_ export: Export, _ handle: OpaquePointer?, _ request: [UInt8]) -> Reply {
    var out: UnsafeMutablePointer<CChar>? = nil
    let rc = (request + [0]).withUnsafeBufferPointer { p in
        p.withMemoryRebound(to: CChar.self) { export(handle, $0.baseAddress, &out) }
    }
    guard let out else { finding("an export returned \(rc) and no answer document") }
    let bytes = UnsafeRawBufferPointer(start: out, count: strlen(out))
    guard let text = String(validating: bytes, as: UTF8.self) else { finding("an answer is not UTF-8") }
    na_string_free(out)
    if traceCalls { printError("  \(rc) \(text.prefix(160))") }
    return Reply(rc: rc, text: text, doc: checkAnswer(rc, text, request: request))
}

/// NATIVEAUTH_FUZZ_TRACE=1 prints every answer (to see how far an input takes a flow).
let traceCalls = getenv("NATIVEAUTH_FUZZ_TRACE") != nil

func call(_ export: Export, _ handle: OpaquePointer?, _ request: JSONValue) -> Reply {
    call(export, handle, request.serializedBytes() ?? [])
}

/// What every answer document must be (include/nativeauth.h): a JSON object with "v":1; NA_OK exactly when it has no
/// "error"; an error has a code from the library's table, whose category is the status returned, and a message; the
/// continuation and refresh tokens of the scripted server never appear in an answer (unless the request or the fuzz
/// input held that text: answers may quote scopes, configuration values, API answers and server error details).
@discardableResult
func checkAnswer(_ rc: Int32, _ text: String, request: [UInt8] = []) -> JSONValue {
    guard let doc = try? JSONValue.parse(text), case .object(let o) = doc else {
        finding("an answer is not a JSON object", text)
    }
    guard o["v"] == 1 else { finding("an answer without \"v\":1", text) }
    if rc == NAStatus.ok.rawValue {
        guard o["error"] == nil else { finding("NA_OK with an error document", text) }
    } else {
        guard let e = o["error"]?.objectValue, let code = e["code"]?.stringValue, e["message"]?.stringValue != nil
        else { finding("status \(rc) without an error document with code and message", text) }
        let c = NativeAuthError.Code(rawValue: code)
        guard NativeAuthError.Code.table.contains(where: { $0.code == c }) else {
            finding("error code \(code) is not in the table", text)
        }
        guard NAStatus(c.category).rawValue == rc else { finding("status \(rc) does not match the code \(code)", text) }
    }
    let asked = String(decoding: request, as: UTF8.self)
    for marker in ["CT-SECRET", "RT-SECRET"]
    where has(text, marker) && !has(asked, marker) && !has(currentInput, marker) {
        finding("a continuation or refresh token left the library", text)
    }
    return doc
}

/// A log sink for clients of the scripted server: lines are built (so their code runs) and checked — they never
/// carry its tokens (all contain "-SECRET-", which no request member that may be logged can hold) nor a username
/// (the targets' are @fabrikam.example).
let checkingLogSink: LogSink = { _, message, _ in
    if has(message, "-SECRET-") { finding("a token in a log line", message) }
    if has(message, "fabrikam.example") { finding("a username in a log line", message) }
}

/// A client in the C ABI's handle table, with a scripted transport and the fuzz clock; freed when released.
final class FuzzClient {
    static let clientID = "00001111-aaaa-2222-bbbb-3333cccc4444"
    let clock = FuzzClock()
    let handle: OpaquePointer

    init(
        authority: String = HappyServer.authority,
        transport: any Transport,
        apiTransport: (any Transport)? = nil,
        clientID: String = FuzzClient.clientID,
        logSink: @escaping LogSink = checkingLogSink
    ) {
        var config = Self.configuration
        if authority != HappyServer.authority || clientID != Self.clientID {
            config.authority = try! Authority(authority)
            config.clientID = clientID
        }
        // A client with a memory store cannot fail to build; if it ever does, that is a finding.
        guard
            let client = try? NativeAuthClient(
                configuration: config,
                transport: transport,
                apiTransport: apiTransport,
                clock: clock,
                logger: Logger(level: .verbose, sink: logSink)
            )
        else { finding("a client could not be built") }
        guard let h = handles.insert(ClientBox(client)) else { finding("the handle table is full") }
        handle = h
    }

    /// The scripted server's client (built once: parsing the authority is not what is being fuzzed here).
    static let configuration = ClientConfiguration(
        authority: try! Authority(HappyServer.authority),
        clientID: clientID,
        capabilities: [.mfaRequired, .registrationRequired]
    )

    deinit { na_client_free(handle) }

    func callAPI(_ export: Export, _ request: JSONValue) -> Reply { call(export, handle, request) }
}

/// `text` with every occurrence of `pattern` replaced by `replacement`.
func replacing(_ pattern: String, with replacement: String, in text: [UInt8]) -> [UInt8] {
    let p = Array(pattern.utf8)
    guard !p.isEmpty, text.count >= p.count else { return text }
    var out: [UInt8] = []
    out.reserveCapacity(text.count)
    var i = 0
    while i < text.count {
        if i + p.count <= text.count && text[i..<(i + p.count)].elementsEqual(p) {
            out.append(contentsOf: replacement.utf8)
            i += p.count
        } else {
            out.append(text[i])
            i += 1
        }
    }
    return out
}
