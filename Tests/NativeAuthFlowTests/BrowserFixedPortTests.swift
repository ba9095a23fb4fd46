import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Testing

/// A loopback port that was free on 127.0.0.1 and on ::1 a moment ago: bound to port 0, checked on ::1, released.
func freeLoopbackPort() throws -> Int {
    for _ in 0..<20 {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard s >= 0 else { throw TestFailure("socket: \(errno)") }
        defer { close(s) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var local = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &len) }
        }
        guard rc == 0, named == 0 else { throw TestFailure("bind: \(errno)") }
        let port = Int(UInt16(bigEndian: local.sin_port))
        let v6 = bindIPv6Loopback(port)
        if v6 == 0 || v6 == EADDRNOTAVAIL { return port }
    }
    throw TestFailure("no port free on both loopback addresses")
}

/// The local ports of connections closed by this end and not yet gone — FIN-WAIT-1, FIN-WAIT-2, TIME-WAIT,
/// CLOSING — in /proc/net/tcp or tcp6.
func lingeringPorts(ipv6: Bool = false) -> Set<Int> {
    // procfs files report size 0: read to the end in a loop.
    guard let f = fopen(ipv6 ? "/proc/net/tcp6" : "/proc/net/tcp", "r") else { return [] }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, f)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    var ports = Set<Int>()
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst() {
        let f = line.split(separator: " ")
        guard f.count > 3, ["04", "05", "06", "0B"].contains(f[3]), let colon = f[1].lastIndex(of: ":") else {
            continue
        }
        if let p = Int(f[1][f[1].index(after: colon)...], radix: 16) { ports.insert(p) }
    }
    return ports
}

/// A connected TCP socket to 127.0.0.1 or ::1 (-1 when it could not connect).
func connectLoopback(ipv6: Bool, port: Int) -> Int32 {
    let s = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard s >= 0 else { return -1 }
    let rc: Int32
    if ipv6 {
        var addr = sockaddr_in6()
        addr.sin6_family = sa_family_t(AF_INET6)
        addr.sin6_port = UInt16(port).bigEndian
        addr.sin6_addr = in6addr_loopback
        rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(s, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
    } else {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
    guard rc == 0 else {
        close(s)
        return -1
    }
    return s
}

/// A request as a browser sends it, answered and closed by the listener before this end closes: the listener's side
/// of the connection stays in TIME-WAIT on its port. The answer's first line.
func strayRequest(ipv6: Bool, port: Int) throws -> String {
    let s = connectLoopback(ipv6: ipv6, port: port)
    guard s >= 0 else { throw TestFailure("connect: \(errno)") }
    defer { close(s) }
    let request = Array("GET /favicon.ico HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8)
    guard send(s, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { throw TestFailure("send") }
    var tv = timeval(tv_sec: 20, tv_usec: 0)
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var answer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {  // to the end: the listener closed first
        let n = recv(s, &chunk, chunk.count, 0)
        if n <= 0 { break }
        answer += chunk[0..<n]
    }
    return String(decoding: answer, as: UTF8.self).split(separator: "\r\n").first.map(String.init) ?? ""
}

/// Binds `host`:`port` with SO_REUSEADDR and SO_REUSEPORT, as a program trying to share a port would: 0 when it
/// could, else errno.
func bindSharing(ipv6: Bool, port: Int) -> Int32 {
    let s = socket(ipv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard s >= 0 else { return errno }
    defer { close(s) }
    var one: Int32 = 1
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    setsockopt(s, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
    let rc: Int32
    if ipv6 {
        setsockopt(s, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in6()
        addr.sin6_family = sa_family_t(AF_INET6)
        addr.sin6_port = UInt16(port).bigEndian
        addr.sin6_addr = in6addr_loopback
        rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
    } else {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = UInt16(port).bigEndian
        addr.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
    return rc == 0 ? 0 : errno
}

/// A fixed loopback redirect port (issue 28, defect 9): providers that match the redirect URI exactly, port included,
/// need the same port for every sign-in; the connections the listener closed first stay in TIME-WAIT on it.
@Suite struct BrowserFixedPortTests {
    /// One browser sign-in on `c` that leaves connections in TIME-WAIT on the listener's port: stray requests over
    /// 127.0.0.1 (and ::1 with `ipv6`) that the listener answers and closes first, then the browser.
    func signIn(_ c: ABIClient, expecting uri: String, over addresses: [Bool], port: Int) throws {
        let pending = c.call(na_sign_in_interactive, ["browser": "none"])
        #expect(pending.doc["status"] == "browser_pending", "\(pending.doc.serialized())")
        #expect(pending.doc["redirect_uri"]?.stringValue == uri)
        let flow = try #require(pending.doc["flow"]?.stringValue)
        let url = try #require(pending.doc["authorization_url"]?.stringValue)
        let wait = Background {
            c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 30_000])
        }
        for ipv6 in addresses { #expect(try strayRequest(ipv6: ipv6, port: port) == "HTTP/1.1 404 Not Found") }
        FakeBrowser().visit(url)
        let r = try wait.answer()
        #expect(r.doc["status"] == "signed_in", "\(r.doc.serialized())")
    }

    @Test(arguments: ["127.0.0.1", "localhost"])
    func twoSignInsInARowOnOneFixedPort(host: String) throws {
        let port = try freeLoopbackPort()
        let uri = "http://\(host):\(port)/"
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu, ["redirect_uri": .string(uri)])
        let v6 = host == "localhost" && bindIPv6Loopback(0) == 0
        let addresses = [false] + (v6 ? [true] : [])
        try signIn(c, expecting: uri, over: addresses, port: port)
        // What made the second sign-in fail: the first one's connections linger on the port.
        #expect(lingeringPorts().contains(port), "the test needs a closed connection lingering on \(port)")
        if v6 { #expect(lingeringPorts(ipv6: true).contains(port)) }
        try signIn(c, expecting: uri, over: addresses, port: port)
        // And through the browser callback.
        let browser = FakeBrowser()
        browser.install(on: c)
        let third = c.call(na_sign_in_interactive, [:])
        #expect(third.doc["status"] == "signed_in", "\(third.doc.serialized())")
        #expect(queryParameters(browser.authorizationURL ?? "")["redirect_uri"] == uri)
    }

    /// SO_REUSEADDR lets the listener take a port in TIME-WAIT, never one someone listens on: while a sign-in waits,
    /// no socket (SO_REUSEADDR and SO_REUSEPORT set) binds its port on either address, and connections from
    /// another user's socket are still refused.
    @Test func theReusedPortIsStillTheSignInsAlone() throws {
        let port = try freeLoopbackPort()
        let uri = "http://localhost:\(port)/"
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu, ["redirect_uri": .string(uri)])
        let v6 = bindIPv6Loopback(0) == 0
        try signIn(c, expecting: uri, over: [false] + (v6 ? [true] : []), port: port)
        let pending = c.call(na_sign_in_interactive, ["browser": "none"])
        let flow = try #require(pending.doc["flow"]?.stringValue)
        #expect(bindSharing(ipv6: false, port: port) == EADDRINUSE)
        if v6 { #expect(bindSharing(ipv6: true, port: port) == EADDRINUSE) }
        guard geteuid() == 0 else { return }  // a socket of another user needs root (setuid)
        let wait = Background {
            c.call(na_flow_submit, ["flow": .string(flow), "action": "wait", "timeout_ms": 30_000])
        }
        #expect(try fetchAsNobody("http://127.0.0.1:\(port)/") == "403")
        #expect(!wait.isDone)
        FakeBrowser().visit(try #require(pending.doc["authorization_url"]?.stringValue))
        #expect(try wait.answer().doc["status"] == "signed_in")
    }
}
