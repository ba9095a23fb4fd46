// Target "loopback": what reaches a browser sign-in's loopback listener from outside the process. Input: byte 0
// chooses ('0': the bytes a connection delivers, an HTTP request; anything else: a /proc/net/tcp or tcp6 table, read
// to find whose socket a connection comes from); the rest is those bytes.
//  - the request parser answers a request, "more" or an error status for the whole input and for every prefix the
//    network may deliver first; a parsed request is GET or POST, its path without the query;
//  - the table scanner finds the same uid whether the table is read whole or byte by byte.
@testable import NativeAuthHTTP
@testable import NativeAuthNet

func fuzzLoopback(_ data: UnsafeRawBufferPointer) {
    guard let mode = data.first else { return }
    let bytes = Array(data.dropFirst())
    if mode == UInt8(ascii: "0") {
        switch LoopbackListener.parse(bytes, final: true) {
        case .more: finding("a request whose peer closed still waits for more")
        case .request(let r):
            guard r.method == "GET" || r.method == "POST" else { finding("a method other than GET or POST passed") }
            guard !r.path.contains("?") else { finding("a request's path kept its query") }
        case .closed, .bad: break
        }
        let step = max(1, bytes.count / 16)
        for cut in stride(from: 0, to: bytes.count, by: step) {
            _ = LoopbackListener.parse(Array(bytes[0..<cut]), final: false)
        }
        return
    }
    let v4 = (SocketAddress(bytes: [127, 0, 0, 1], port: 0xD431), SocketAddress(bytes: [127, 0, 0, 1], port: 0x1F90))
    let one = [UInt8](repeating: 0, count: 15) + [1]
    let v6 = (SocketAddress(bytes: one, port: 0xD431), SocketAddress(bytes: one, port: 0x1F90))
    for (local, remote) in [v4, v6] {
        let whole = ProcNetTCPScanner.find(in: bytes, local: local, remote: remote)
        var scanner = ProcNetTCPScanner(local: local, remote: remote)
        var piecewise: UInt32? = nil
        for b in bytes where piecewise == nil { piecewise = scanner.feed(CollectionOfOne(b)) }
        if piecewise == nil { piecewise = scanner.finish() }
        guard whole == piecewise else { finding("the /proc/net/tcp scanner's answer depends on how it was read") }
    }
}
