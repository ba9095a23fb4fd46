internal import Glibc
public import NativeAuthHTTP

/// A one-shot HTTP listener on the loopback interface for a browser sign-in (RFC 8252 loopback redirect): 127.0.0.1,
/// and for a `localhost` redirect URI ::1 on the same port as well. It serves any number of requests (a browser may
/// ask for `/favicon.ico`, preconnect idle sockets, or a stray page may send a redirect with the wrong `state`) until
/// the decision function ends the wait; then, or when the wait ends, it closes. Its sockets are close-on-exec and
/// are closed when the value is released at the latest.
///
/// Only what a browser sends is read: a request line and headers up to 16 KiB, a `form_post` body up to 64 KiB;
/// each connection has 10 seconds to send its request. A connection whose peer socket belongs to another user (its
/// entry in /proc/net/tcp or tcp6 names another uid) gets a 403 page and never reaches the decision function.
/// Nothing is logged: the requests carry authorization codes.
public final class LoopbackListener: @unchecked Sendable {  // used by one thread at a time (a flow is checked out)
    public enum Failure: Error, Sendable {
        case cannotListen(errno: Int32)
    }

    public typealias Outcome = RedirectWaitOutcome
    public typealias Host = LoopbackHost

    /// Which loopback addresses to listen on.

    /// The listening sockets (127.0.0.1, then ::1 when held).
    private var sockets: [Int32]
    /// The port the kernel chose (or the one asked for).
    public let port: UInt16
    /// True when ::1 is held as well as 127.0.0.1.
    public let holdsIPv6: Bool
    private var connections: [Connection] = []
    /// While a failing `accept` (no file descriptors left) leaves a connection queued, the listening sockets stay
    /// readable: they are not polled again before this time, so the wait does not spin.
    private var acceptPausedUntil = -Double.infinity
    /// `accept(2)` (tests make it fail).
    private let acceptConnection: @Sendable (Int32) -> Int32
    /// Whether an accepted connection comes from another user's socket (tests replace the /proc lookup).
    private let isForeign: @Sendable (Int32) -> Bool

    static let maxHeaderBytes = 16 * 1024
    static let maxBodyBytes = 64 * 1024
    static let connectionTimeout = 10.0
    static let maxConnections = 16
    /// How long the listening sockets rest after `accept` failed for want of resources.
    static let acceptBackoff = 0.1
    /// Ports tried for an ephemeral `localhost` listener whose ::1 side is taken by someone else.
    static let portAttempts = 8

    /// Listens on `host` on `port` (0: an ephemeral port).
    public convenience init(host: Host = .ipv4, port: UInt16 = 0) throws(Failure) {
        try self.init(
            host: host,
            port: port,
            accept: { Glibc.accept($0, nil, nil) },
            isForeign: { SocketOwner.isOtherUsers(connection: $0) }
        )
    }

    init(
        host: Host,
        port: UInt16,
        accept: @escaping @Sendable (Int32) -> Int32,
        isForeign: @escaping @Sendable (Int32) -> Bool
    ) throws(Failure) {
        acceptConnection = accept
        self.isForeign = isForeign
        var lastError = EADDRINUSE
        for _ in 0..<(port == 0 ? Self.portAttempts : 1) {
            let v4 = Self.listenOn(ipv6: false, port: port)
            guard v4.fd >= 0 else { throw .cannotListen(errno: v4.error) }
            guard host == .localhost else {
                (sockets, self.port, holdsIPv6) = ([v4.fd], v4.port, false)
                return
            }
            let v6 = Self.listenOn(ipv6: true, port: v4.port)
            if v6.fd >= 0 {
                (sockets, self.port, holdsIPv6) = ([v4.fd, v6.fd], v4.port, true)
                return
            }
            if v6.error == EADDRNOTAVAIL || v6.error == EAFNOSUPPORT {
                // This machine has no ::1 (IPv6 disabled, or not on lo): nobody can listen there, and a browser
                // that tries ::1 first is refused and falls back to 127.0.0.1. IPv4 alone is safe.
                (sockets, self.port, holdsIPv6) = ([v4.fd], v4.port, false)
                return
            }
            close(v4.fd)
            lastError = v6.error
            // Another program holds [::1] on this port: with an ephemeral port, try another one. With a fixed port,
            // or any other failure, give up — listening on 127.0.0.1 alone would let that program (maybe another
            // user's) receive the redirect of a browser that tries ::1 first.
            guard v6.error == EADDRINUSE, port == 0 else { break }
        }
        throw .cannotListen(errno: lastError)
    }

    /// A listening socket on 127.0.0.1 or ::1 (IPv6 only) and its port; fd -1 and the errno when it failed.
    private static func listenOn(ipv6: Bool, port: UInt16) -> (fd: Int32, port: UInt16, error: Int32) {
        let s = socket(
            ipv6 ? AF_INET6 : AF_INET,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            0
        )
        guard s >= 0 else { return (-1, 0, errno) }
        // The listener closes each connection first, so a sign-in leaves its side of them in TIME-WAIT on the port
        // for a minute: without SO_REUSEADDR a fixed redirect port could not be bound again meanwhile. On Linux it
        // never lets a socket bind a port that another socket listens on (SO_REUSEPORT, which would, is not set),
        // so while a sign-in listens nobody else can take its port.
        var reuse: Int32 = 1
        _ = setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        let bound: Int32
        if ipv6 {
            var one: Int32 = 1
            _ = setsockopt(s, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = port.bigEndian
            addr.sin6_addr = in6addr_loopback
            bound = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(s, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            addr.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            bound = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard bound == 0, listen(s, 16) == 0 else {
            let e = errno
            close(s)
            return (-1, 0, e)
        }
        guard let local = SocketAddress.local(s) else {
            let e = errno
            close(s)
            return (-1, 0, e)
        }
        return (s, local.port, 0)
    }

    deinit { shutdown() }

    /// Closes the sockets and every open connection (idempotent).
    public func shutdown() {
        for c in connections { close(c.fd) }
        connections.removeAll()
        for s in sockets { close(s) }
        sockets.removeAll()
    }

    public var isOpen: Bool { !sockets.isEmpty }

    /// Serves requests until `decide` ends the wait (the reply is sent, then the listener closes), `deadline` passes
    /// (seconds on `now`'s clock), or `isCancelled` says so (checked at least every 50 ms). On a timeout the listener
    /// stays open for a later wait; otherwise it closes.
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
            let start = now()
            let left = deadline - start
            guard left > 0 else { return .timedOut }
            guard isOpen else { return .cancelled }
            let listening = start >= acceptPausedUntil ? sockets : []
            // Connections first, listening sockets after them: indices into `connections` stay valid until every
            // result of this poll has been handled (new connections are accepted, and old ones evicted, last).
            let count = connections.count
            var fds = connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            fds += listening.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let sliceMs = Int32(max(1, min(50, Int(left * 1000))))
            let n = poll(&fds, nfds_t(fds.count), sliceMs)
            if n < 0 && errno != EINTR { return .timedOut }
            var finished: [Int] = []
            for i in 0..<count where fds[i].revents != 0 {
                switch connections[i].read() {
                case .more: continue
                case .closed: finished.append(i)
                case .request(let request):
                    let reply = connections[i].foreign ? Self.forbidden : decide(request)
                    connections[i].respond(reply)
                    finished.append(i)
                    switch reply.ending {
                    case .none: break
                    case .accepted:
                        shutdown()
                        return .accepted(request)
                    case .stopped:
                        shutdown()
                        return .stopped(request)
                    }
                case .bad(let status):
                    let reply =
                        connections[i].foreign ? Self.forbidden : RedirectReply(status: status, html: "Bad request.")
                    connections[i].respond(reply)
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
            for (j, s) in listening.enumerated() where fds[count + j].revents & Int16(POLLIN) != 0 {
                acceptPending(s, at: t)
            }
        }
    }

    static let forbidden = RedirectReply(
        status: 403,
        html: "<!doctype html><html><head><meta charset=\"utf-8\"><title>Sign-in</title></head><body><p>This page "
            + "belongs to another user's sign-in.</p></body></html>"
    )

    /// Accepts the connections queued on one listening socket (at most `maxConnections` a round).
    private func acceptPending(_ listening: Int32, at time: Double) {
        for _ in 0..<Self.maxConnections {
            let c = acceptConnection(listening)
            guard c >= 0 else {
                switch errno {
                case EAGAIN, EWOULDBLOCK: return
                case EINTR, ECONNABORTED, EPROTO: continue  // that one is gone; the next may be fine
                default:
                    // EMFILE, ENFILE, ENOBUFS, ENOMEM: the connection stays queued and the socket readable. Rest
                    // the listening sockets for a moment rather than spin until the deadline.
                    acceptPausedUntil = time + Self.acceptBackoff
                    return
                }
            }
            _ = fcntl(c, F_SETFD, FD_CLOEXEC)
            _ = fcntl(c, F_SETFL, fcntl(c, F_GETFL) | O_NONBLOCK)
            if connections.count >= Self.maxConnections {
                // Too many idle sockets (preconnects): the oldest makes room.
                close(connections[0].fd)
                connections.removeFirst()
            }
            connections.append(Connection(fd: c, opened: time, foreign: isForeign(c)))
        }
    }

    enum ReadResult {
        case more, closed
        case request(RedirectRequest)
        case bad(Int)
    }

    /// A request read so far (`final`: the peer closed) → its parts, more to read, or an error status. Outside
    /// input: the fuzz target "loopback" runs it.
    static func parse(_ buffer: [UInt8], final: Bool) -> ReadResult {
        guard let end = headerEnd(buffer) else {
            if buffer.count > LoopbackListener.maxHeaderBytes { return .bad(431) }
            return final ? .bad(400) : .more
        }
        guard end <= LoopbackListener.maxHeaderBytes else { return .bad(431) }
        guard let head = String(validating: buffer[0..<end], as: UTF8.self) else { return .bad(400) }
        let lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3, parts[2].hasPrefix("HTTP/1.") else { return .bad(400) }
        let method = String(parts[0])
        let target = String(parts[1])
        var length = 0
        var cookies: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[line.startIndex..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingPrefix(" ")
            if name == "content-length" {
                guard let l = Int(value), l >= 0, l <= LoopbackListener.maxBodyBytes else { return .bad(413) }
                length = l
            }
            if name == "transfer-encoding" { return .bad(411) }
            if name == "cookie" {
                for pair in value.split(separator: ";") {
                    let p = pair.drop { $0 == " " || $0 == "\t" }
                    guard let eq = p.firstIndex(of: "=") else { continue }
                    let k = String(p[p.startIndex..<eq])
                    if cookies[k] == nil { cookies[k] = String(p[p.index(after: eq)...]) }
                }
            }
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
        return .request(RedirectRequest(method: method, path: path, parameters: parameters, cookies: cookies))
    }

    /// Where the blank line ending the header block starts, looked for within the header limit only.
    static func headerEnd(_ buffer: [UInt8]) -> Int? {
        let limit = min(buffer.count, LoopbackListener.maxHeaderBytes + 4)
        guard limit >= 4 else { return nil }
        for i in 0...(limit - 4)
        where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    /// One accepted connection: its bytes so far.
    private struct Connection {
        let fd: Int32
        let opened: Double
        /// Its peer socket belongs to another user: whatever it sends is answered 403.
        let foreign: Bool
        var buffer: [UInt8] = []

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

        private func parse(final: Bool) -> ReadResult { LoopbackListener.parse(buffer, final: final) }

        static func reason(_ status: Int) -> String {
            switch status {
            case 200: return "OK"
            case 302: return "Found"
            case 403: return "Forbidden"
            case 404: return "Not Found"
            case 405: return "Method Not Allowed"
            case 410: return "Gone"
            case 411: return "Length Required"
            case 413: return "Content Too Large"
            case 431: return "Request Header Fields Too Large"
            case 500: return "Internal Server Error"
            default: return "Bad Request"
            }
        }

        func respond(_ reply: RedirectReply) {
            var reply = reply
            let unsafe = reply.headers.contains { h in
                (h.name + h.value).utf8.contains { $0 < 0x20 || $0 == 0x7f } || h.name.contains(":")
            }
            if unsafe { reply = RedirectReply(status: 500, html: "The sign-in could not continue.") }
            let body = Array(reply.html.utf8)
            var head =
                "HTTP/1.1 \(reply.status) \(Self.reason(reply.status))\r\nContent-Type: text/html; charset=utf-8\r\n"
                + "Content-Length: \(body.count)\r\nCache-Control: no-store\r\nConnection: close\r\n"
                + "Referrer-Policy: no-referrer\r\nX-Content-Type-Options: nosniff\r\n"
            for h in reply.headers { head += "\(h.name): \(h.value)\r\n" }
            head += "\r\n"
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
            for i in bytes.indices { bytes[i] = 0 }  // the Location of a start page is the authorization URL
            bytes.removeAll()
        }
    }
}
