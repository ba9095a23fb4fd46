import Foundation
import Synchronization
import Testing

@testable import NativeAuthHTTP
@testable import NativeAuthNet

/// A blocking TCP client socket to 127.0.0.1 (or ::1).
final class ClientSocket {
    let fd: Int32

    init(port: UInt16, ipv6: Bool = false) throws {
        fd = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestError("socket: \(errno)") }
        let rc: Int32
        if ipv6 {
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = port.bigEndian
            a.sin6_addr = in6addr_loopback
            rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            a.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
            rc = withUnsafePointer(to: &a) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard rc == 0 else {
            let e = errno
            close(fd)
            throw TestError("connect: \(e)")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }

    /// Everything until the peer closes (or `seconds` pass).
    func readAll(seconds: Int = 5) -> String {
        var tv = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            out += chunk[0..<n]
        }
        return String(decoding: out, as: UTF8.self)
    }
}

struct TestError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

private func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The listener's own limits and bookkeeping.
@Suite struct LoopbackListenerTests {
    /// Accepts `/cb` requests, 404 for anything else.
    static func decide(_ r: RedirectRequest) -> RedirectReply {
        r.path == "/cb"
            ? RedirectReply(status: 200, html: "ok", accepted: true)
            : RedirectReply(status: 404, html: "no", accepted: false)
    }

    @Test func aHeaderBlockOverTheLimitIsRefusedEvenWhenComplete() throws {
        let listener = try LoopbackListener()
        let client = try ClientSocket(port: listener.port)
        // 20 KiB of headers, the blank line included: complete, but over the 16 KiB limit.
        client.send("GET /cb?x=1 HTTP/1.1\r\nX-Pad: " + String(repeating: "a", count: 20 * 1024) + "\r\n\r\n")
        let outcome = listener.wait(deadline: now() + 2, now: now, isCancelled: { false }, decide: Self.decide)
        guard case .timedOut = outcome else {
            Issue.record("an oversized header block was accepted: \(outcome)")
            return
        }
        #expect(client.readAll().hasPrefix("HTTP/1.1 431"))
    }

    @Test func aRequestOnTheOldestConnectionIsServedWhenANewOneEvictsIt() throws {
        let listener = try LoopbackListener()
        var idle: [ClientSocket] = []
        for _ in 0..<LoopbackListener.maxConnections { idle.append(try ClientSocket(port: listener.port)) }
        // A short wait accepts them all (nothing arrives on them).
        let first = listener.wait(deadline: now() + 0.2, now: now, isCancelled: { false }, decide: Self.decide)
        guard case .timedOut = first else {
            Issue.record("\(first)")
            return
        }
        // In one poll round: the oldest connection sends the redirect, and a 17th connection arrives.
        idle[0].send("GET /cb?code=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        let late = try ClientSocket(port: listener.port)
        let outcome = listener.wait(deadline: now() + 2, now: now, isCancelled: { false }, decide: Self.decide)
        guard case .accepted(let r) = outcome else {
            Issue.record("the redirect on the oldest connection was lost: \(outcome)")
            return
        }
        #expect(r.parameters["code"] == "1")
        #expect(idle[0].readAll().hasPrefix("HTTP/1.1 200"))
        _ = late
    }

    @Test func aLocalhostListenerHoldsBothLoopbackAddressesOnOnePort() throws {
        let listener = try LoopbackListener(host: .localhost)
        let hasIPv6Loopback =
            (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8))?
            .contains("00000000000000000000000000000001") ?? false
        #expect(listener.holdsIPv6 == hasIPv6Loopback)
        guard listener.holdsIPv6 else { return }
        // A request over ::1 reaches this listener.
        let client = try ClientSocket(port: listener.port, ipv6: true)
        client.send("GET /cb?over=v6 HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let outcome = listener.wait(deadline: now() + 5, now: now, isCancelled: { false }, decide: Self.decide)
        guard case .accepted(let r) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(r.parameters["over"] == "v6")
        // An IPv4-only listener leaves ::1 alone.
        #expect(try !LoopbackListener(host: .ipv4).holdsIPv6)
    }

    @Test func aFailingAcceptRestsTheListenerInsteadOfSpinning() throws {
        let calls = Mutex(0)
        let listener = try LoopbackListener(
            host: .ipv4,
            port: 0,
            accept: { _ in
                calls.withLock { $0 += 1 }
                errno = EMFILE  // no file descriptor left: the connection stays queued
                return -1
            },
            isForeign: { _ in false }
        )
        let client = try ClientSocket(port: listener.port)
        let outcome = listener.wait(deadline: now() + 0.5, now: now, isCancelled: { false }, decide: Self.decide)
        guard case .timedOut = outcome else {
            Issue.record("\(outcome)")
            return
        }
        // 0.5 s with a 0.1 s rest after each failure: about five attempts, not thousands.
        #expect(calls.withLock { $0 } <= 10, "accept was called \(calls.withLock { $0 }) times")
        _ = client
    }

    @Test func aConnectionFromAnotherUsersSocketIsAnswered403AndNeverDecided() throws {
        let decided = Mutex(0)
        let listener = try LoopbackListener(
            host: .ipv4,
            port: 0,
            accept: { Glibc.accept($0, nil, nil) },
            isForeign: { _ in true }
        )
        let client = try ClientSocket(port: listener.port)
        client.send("GET /cb?code=stolen HTTP/1.1\r\n\r\n")
        let outcome = listener.wait(deadline: now() + 1, now: now, isCancelled: { false }) { r in
            decided.withLock { $0 += 1 }
            return Self.decide(r)
        }
        guard case .timedOut = outcome else {
            Issue.record("another user's request was accepted: \(outcome)")
            return
        }
        #expect(decided.withLock { $0 } == 0)
        #expect(client.readAll().hasPrefix("HTTP/1.1 403"))
    }

    /// The listener closes connections first, leaving them in TIME-WAIT on its port: a fixed port is listened on
    /// again at once (issue 28, defect 9), on both loopback addresses.
    @Test func aFixedPortCanBeListenedOnAgainRightAfterASignIn() throws {
        let first = try LoopbackListener(host: .localhost)
        let port = first.port
        for ipv6 in first.holdsIPv6 ? [false, true] : [false] {
            let client = try ClientSocket(port: port, ipv6: ipv6)
            client.send("GET /favicon.ico HTTP/1.1\r\nHost: localhost\r\n\r\n")
            _ = first.wait(deadline: now() + 0.5, now: now, isCancelled: { false }, decide: Self.decide)
            #expect(client.readAll().hasPrefix("HTTP/1.1 404"))  // to the end: the listener closed first
        }
        first.shutdown()
        let again = try LoopbackListener(host: .localhost, port: port)
        #expect(again.port == port && again.holdsIPv6 == first.holdsIPv6)
    }

    @Test func theOwnerOfThisProcesssOwnSocketIsFound() throws {
        let listener = try LoopbackListener(host: .ipv4)
        let client = try ClientSocket(port: listener.port)
        let local = try #require(SocketAddress.local(client.fd))
        let remote = try #require(SocketAddress.peer(client.fd))
        #expect(SocketOwner.owner(local: local, remote: remote) == geteuid())
        #expect(!SocketOwner.isOtherUsers(connection: client.fd))
    }
}

/// /proc/net/tcp as outside input: the right line's uid, and nothing (never a trap) for anything malformed.
@Suite struct ProcNetTCPScannerTests {
    static let table = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1
           1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 101 1
           2: 0100007F:1F90 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 102 1

        """

    /// 127.0.0.1 as the kernel prints it on this machine (a little-endian word or a big-endian one).
    static var loopbackWord: String {
        UInt32(0x7f00_0001).bigEndian == UInt32(0x7f00_0001) ? "7F000001" : "0100007F"
    }

    static func addr(_ port: UInt16) -> SocketAddress { SocketAddress(bytes: [127, 0, 0, 1], port: port) }

    @Test func findsThePeerSocketsUID() {
        let text = Self.table.replacingOccurrences(of: "0100007F", with: Self.loopbackWord)
        #expect(
            ProcNetTCPScanner.find(in: Array(text.utf8), local: Self.addr(0xD431), remote: Self.addr(0x1F90)) == 1000
        )
        #expect(ProcNetTCPScanner.find(in: Array(text.utf8), local: Self.addr(0x1F90), remote: Self.addr(0xD431)) == 0)
        #expect(ProcNetTCPScanner.find(in: Array(text.utf8), local: Self.addr(1), remote: Self.addr(2)) == nil)
        // Fed in pieces of any size, the answer is the same.
        var s = ProcNetTCPScanner(local: Self.addr(0xD431), remote: Self.addr(0x1F90))
        var found: UInt32? = nil
        for b in Array(text.utf8) where found == nil { found = s.feed([b]) }
        #expect(found == 1000)
    }

    @Test func ipv6LinesAndV4MappedAddresses() {
        let mapped = Self.addr(0xD431).v4Mapped
        #expect(mapped?.bytes == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1])
        let one = SocketAddress(bytes: [UInt8](repeating: 0, count: 15) + [1], port: 0x1F90)
        let words = (0..<4).map { i -> String in
            let b = Array(one.bytes[(i * 4)..<(i * 4 + 4)])
            let v = b.withUnsafeBytes { $0.load(as: UInt32.self) }
            return String(v, radix: 16, uppercase: true).leftPadded(8)
        }.joined()
        let line = "  3: \(words):D431 \(words):1F90 01 0:0 0:0 0 4242 0 7 1\n"
        let peer = SocketAddress(bytes: one.bytes, port: 0xD431)
        #expect(ProcNetTCPScanner.find(in: Array(line.utf8), local: peer, remote: one) == 4242)
    }

    @Test(arguments: [
        "", "\n\n\n", "0: 0100007F:D431", "0: 0100007F:D431 0100007F:1F90 01 x x x x",
        "0: 0100007F:D431 0100007F:1F90 01 0 0 0 99999999999999999999 0",
        "0: 0100007F:D431 0100007F:1F90 01 0 0 0 4294967296 0", "0: 0100007F:D431 0100007F:1F90 01 0 0 0 -1 0",
        "0: 0100007F:D4311 0100007F:1F90 01 0 0 0 5 0", "0: 0100007G:D431 0100007F:1F90 01 0 0 0 5 0",
        "0: 0100007F: 0100007F:1F90 01 0 0 0 5 0", "0: :D431 0100007F:1F90 01 0 0 0 5 0",
        "0: 0100007F:D431 0100007F:1F90 01 0 0 0 5 0 " + String(repeating: "x", count: 600),
        "0:\t0100007F:D431\t0100007F:1F90\t01\t0\t0\t0\t\u{0}5\t0", "\u{FF}\u{FE}:::::",
    ])
    func malformedLinesAreSkipped(_ line: String) {
        let text = line.replacingOccurrences(of: "0100007F", with: Self.loopbackWord)
        #expect(
            ProcNetTCPScanner.find(in: Array(text.utf8), local: Self.addr(0xD431), remote: Self.addr(0x1F90)) == nil
        )
    }

    @Test func randomBytesNeverTrap() {
        var g = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let n = Int.random(in: 0..<300, using: &g)
            var bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &g) }
            if Bool.random(using: &g) {
                bytes += Array(" 0: 0100007F:D431 0100007F:1F90 01 0 0 0 5 0\n".utf8).shuffled()
            }
            _ = ProcNetTCPScanner.find(in: bytes, local: Self.addr(0xD431), remote: Self.addr(0x1F90))
        }
    }
}

extension String {
    fileprivate func leftPadded(_ n: Int) -> String { String(repeating: "0", count: max(0, n - count)) + self }
}
