import CEmulatorTLS
import FlyingFox
import FlyingSocks
import Foundation
import NativeAuthJSON
import Synchronization

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
    /// `tlsDirectory` (a new temporary directory when nil) and the server speaks HTTPS; the certificate names
    /// 127.0.0.1, localhost, ::1 and `tlsName` (a name the emulator is reached by through a proxy, say).
    public static func start(
        emulator: Emulator,
        port: UInt16 = 0,
        tls: Bool = false,
        tlsDirectory: String? = nil,
        tlsName: String? = nil,
        logRequests: Bool = false
    ) async throws -> EmulatorServer {
        let logger = ConnectionCounter(emulator: emulator, logRequests: logRequests)
        let backendPort: UInt16 = tls ? 0 : port
        // The handler timeout leaves room for the longest injected delay or hold (240 s) on top of the work.
        let server = HTTPServer(address: try .inet(ip4: "127.0.0.1", port: backendPort), timeout: 300, logger: logger)
        let listening = ListeningPort()
        await server.appendRoute("*") { [emulator] request in
            await Self.respond(emulator, request, listening: listening, logRequests: logRequests)
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
        listening.port.withLock { $0 = bound }
        Self.setNoDelayOnListener(port: bound)
        var proxy: ProxyBox? = nil
        var publicPort = Int(bound)
        var caFile: String? = nil
        if tls {
            let dir = tlsDirectory ?? (NSTemporaryDirectory() + "nativeauth-emulator-" + UUID().uuidString)
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            guard natls_write_ca_and_server_cert(dir, 30, tlsName) == 0,
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
        emulator.caFile = caFile
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

    private static func respond(
        _ emulator: Emulator,
        _ request: HTTPRequest,
        listening: ListeningPort,
        logRequests: Bool
    ) async -> HTTPResponse {
        let started = Date()
        var headers: [String: String] = [:]
        for (k, v) in request.headers { headers[k.rawValue.lowercased()] = v }
        // The query as `application/x-www-form-urlencoded` ("+" is a space, as browsers and OAuth clients send it);
        // FlyingFox's own items keep "+" as is.
        var query: [String: String] = Form.decode(request.target.query()) ?? [:]
        if query.isEmpty { for item in request.query { query[item.name] = item.value } }
        let body = (try? await request.bodyData) ?? Data()
        let req = EmulatorRequest(
            method: request.method.rawValue,
            path: request.path,
            query: query,
            headers: headers,
            body: Array(body)
        )

        let fault = emulator.takeFault(for: req.path)
        if let fault, fault.stage == .before {
            if fault.delayMs > 0 { try? await Task.sleep(nanoseconds: UInt64(fault.delayMs) * 1_000_000) }
            if let ticket = fault.holdTicket { await emulator.services.faults.held.hold(ticket: ticket) }
            if fault.drop {
                emulator.recordFault(req, status: 0, kind: fault.kind)
                log(logRequests, req, 0, started, note: "fault: dropped")
                return dropConnection()
            }
        }
        let response = emulator.handle(req, fault: fault)
        if let fault, fault.stage == .after {
            if fault.delayMs > 0 { try? await Task.sleep(nanoseconds: UInt64(fault.delayMs) * 1_000_000) }
            if let ticket = fault.holdTicket { await emulator.services.faults.held.hold(ticket: ticket) }
            if fault.drop {
                log(logRequests, req, 0, started, note: "fault: handled, then dropped")
                return dropConnection()
            }
        }
        log(logRequests, req, response.status, started, note: fault.map { "fault: \($0.kind)" })
        let peerPort: UInt16? = if case .ip4(_, let p)? = request.remoteAddress { p } else { nil }
        let localPort = listening.port.withLock { $0 }
        return convert(response, fault) {
            if let peerPort { Self.resetOnClose(localPort: localPort, peerPort: peerPort) }
        }
    }

    /// FlyingFox asks a WebSocket handler for its frames before writing anything; failing there closes the
    /// connection with zero bytes sent — a dropped connection as a client sees it.
    private static func dropConnection() -> HTTPResponse { HTTPResponse(webSocket: DropConnection()) }

    private static func convert(
        _ r: EmulatorResponse,
        _ fault: Fault?,
        reset: @escaping @Sendable () -> Void
    ) -> HTTPResponse {
        var headers = HTTPHeaders()
        for (k, v) in r.headers { headers.addValue(v, for: HTTPHeader(k)) }
        let status = HTTPStatusCode(r.status, phrase: httpReasonPhrase(r.status))
        guard let f = fault, f.spoilsDelivery else {
            return HTTPResponse(statusCode: status, headers: headers, body: Data(r.body))
        }
        // The whole body is promised (Content-Length); a reset or truncation stops short of it.
        let stop: Int? = f.resetAfterBytes.map { min($0, r.body.count) } ?? (f.truncate ? r.body.count / 2 : nil)
        let spoiled = SpoiledBody(
            bytes: r.body,
            chunk: f.trickleMs > 0 ? f.chunkBytes : 65_536,
            pauseMs: f.trickleMs,
            stopAfter: stop,
            onStop: f.resetAfterBytes != nil ? reset : nil
        )
        return HTTPResponse(
            statusCode: status,
            headers: headers,
            body: HTTPBodySequence(from: spoiled, count: r.body.count)
        )
    }

    /// Makes the server's socket of the connection from `peerPort` send a TCP RST when FlyingFox closes it
    /// (SO_LINGER with a zero timeout): a connection reset, not an orderly close.
    private static func resetOnClose(localPort: UInt16, peerPort: UInt16) {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd"))?.compactMap { Int32($0) }
        for fd in fds ?? Array(0..<4096) {
            guard port(of: fd, peer: false) == localPort, port(of: fd, peer: true) == peerPort else { continue }
            var l = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, socklen_t(MemoryLayout<linger>.size))
            return
        }
    }

    private static func port(of fd: Int32, peer: Bool) -> UInt16? {
        var addr = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                peer ? getpeername(fd, $0, &len) : getsockname(fd, $0, &len)
            }
        }
        guard ok == 0, addr.sin_family == sa_family_t(AF_INET) else { return nil }
        return UInt16(bigEndian: addr.sin_port)
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

/// A WebSocket handler that fails before its first frame: FlyingFox closes the connection without a byte.
private struct DropConnection: WSHandler {
    struct Dropped: Error {}
    func makeFrames(for client: AsyncThrowingStream<WSFrame, any Error>) async throws -> AsyncStream<WSFrame> {
        throw Dropped()
    }
}

/// The listening port, known once the server is bound (the route closure is installed before).
private final class ListeningPort: Sendable {
    let port = Mutex<UInt16>(0)
}

/// A body sent `chunk` bytes at a time, `pauseMs` apart; with `stopAfter`, it fails after that many bytes (calling
/// `onStop` first), so FlyingFox closes the connection before the promised length.
private struct SpoiledBody: AsyncBufferedSequence {
    typealias Element = UInt8
    let bytes: [UInt8]
    let chunk: Int
    let pauseMs: Int
    let stopAfter: Int?
    let onStop: (@Sendable () -> Void)?

    func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    struct Stopped: Error {}

    struct Iterator: AsyncBufferedIteratorProtocol {
        let body: SpoiledBody
        var offset = 0

        mutating func next() async throws -> UInt8? { try await nextBuffer(suggested: 1)?.first }

        mutating func nextBuffer(suggested count: Int) async throws -> [UInt8]? {
            let limit = body.stopAfter ?? body.bytes.count
            if offset >= limit {
                guard body.stopAfter != nil else { return nil }
                body.onStop?()
                throw Stopped()
            }
            if offset > 0, body.pauseMs > 0 { try await Task.sleep(nanoseconds: UInt64(body.pauseMs) * 1_000_000) }
            let n = Swift.min(body.chunk, Swift.max(1, count), limit - offset)
            defer { offset += n }
            return Array(body.bytes[offset..<offset + n])
        }
    }
}
