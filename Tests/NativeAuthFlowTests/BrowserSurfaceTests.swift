import Foundation
import NativeAuthCABI
import NativeAuthHTTP
import NativeAuthJSON
import Synchronization
import Testing

/// Binds [::1]:port (and closes it at once): 0 when it could, else errno.
func bindIPv6Loopback(_ port: Int) -> Int32 {
    let s = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
    guard s >= 0 else { return errno }
    defer { close(s) }
    var one: Int32 = 1
    setsockopt(s, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
    var addr = sockaddr_in6()
    addr.sin6_family = sa_family_t(AF_INET6)
    addr.sin6_port = UInt16(port).bigEndian
    addr.sin6_addr = in6addr_loopback
    let rc = withUnsafePointer(to: &addr) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
    }
    return rc == 0 ? 0 : errno
}

/// The loopback listener (security issue #18): a `localhost` redirect holds ::1 as well as 127.0.0.1.
@Suite struct BrowserSurfaceTests {
    @Test func aLocalhostListenerHoldsIPv6LoopbackToo() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)  // Entra: the default redirect URI is http://localhost
        let pending = c.call(na_sign_in_interactive, ["browser": "none"])
        let redirect = try #require(pending.doc["redirect_uri"]?.stringValue)
        #expect(redirect.hasPrefix("http://localhost:"))
        let port = try #require(redirectPort(redirect))
        let taken = bindIPv6Loopback(port)
        // EADDRNOTAVAIL: this machine has no ::1, so nobody can listen there.
        #expect(taken == EADDRINUSE || taken == EADDRNOTAVAIL, "another user could bind [::1]:\(port): \(taken)")
        // http://127.0.0.1 means IPv4 only: the library leaves ::1 alone.
        let v4 = try ABIClient(emu, ["redirect_uri": "http://127.0.0.1"])
        let p4 = v4.call(na_sign_in_interactive, ["browser": "none"])
        let port4 = try #require(redirectPort(p4.doc["redirect_uri"]?.stringValue ?? ""))
        #expect(bindIPv6Loopback(port4) != EADDRINUSE)
    }
}
