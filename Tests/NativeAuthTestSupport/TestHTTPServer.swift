// A small HTTP/1.1 server on 127.0.0.1 and an ephemeral port, for transport tests: keep-alive, per-request
// handler, misbehaviour on demand (delays, oversized bodies, dropped connections) and a count of accepted TCP
// connections. Test-only code; never linked into the library.
import Foundation
import Glibc
import Synchronization

public struct RecordedRequest: Sendable {
    public let method: String
    public let target: String
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]
    /// 1-based number of the TCP connection this request arrived on.
    public let connection: Int
    /// The request line and header lines exactly as received (bytes, CRLF removed), for wire-level checks.
    public var rawLines: [[UInt8]] = []

    public func header(_ name: String) -> String? {
        let n = name.lowercased()
        return headers.first(where: { $0.name.lowercased() == n })?.value
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

public enum TestResponse: Sendable {
    case reply(status: Int, headers: [(String, String)], body: [UInt8], delayMs: Int)
    /// Close the connection without answering.
    case drop

    public static func json(_ text: String, status: Int = 200) -> TestResponse {
        .reply(status: status, headers: [("Content-Type", "application/json")], body: Array(text.utf8), delayMs: 0)
    }
}

public final class TestHTTPServer: Sendable {
    public typealias Handler = @Sendable (RecordedRequest) -> TestResponse

    private struct State {
        var connections = 0
        var requests: [RecordedRequest] = []
        var stopped = false
    }

    public let port: Int
    private let listenFD: Int32
    private let handler: Handler
    private let state = Mutex(State())

    public var baseURL: String { "http://127.0.0.1:\(port)" }
    public var connectionsAccepted: Int { state.withLock { $0.connections } }
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    public struct SetupError: Error {}

    public init(handler: @escaping Handler) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError() }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw SetupError()
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        self.port = Int(UInt16(bigEndian: addr.sin_port))
        self.listenFD = fd
        self.handler = handler
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { close(listenFD) }

    public func stop() {
        state.withLock { $0.stopped = true }
    }

    private var stopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        while !stopped {
            var p = pollfd(fd: listenFD, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, 50) > 0 else { continue }
            let c = accept(listenFD, nil, nil)
            guard c >= 0 else { continue }
            let number = state.withLock { s -> Int in
                s.connections += 1
                return s.connections
            }
            Thread.detachNewThread { [self] in serve(c, number: number) }
        }
    }

    /// Reads until `buffer` holds `count` bytes or the peer closes; polls so a stopped server exits.
    private func fill(_ fd: Int32, _ buffer: inout [UInt8], until done: ([UInt8]) -> Bool) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while !done(buffer) {
            if stopped { return false }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&p, 1, 50)
            if r == 0 { continue }
            if r < 0 { return false }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { return false }
            buffer.append(contentsOf: chunk[0..<n])
        }
        return true
    }

    private static func lines(_ head: ArraySlice<UInt8>) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var start = head.startIndex
        var i = head.startIndex
        while i < head.endIndex {
            if head[i] == 13, i + 1 < head.endIndex, head[i + 1] == 10 {
                out.append(Array(head[start..<i]))
                i += 2
                start = i
            } else {
                i += 1
            }
        }
        out.append(Array(head[start..<head.endIndex]))
        return out
    }

    private static func headerEnd(_ b: [UInt8]) -> Int? {
        guard b.count >= 4 else { return nil }
        for i in 0...(b.count - 4) where b[i] == 13 && b[i + 1] == 10 && b[i + 2] == 13 && b[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func serve(_ fd: Int32, number: Int) {
        defer { close(fd) }
        var buffer: [UInt8] = []
        while !stopped {
            guard fill(fd, &buffer, until: { Self.headerEnd($0) != nil }), let end = Self.headerEnd(buffer) else {
                return
            }
            let head = String(decoding: buffer[0..<end], as: UTF8.self)
            var lines = head.components(separatedBy: "\r\n")
            let requestLine = lines.removeFirst().split(separator: " ")
            guard requestLine.count >= 2 else { return }
            var headers: [(name: String, value: String)] = []
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.append(
                    (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                )
            }
            let length = Int(headers.first(where: { $0.name.lowercased() == "content-length" })?.value ?? "0") ?? 0
            let bodyStart = end + 4
            guard fill(fd, &buffer, until: { $0.count >= bodyStart + length }) else { return }
            var request = RecordedRequest(
                method: String(requestLine[0]),
                target: String(requestLine[1]),
                headers: headers,
                body: Array(buffer[bodyStart..<(bodyStart + length)]),
                connection: number
            )
            request.rawLines = Self.lines(buffer[0..<end])
            buffer.removeFirst(bodyStart + length)
            state.withLock { $0.requests.append(request) }
            switch handler(request) {
            case .drop:
                return
            case .reply(let status, let extra, let body, let delayMs):
                if delayMs > 0 {
                    let deadline = Date().addingTimeInterval(Double(delayMs) / 1000)
                    while Date() < deadline && !stopped { usleep(10_000) }
                }
                var text = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.count)\r\n"
                for (k, v) in extra { text += "\(k): \(v)\r\n" }
                text += "\r\n"
                let bytes = Array(text.utf8) + body
                var sent = 0
                while sent < bytes.count {
                    let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    if n <= 0 { return }
                    sent += n
                }
            }
        }
    }
}
