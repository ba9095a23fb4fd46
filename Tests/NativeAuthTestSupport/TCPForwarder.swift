// A loopback TCP forwarder for tests: it relays connections to a target port, and can be switched to refuse them —
// its listening socket closed (connects answer ECONNREFUSED) and every relayed connection cut — and back, on the
// same port. This is how a test makes "the connection was refused" happen at one precise step of a flow. Test-only
// code; never linked into the library.
import Foundation
import Glibc
import Synchronization

public final class TCPForwarder: @unchecked Sendable {  // state behind `lock`
    public let port: UInt16
    private let target: UInt16
    private let lock = NSLock()
    private var listener: Int32 = -1
    private var relayed: [Int32] = []
    private var generation = 0

    public init(to target: UInt16) throws {
        self.target = target
        var p: UInt16 = 0
        let fd = try Self.listen(port: 0, bound: &p)
        port = p
        lock.withLock { listener = fd }
        startAccepting(fd, generation: 0)
    }

    deinit {
        refuse()
    }

    private static func listen(port: UInt16, bound: inout UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard ok, Glibc.listen(fd, 64) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        bound = UInt16(bigEndian: addr.sin_port)
        return fd
    }

    /// Connections are refused from now on, and the relayed ones are cut.
    public func refuse() {
        let (fd, open) = lock.withLock { () -> (Int32, [Int32]) in
            let fd = listener
            listener = -1
            generation += 1
            let open = relayed
            relayed = []
            return (fd, open)
        }
        // Shut down only: the accepting thread closes the socket once its accept() returns, so the descriptor
        // number cannot be reused (by the next listener) while that thread may still use it.
        if fd >= 0 { shutdown(fd, Int32(SHUT_RDWR)) }
        for s in open { shutdown(s, Int32(SHUT_RDWR)) }
    }

    /// Connections are relayed again, on the same port.
    public func resume() throws {
        var p: UInt16 = 0
        var fd: Int32 = -1
        for attempt in 0..<500 {  // the previous listener is closed by its accepting thread, a moment later
            if let bound = try? Self.listen(port: port, bound: &p) {
                fd = bound
                break
            }
            if attempt == 499 { throw POSIXError(.EADDRINUSE) }
            usleep(2000)
        }
        let g = lock.withLock { () -> Int in
            listener = fd
            return generation
        }
        startAccepting(fd, generation: g)
    }

    private func startAccepting(_ fd: Int32, generation g: Int) {
        let t = Thread { [weak self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 && (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN || errno == EMFILE) {
                    continue  // a client that gave up before being accepted, or a passing shortage
                }
                guard let self, client >= 0 else {  // shut down by refuse()
                    close(fd)
                    return
                }
                guard let upstream = Self.connect(to: self.target) else {
                    close(client)
                    continue
                }
                let live = self.lock.withLock { () -> Bool in
                    guard self.generation == g else { return false }
                    self.relayed += [client, upstream]
                    return true
                }
                guard live else {
                    close(client)
                    close(upstream)
                    close(fd)
                    return
                }
                Thread { self.pump(client, upstream) }.start()
            }
        }
        t.start()
    }

    private static func connect(to port: UInt16) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        if !ok {
            close(fd)
            return nil
        }
        return fd
    }

    /// Relays bytes both ways until either side closes. The descriptors leave `relayed` before they are closed, so
    /// `refuse()` never shuts down a descriptor number that has since been reused for something else.
    private func pump(_ a: Int32, _ b: Int32) {
        var fds = [pollfd(fd: a, events: Int16(POLLIN), revents: 0), pollfd(fd: b, events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65536)
        loop: while poll(&fds, 2, -1) > 0 {
            for i in 0..<2 where fds[i].revents != 0 {
                let n = buffer.withUnsafeMutableBytes { read(fds[i].fd, $0.baseAddress, $0.count) }
                if n <= 0 { break loop }
                var sent = 0
                while sent < n {
                    let w = buffer.withUnsafeBytes { write(fds[1 - i].fd, $0.baseAddress! + sent, n - sent) }
                    if w <= 0 { break loop }
                    sent += w
                }
            }
        }
        lock.withLock { relayed.removeAll { $0 == a || $0 == b } }
        close(a)
        close(b)
    }
}
