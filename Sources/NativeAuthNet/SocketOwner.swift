internal import Glibc

/// A TCP socket address as the kernel's /proc/net/tcp tables show it: the address bytes (4 for IPv4, 16 for IPv6)
/// in network order, and the port.
struct SocketAddress: Equatable, Sendable {
    var bytes: [UInt8]
    var port: UInt16

    /// The local address of a socket (`getsockname`).
    static func local(_ fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        return rc == 0 ? SocketAddress(storage) : nil
    }

    /// The address of a connection's peer (`getpeername`).
    static func peer(_ fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &len) }
        }
        return rc == 0 ? SocketAddress(storage) : nil
    }

    init(bytes: [UInt8], port: UInt16) {
        self.bytes = bytes
        self.port = port
    }

    private init?(_ storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            let a = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            self.init(bytes: withUnsafeBytes(of: a.sin_addr) { Array($0) }, port: UInt16(bigEndian: a.sin_port))
        case AF_INET6:
            let a = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            self.init(bytes: withUnsafeBytes(of: a.sin6_addr) { Array($0) }, port: UInt16(bigEndian: a.sin6_port))
        default:
            return nil
        }
    }

    /// An IPv4 address as an IPv6 socket sees it (::ffff:a.b.c.d); nil for an IPv6 address.
    var v4Mapped: SocketAddress? {
        guard bytes.count == 4 else { return nil }
        return SocketAddress(bytes: [UInt8](repeating: 0, count: 10) + [0xff, 0xff] + bytes, port: port)
    }
}

/// Whose is the socket at the other end of a loopback connection: its entry in /proc/net/tcp (or tcp6) names the
/// uid that created it.
///
/// The peer's socket is the entry whose local address is the connection's peer address and whose remote address is
/// the listener's own. When no entry is found (the peer closed and is gone, /proc is not mounted, the table is too
/// big, another network namespace) the connection is allowed: the check is a defence in depth — the start page, the
/// cookie and `state` guard the sign-in without it.
enum SocketOwner {
    /// At most this much of a table is read (a busy machine may have hundreds of thousands of sockets).
    static let maxTableBytes = 64 << 20

    /// True when the peer of the accepted connection `fd` is a socket of another user than this process's
    /// effective user.
    static func isOtherUsers(connection fd: Int32) -> Bool {
        guard let peer = SocketAddress.peer(fd), let local = SocketAddress.local(fd) else { return false }
        guard let uid = owner(local: peer, remote: local) else { return false }
        return uid != geteuid()
    }

    /// The uid of the socket whose local address is `local` and remote address `remote`, if /proc shows it.
    static func owner(local: SocketAddress, remote: SocketAddress) -> UInt32? {
        if local.bytes.count == 4 {
            if let uid = search("/proc/net/tcp", local: local, remote: remote) { return uid }
            // An IPv6 socket reaches an IPv4 listener through v4-mapped addresses, and is listed in tcp6.
            guard let l = local.v4Mapped, let r = remote.v4Mapped else { return nil }
            return search("/proc/net/tcp6", local: l, remote: r)
        }
        return search("/proc/net/tcp6", local: local, remote: remote)
    }

    private static func search(_ path: String, local: SocketAddress, remote: SocketAddress) -> UInt32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var scanner = ProcNetTCPScanner(local: local, remote: remote)
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var total = 0
        while total < maxTableBytes {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            total += n
            if let uid = scanner.feed(chunk[0..<n]) { return uid }
        }
        return scanner.finish()
    }
}

/// Looks, line by line, for the uid of one socket in the text of /proc/net/tcp or /proc/net/tcp6:
///
///     sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
///      0: 0100007F:A1B2 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 12345 …
///
/// Addresses are hex: IPv4 one 32-bit word, IPv6 four, each printed as the kernel loaded it (host byte order); the
/// port is in host order. The text is read as outside input: any line that is not exactly in this shape is skipped,
/// lines longer than 512 bytes are skipped, and no value can trap.
struct ProcNetTCPScanner {
    let local: SocketAddress
    let remote: SocketAddress
    private var line: [UInt8] = []
    private var overlong = false
    static let maxLine = 512

    init(local: SocketAddress, remote: SocketAddress) {
        self.local = local
        self.remote = remote
    }

    /// The uid in `text` (a whole table), if any.
    static func find(in text: [UInt8], local: SocketAddress, remote: SocketAddress) -> UInt32? {
        var s = ProcNetTCPScanner(local: local, remote: remote)
        return s.feed(text) ?? s.finish()
    }

    /// Scans more of the table; the uid once a complete line matches.
    mutating func feed(_ bytes: some Collection<UInt8>) -> UInt32? {
        for b in bytes {
            if b == UInt8(ascii: "\n") {
                let uid = overlong ? nil : match(line)
                line.removeAll(keepingCapacity: true)
                overlong = false
                if let uid { return uid }
            } else if line.count < Self.maxLine {
                line.append(b)
            } else {
                overlong = true
            }
        }
        return nil
    }

    /// The last line, when the table does not end with a line break.
    mutating func finish() -> UInt32? {
        defer { line.removeAll() }
        return overlong ? nil : match(line)
    }

    private func match(_ line: [UInt8]) -> UInt32? {
        let fields = line.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        guard fields.count > 7, Self.address(fields[1]) == local, Self.address(fields[2]) == remote else {
            return nil
        }
        return Self.decimal(fields[7])
    }

    /// "0100007F:1F90" → 127.0.0.1:8080 (on a little-endian machine); nil unless exactly that shape.
    static func address(_ field: ArraySlice<UInt8>) -> SocketAddress? {
        guard let colon = field.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let address = field[field.startIndex..<colon]
        let portText = field[field.index(after: colon)...]
        guard address.count == 8 || address.count == 32, portText.count == 4, let port = hex(portText) else {
            return nil
        }
        var bytes: [UInt8] = []
        var i = address.startIndex
        while i < address.endIndex {
            guard let word = hex(address[i..<(i + 8)]) else { return nil }
            // The word as it lay in memory: the kernel printed the network-order address loaded as a host integer.
            bytes += withUnsafeBytes(of: UInt32(truncatingIfNeeded: word)) { Array($0) }
            i += 8
        }
        return SocketAddress(bytes: bytes, port: UInt16(truncatingIfNeeded: port))
    }

    /// Up to 8 hex digits (either case).
    static func hex(_ digits: ArraySlice<UInt8>) -> UInt64? {
        guard !digits.isEmpty, digits.count <= 8 else { return nil }
        var v: UInt64 = 0
        for d in digits {
            let n: UInt8
            switch d {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): n = d - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): n = d - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): n = d - UInt8(ascii: "A") + 10
            default: return nil
            }
            v = v << 4 | UInt64(n)
        }
        return v
    }

    /// A decimal uid (at most 10 digits, at most UInt32.max).
    static func decimal(_ digits: ArraySlice<UInt8>) -> UInt32? {
        guard !digits.isEmpty, digits.count <= 10 else { return nil }
        var v: UInt64 = 0
        for d in digits {
            guard d >= UInt8(ascii: "0"), d <= UInt8(ascii: "9") else { return nil }
            v = v * 10 + UInt64(d - UInt8(ascii: "0"))
        }
        return v <= UInt64(UInt32.max) ? UInt32(v) : nil
    }
}
