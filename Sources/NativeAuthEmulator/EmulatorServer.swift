import CEmulatorTLS
import FlyingFox
import FlyingSocks
import Foundation
import NativeAuthJSON

/// The HTTP front of an `Emulator`: FlyingFox on 127.0.0.1 (plain HTTP), optionally behind our libssl TLS
/// terminator (`--tls`). Moves bytes, applies injected faults, counts TCP connections, logs one line per request.
public final class EmulatorServer: Sendable {
    public let emulator: Emulator
    public let port: Int
    public let baseURL: String
    /// The CA certificate clients must trust in TLS mode.
    public let caFile: String?
    private let server: HTTPServer
    private let task: Task<Void, Error>
    private let proxy: ProxyBox?

    private final class ProxyBox: @unchecked Sendable {  // natls_proxy is internally synchronised
        let pointer: OpaquePointer
        init(_ p: OpaquePointer) { pointer = p }
    }

    public struct StartError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Starts a server. `port` 0 picks a free port. With `tls`, a fresh CA and server certificate are written to
    /// `tlsDirectory` (a new temporary directory when nil) and the server speaks HTTPS.
    public static func start(
        emulator: Emulator,
        port: UInt16 = 0,
        tls: Bool = false,
        tlsDirectory: String? = nil,
        logRequests: Bool = false
    ) async throws -> EmulatorServer {
        let logger = ConnectionCounter(emulator: emulator, logRequests: logRequests)
        let backendPort: UInt16 = tls ? 0 : port
        let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: backendPort), timeout: 120, logger: logger)
        await server.appendRoute("*") { [emulator] request in
            await Self.respond(emulator, request, logRequests: logRequests)
        }
        let task = Task { try await server.run() }
        do {
            try await server.waitUntilListening(timeout: 10)
        } catch {
            task.cancel()
            throw StartError(description: "cannot listen on 127.0.0.1:\(port)")
        }
        guard case .ip4(_, let bound)? = await server.listeningAddress else {
            task.cancel()
            throw StartError(description: "cannot determine the listening port")
        }
        Self.setNoDelayOnListener(port: bound)
        var proxy: ProxyBox? = nil
        var publicPort = Int(bound)
        var caFile: String? = nil
        if tls {
            let dir = tlsDirectory ?? (NSTemporaryDirectory() + "nativeauth-emulator-" + UUID().uuidString)
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            guard natls_write_ca_and_server_cert(dir, 30) == 0,
                let p = natls_proxy_start(port, bound, dir + "/server.pem", dir + "/server-key.pem")
            else {
                task.cancel()
                throw StartError(description: "cannot start TLS on 127.0.0.1:\(port)")
            }
            proxy = ProxyBox(p)
            publicPort = Int(natls_proxy_port(p))
            caFile = dir + "/ca.pem"
        }
        let base = "\(tls ? "https" : "http")://127.0.0.1:\(publicPort)"
        emulator.baseURL = base
        return EmulatorServer(
            emulator: emulator,
            port: publicPort,
            baseURL: base,
            caFile: caFile,
            server: server,
            task: task,
            proxy: proxy
        )
    }

    /// FlyingFox writes a response's head and body separately and does not set TCP_NODELAY, so Nagle's algorithm and
    /// the client's delayed ACK add ~40 ms to every answer. Linux copies TCP_NODELAY from a listening socket to the
    /// sockets it accepts, so we find FlyingFox's listener (ours: 127.0.0.1:port, in this process) and set it there.
    private static func setNoDelayOnListener(port: UInt16) {
        for fd in Int32(0)..<Int32(4096) {
            var addr = sockaddr_in()
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
            }
            guard ok == 0, addr.sin_family == sa_family_t(AF_INET), UInt16(bigEndian: addr.sin_port) == port else {
                continue
            }
            var listening: Int32 = 0
            var optlen = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) == 0, listening != 0 else { continue }
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            return
        }
    }

    private init(
        emulator: Emulator,
        port: Int,
        baseURL: String,
        caFile: String?,
        server: HTTPServer,
        task: Task<Void, Error>,
        proxy: ProxyBox?
    ) {
        self.emulator = emulator
        self.port = port
        self.baseURL = baseURL
        self.caFile = caFile
        self.server = server
        self.task = task
        self.proxy = proxy
    }

    public func stop() async {
        if let proxy { natls_proxy_stop(proxy.pointer) }
        await server.stop(timeout: 1)
        task.cancel()
    }

    /// The ready line's document.
    public var readyDocument: NativeAuthJSON.JSONValue { emulator.readyDocument(caFile: caFile) }

    // MARK: - Request adapter

    private static func respond(_ emulator: Emulator, _ request: HTTPRequest, logRequests: Bool) async -> HTTPResponse {
        let started = Date()
        var headers: [String: String] = [:]
        for (k, v) in request.headers { headers[k.rawValue.lowercased()] = v }
        var query: [String: String] = [:]
        for item in request.query { query[item.name] = item.value }
        let body = (try? await request.bodyData) ?? Data()
        let req = EmulatorRequest(
            method: request.method.rawValue,
            path: request.path,
            query: query,
            headers: headers,
            body: Array(body)
        )

        var response: EmulatorResponse
        var truncate = false
        if let fault = emulator.takeFault(for: req.path) {
            if fault.delayMs > 0 { try? await Task.sleep(nanoseconds: UInt64(fault.delayMs) * 1_000_000) }
            if fault.drop {
                emulator.recordFault(req, status: 0, kind: "drop")
                log(logRequests, req, 0, started, note: "fault: dropped")
                // FlyingFox asks a WebSocket handler for its frames before writing anything; failing there closes the
                // connection with zero bytes sent — a dropped connection as a client sees it.
                return HTTPResponse(webSocket: DropConnection())
            }
            if let status = fault.status {
                let ctx = RequestContext(
                    correlationID: req.headers["client-request-id"] ?? Ids.uuid(),
                    traceID: Ids.uuid(),
                    now: emulator.clock.now(),
                    baseURL: emulator.baseURL
                )
                if let b = fault.body {
                    response = .json(b, status: status)
                } else {
                    let name =
                        status >= 500
                        ? (status == 503 ? "temporarily_unavailable" : "server_error")
                        : (status == 429 ? "too_many_requests" : "invalid_request")
                    response = emulator.errorResponse(
                        ServiceError(
                            name,
                            [status >= 500 ? 50000 : 90000],
                            "AADSTS\(status >= 500 ? 50000 : 90000): Injected fault (HTTP \(status)).",
                            status: status
                        ),
                        ctx
                    )
                }
                if let ra = fault.retryAfter { response.headers.append(("Retry-After", String(ra))) }
                response.headers.append(("client-request-id", ctx.correlationID))
                emulator.recordFault(req, status: status, kind: "status")
                log(logRequests, req, status, started, note: "fault")
                return convert(response, truncate: fault.truncate)
            }
            truncate = fault.truncate
        }
        response = emulator.handle(req)
        log(logRequests, req, response.status, started, note: truncate ? "fault: truncated" : nil)
        return convert(response, truncate: truncate)
    }

    private static func convert(_ r: EmulatorResponse, truncate: Bool) -> HTTPResponse {
        var headers = HTTPHeaders()
        for (k, v) in r.headers { headers.addValue(v, for: HTTPHeader(k)) }
        let status = HTTPStatusCode(r.status, phrase: phrase(r.status))
        if truncate && r.body.count > 1 {
            // Promise the whole body, send half, then fail: the connection closes mid-body.
            return HTTPResponse(
                statusCode: status,
                headers: headers,
                body: HTTPBodySequence(
                    from: TruncatedBody(bytes: Array(r.body.prefix(r.body.count / 2))),
                    count: r.body.count
                )
            )
        }
        return HTTPResponse(statusCode: status, headers: headers, body: Data(r.body))
    }

    private static func phrase(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 201: return "Created"
        case 302: return "Found"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        default: return "Status"
        }
    }

    /// One line per request on stderr: method, path, status, milliseconds. Never bodies, queries or headers.
    private static func log(_ enabled: Bool, _ req: EmulatorRequest, _ status: Int, _ started: Date, note: String?) {
        guard enabled else { return }
        let ms = Int(Date().timeIntervalSince(started) * 1000)
        let line =
            "\(req.method) \(req.path) \(status == 0 ? "-" : String(status)) \(ms)ms\(note.map { " (\($0))" } ?? "")\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// Counts accepted TCP connections through FlyingFox's logging hook ("<id> open connection").
private struct ConnectionCounter: Logging {
    let emulator: Emulator
    let logRequests: Bool
    func logDebug(_ debug: @autoclosure () -> String) {}
    func logInfo(_ info: @autoclosure () -> String) {
        if info().hasSuffix("open connection") { emulator.countConnection() }
    }
    func logWarning(_ warning: @autoclosure () -> String) {}
    func logError(_ error: @autoclosure () -> String) {}
    func logCritical(_ critical: @autoclosure () -> String) {
        if logRequests { FileHandle.standardError.write(Data("emulator: \(critical())\n".utf8)) }
    }
}

private struct DropConnection: WSHandler {
    struct Dropped: Error {}
    func makeFrames(for client: AsyncThrowingStream<WSFrame, any Error>) async throws -> AsyncStream<WSFrame> {
        throw Dropped()
    }
}

/// A body that yields its bytes and then fails, so the connection closes before the promised length.
private struct TruncatedBody: AsyncBufferedSequence {
    typealias Element = UInt8
    let bytes: [UInt8]
    func makeAsyncIterator() -> Iterator { Iterator(bytes: bytes) }

    struct Truncated: Error {}

    struct Iterator: AsyncBufferedIteratorProtocol {
        let bytes: [UInt8]
        var sent = false
        mutating func next() async throws -> UInt8? { throw Truncated() }
        mutating func nextBuffer(suggested count: Int) async throws -> [UInt8]? {
            if sent { throw Truncated() }
            sent = true
            return bytes
        }
    }
}
