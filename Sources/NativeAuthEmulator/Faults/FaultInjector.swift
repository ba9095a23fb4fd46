import NativeAuthJSON
import Synchronization

/// Fault injection (`POST /_emulator/faults`): the faults waiting for their requests, and what a fault does to an
/// answer. The HTTP adapter (`EmulatorServer`) delays, drops and spoils deliveries; the rest happens here. Its lock
/// is taken before the held answers' (`take` reads their release count under it), never after.
final class FaultInjector: Sendable {
    private let faults = Mutex<[Fault]>([])
    /// Answers held by faults with `hold` (released by the control, or by a reset).
    let held = HeldAnswers()

    func reset() {
        faults.withLock { $0 = [] }
        held.release()
    }

    func add(_ fault: Fault) { faults.withLock { $0.append(fault) } }

    var json: [JSONValue] { faults.withLock { $0.map(\.json) } }

    func clear() { faults.withLock { $0.removeAll() } }

    /// The next injected fault for `path`, if any (consumes one use). The controls are never faulted. A hold fault
    /// comes with its ticket: a release after the take lets its answer go (held or not yet).
    func take(for path: String) -> Fault? {
        if path.hasPrefix("/_emulator") { return nil }
        return faults.withLock { list in
            guard let i = list.firstIndex(where: { path.hasSuffix($0.pathSuffix) && $0.remaining > 0 }) else {
                return nil
            }
            list[i].remaining -= 1
            var f = list[i]
            if list[i].remaining == 0 { list.remove(at: i) }
            // Read under the faults lock: whoever sees the fault taken (GET faults) and then releases is after it.
            if f.hold { f.holdTicket = held.ticket }
            return f
        }
    }

    /// The fault's own answer. Its status: `status`, else the service's (stage after), else 502 for an HTML page and
    /// 200 for a body.
    static func answer(_ f: Fault, _ ctx: RequestContext, handled: EmulatorResponse?) -> EmulatorResponse {
        let status = f.status ?? handled?.status ?? (f.html ? 502 : 200)
        if f.html {
            let title = "\(status) \(httpReasonPhrase(status))"
            return .html(
                "<html>\r\n<head><title>\(title)</title></head>\r\n<body>\r\n<center><h1>\(title)</h1></center>\r\n"
                    + "<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n",
                status: status
            )
        }
        if case .string(let text)? = f.body {
            return EmulatorResponse(
                status: status,
                headers: [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store")],
                body: Array(text.utf8)
            )
        }
        if let b = f.body { return .json(b, status: status) }
        return ServiceError.injectedFault(status: status).response(ctx)
    }

    /// `retry_after`, `content_type` and `body_bytes`, on whatever answer goes out.
    static func reshape(_ response: EmulatorResponse, _ f: Fault) -> EmulatorResponse {
        var r = response
        if let ra = f.retryAfter {
            r.headers.removeAll { $0.0.lowercased() == "retry-after" }
            r.headers.append(("Retry-After", ra))
        }
        if let ct = f.contentType {
            r.headers.removeAll { $0.0.lowercased() == "content-type" }
            if !ct.isEmpty { r.headers.append(("Content-Type", ct)) }
        }
        if let n = f.bodyBytes { r.body = padded(r.body, to: n) }
        return r
    }

    /// `body` cut or padded to exactly `n` bytes. A JSON object gains a `"_padding"` member; anything else (or an
    /// object too short for the member) gains trailing spaces, which JSON and HTML both ignore.
    static func padded(_ body: [UInt8], to n: Int) -> [UInt8] {
        if body.count >= n { return Array(body.prefix(n)) }
        let missing = n - body.count
        if body.first == UInt8(ascii: "{"), body.last == UInt8(ascii: "}") {
            let empty = body.count == 2
            let overhead = (empty ? 0 : 1) + #""_padding":"""#.utf8.count
            if missing >= overhead {
                return body.dropLast() + Array((empty ? "" : ",").utf8) + Array(#""_padding":""#.utf8)
                    + [UInt8](repeating: UInt8(ascii: "x"), count: missing - overhead) + Array(#""}"#.utf8)
            }
        }
        return body + [UInt8](repeating: UInt8(ascii: " "), count: missing)
    }
}

func httpReasonPhrase(_ code: Int) -> String {
    switch code {
    case 200: return "OK"
    case 201: return "Created"
    case 302: return "Found"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 405: return "Method Not Allowed"
    case 408: return "Request Timeout"
    case 413: return "Payload Too Large"
    case 429: return "Too Many Requests"
    case 500: return "Internal Server Error"
    case 502: return "Bad Gateway"
    case 503: return "Service Unavailable"
    case 504: return "Gateway Timeout"
    default: return "Status"
    }
}
