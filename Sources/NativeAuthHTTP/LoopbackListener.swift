internal import Glibc

/// A request that reached the loopback listener: the authorization response of a browser sign-in (RFC 8252 §7.3).
public struct RedirectRequest: Sendable {
    public var method: String
    /// The path, without the query.
    public var path: String
    /// The query's parameters (GET), or the form's (a `form_post` POST).
    public var parameters: [String: String]
}

/// What the listener answers a request with, and whether the wait is over.
public struct RedirectReply: Sendable {
    public var status: Int
    public var html: String
    /// True for the authorization response itself: the listener answers it and stops.
    public var accepted: Bool

    public init(status: Int, html: String, accepted: Bool) {
        self.status = status
        self.html = html
        self.accepted = accepted
    }
}

/// A one-shot HTTP listener on 127.0.0.1 for the redirect of a browser sign-in (RFC 8252 loopback redirect). It
/// serves any number of requests (a browser may ask for `/favicon.ico`, preconnect idle sockets, or a stray page may
/// send a redirect with the wrong `state`) until the decision function accepts one; then, or when the wait ends, it
/// closes. Its socket is close-on-exec and is closed when the value is released at the latest.
///
/// Only what a browser sends is read: a request line and headers up to 16 KiB, a `form_post` body up to 64 KiB;
/// each connection has 10 seconds to send its request. Nothing is logged: the requests carry authorization codes.
public final class LoopbackListener: @unchecked Sendable {  // used by one thread at a time (a flow is checked out)
    public enum Failure: Error, Sendable {
        case cannotListen(errno: Int32)
    }

    public enum Outcome: Sendable {
        case accepted(RedirectRequest)
        case timedOut
        case cancelled
    }

    private var fd: Int32
    /// The port the kernel chose (or the one asked for).
    public let port: UInt16
    private var connections: [Connection] = []

    static let maxHeaderBytes = 16 * 1024
    static let maxBodyBytes = 64 * 1024
    static let connectionTimeout = 10.0
    static let maxConnections = 16

    /// Listens on 127.0.0.1 on `port` (0: an ephemeral port).
    public init(port: UInt16 = 0) throws(Failure) {
        let s = socket(
            AF_INET,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            0
        )
        guard s >= 0 else { throw .cannotListen(errno: errno) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(s, 16) == 0 else {
            let e = errno
            close(s)
            throw .cannotListen(errno: e)
        }
        var actual = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) }
        }
        fd = s
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    deinit { shutdown() }

    /// Closes the socket and every open connection (idempotent).
    public func shutdown() {
        for c in connections { close(c.fd) }
        connections.removeAll()
        if fd >= 0 {
            close(fd)
            fd = -1
        }
    }

    public var isOpen: Bool { fd >= 0 }

    /// Serves requests until `decide` accepts one (answered, then the listener closes), `deadline` passes (seconds
    /// on `now`'s clock), or `isCancelled` says so (checked at least every 50 ms). On a timeout the listener stays
    /// open for a later wait; on acceptance or cancellation it closes.
    public func wait(
        deadline: Double,
        now: () -> Double,
        isCancelled: () -> Bool,
        decide: (RedirectRequest) -> RedirectReply
    ) -> Outcome {
        while true {
            if isCancelled() {
                shutdown()
                return .cancelled
            }
            let left = deadline - now()
            guard left > 0 else { return .timedOut }
            let listening = fd
            guard listening >= 0 else { return .cancelled }
            var fds = [pollfd(fd: listening, events: Int16(POLLIN), revents: 0)]
            fds += connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let sliceMs = Int32(max(1, min(50, Int(left * 1000))))
            let n = poll(&fds, nfds_t(fds.count), sliceMs)
            if n < 0 && errno != EINTR { return .timedOut }
            if fds[0].revents & Int16(POLLIN) != 0 { acceptAll(listening, at: now()) }
            var finished: [Int] = []
            for (i, p) in fds.dropFirst().enumerated() where p.revents != 0 && i < connections.count {
                switch connections[i].read() {
                case .more: continue
                case .closed: finished.append(i)
                case .request(let request):
                    let reply = decide(request)
                    connections[i].respond(reply)
                    finished.append(i)
                    if reply.accepted {
                        shutdown()
                        return .accepted(request)
                    }
                case .bad(let status):
                    connections[i].respond(RedirectReply(status: status, html: "Bad request.", accepted: false))
                    finished.append(i)
                }
            }
            let t = now()
            for (i, c) in connections.enumerated() where t - c.opened > Self.connectionTimeout && !finished.contains(i)
            {
                finished.append(i)
            }
            for i in finished.sorted(by: >) {
                close(connections[i].fd)
                connections.remove(at: i)
            }
        }
    }

    private func acceptAll(_ listening: Int32, at time: Double) {
        while true {
            let c = accept(listening, nil, nil)
            guard c >= 0 else { return }
            _ = fcntl(c, F_SETFD, FD_CLOEXEC)
            _ = fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK)
            if connections.count >= Self.maxConnections {
                // Too many idle sockets (preconnects): the oldest makes room.
                close(connections[0].fd)
                connections.removeFirst()
            }
            connections.append(Connection(fd: c, opened: time))
        }
    }

    /// One accepted connection: its bytes so far.
    private struct Connection {
        let fd: Int32
        let opened: Double
        var buffer: [UInt8] = []

        enum ReadResult {
            case more, closed
            case request(RedirectRequest)
            case bad(Int)
        }

        mutating func read() -> ReadResult {
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n == 0 { return buffer.isEmpty ? .closed : parse(final: true) }
                if n < 0 {
                    if errno == EAGAIN || errno == EWOULDBLOCK { return parse(final: false) }
                    if errno == EINTR { continue }
                    return .closed
                }
                buffer += chunk[0..<n]
                if buffer.count > LoopbackListener.maxHeaderBytes + LoopbackListener.maxBodyBytes { return .bad(413) }
            }
        }

        private func parse(final: Bool) -> ReadResult {
            guard let end = headerEnd() else {
                if buffer.count > LoopbackListener.maxHeaderBytes { return .bad(431) }
                return final ? .bad(400) : .more
            }
            guard let head = String(validating: buffer[0..<end], as: UTF8.self) else { return .bad(400) }
            let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
            let parts = lines.first?.split(separator: " ") ?? []
            guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return .bad(400) }
            let method = String(parts[0])
            let target = String(parts[1])
            var length = 0
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                let name = line[line.startIndex..<colon].lowercased()
                let value = line[line.index(after: colon)...].trimmingPrefix(" ")
                if name == "content-length" {
                    guard let l = Int(value), l >= 0, l <= LoopbackListener.maxBodyBytes else { return .bad(413) }
                    length = l
                }
                if name == "transfer-encoding" { return .bad(411) }
            }
            let bodyStart = end + 4
            guard buffer.count >= bodyStart + length else { return final ? .bad(400) : .more }
            let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
            let path = String(target[target.startIndex..<pathEnd])
            var parameters: [String: String] = [:]
            if pathEnd < target.endIndex {
                for (k, v) in FormEncoding.decode(String(target[target.index(after: pathEnd)...])) ?? [] {
                    parameters[k] = parameters[k] ?? v
                }
            }
            if method == "POST" {
                guard let body = String(validating: buffer[bodyStart..<(bodyStart + length)], as: UTF8.self),
                    let form = FormEncoding.decode(body)
                else { return .bad(400) }
                for (k, v) in form { parameters[k] = parameters[k] ?? v }
            } else if method != "GET" {
                return .bad(405)
            }
            return .request(RedirectRequest(method: method, path: path, parameters: parameters))
        }

        private func headerEnd() -> Int? {
            guard buffer.count >= 4 else { return nil }
            for i in 0...(buffer.count - 4)
            where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
                return i
            }
            return nil
        }

        func respond(_ reply: RedirectReply) {
            let body = Array(reply.html.utf8)
            let reason = reply.status == 200 ? "OK" : (reply.status == 404 ? "Not Found" : "Bad Request")
            let head =
                "HTTP/1.1 \(reply.status) \(reason)\r\nContent-Type: text/html; charset=utf-8\r\n"
                + "Content-Length: \(body.count)\r\nCache-Control: no-store\r\nConnection: close\r\n"
                + "Referrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\n\r\n"
            var bytes = Array(head.utf8) + body
            var sent = 0
            var attempts = 0
            while sent < bytes.count && attempts < 200 {
                let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 {
                    sent += n
                } else if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                    var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&p, 1, 10)
                    attempts += 1
                } else {
                    break
                }
            }
            bytes.removeAll()
        }
    }
}
