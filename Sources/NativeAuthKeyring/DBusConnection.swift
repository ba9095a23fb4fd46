internal import CLinux
internal import Glibc
internal import NativeAuthCore

/// A point in time on the monotonic clock by which an operation must be over.
struct Deadline: Sendable {
    let end: Double

    init(seconds: Double) { end = Monotonic.seconds() + seconds }

    /// The time left, in whole milliseconds rounded up, for `poll` (0 once passed).
    var remainingMilliseconds: Int32 {
        let left = (end - Monotonic.seconds()) * 1000
        guard left > 0 else { return 0 }
        return Int32(min(left.rounded(.up), Double(Int32.max)))
    }
}

/// Why a D-Bus exchange failed. Each case's text says what was being done; none holds a message's body.
enum DBusFailure: Error, Equatable, Sendable, CustomStringConvertible {
    /// No address, or none this client can use.
    case noAddress(String)
    /// No socket of the address could be connected to.
    case cannotConnect(String)
    /// The deadline passed while waiting for what the text names.
    case timedOut(String)
    /// The peer closed the connection or the socket failed.
    case disconnected(String)
    /// The bus refused our credentials.
    case authenticationFailed(String)
    /// The socket is held by a process of another user: nothing is sent to it.
    case untrustedBus(String)
    /// The peer broke the protocol (a malformed or oversized message, an unexpected answer).
    case protocolError(String)
    /// A call was answered with an error.
    case errorReply(name: String, message: String)

    var description: String {
        switch self {
        case .noAddress(let s), .cannotConnect(let s), .timedOut(let s), .disconnected(let s),
            .authenticationFailed(let s), .untrustedBus(let s), .protocolError(let s):
            return s
        case .errorReply(let name, let message):
            return message.isEmpty ? name : "\(name): \(message.prefix(200))"
        }
    }
}

/// A connection to a message bus over a Unix socket: the bus's owner checked (`SO_PEERCRED`: this user or root, before
/// a byte is sent), SASL `EXTERNAL` authentication (the kernel tells the bus who we are), `Hello`, then method calls,
/// each answered by the reply with its serial (signals and other messages that arrive meanwhile are dropped). Every
/// wait — connecting, authenticating, each reply — ends at the connection's deadline: nothing here waits for D-Bus's
/// own 25-second call timeout or a service's 120-second activation. The socket is non-blocking and close-on-exec,
/// writes never raise SIGPIPE, and it is closed when the value goes. Used by one thread.
final class DBusConnection {
    private var fd: Int32 = -1
    private let inbox = WipedBuffer(capacity: 4096)
    private var lastSerial: UInt32 = 0
    let deadline: Deadline
    /// Which endpoint is connected.
    private(set) var endpoint: DBusEndpoint = .path([])
    /// The name the bus gave this connection (`Hello`).
    private(set) var uniqueName = ""

    static let bus = "org.freedesktop.DBus"
    /// The longest SASL line read from the bus.
    static let maxAuthLine = 1024

    /// Connects to the first endpoint of `address` that accepts and is held by this user or root, authenticates and
    /// says `Hello`, by `deadline`. An endpoint held by another user is skipped with nothing sent to it.
    init(address: String, deadline: Deadline) throws(DBusFailure) {
        self.deadline = deadline
        let (endpoints, skipped) = DBusEndpoint.parse(address)
        guard !endpoints.isEmpty else {
            let why = skipped.isEmpty ? "" : ": " + skipped.joined(separator: "; ")
            throw .noAddress("no usable D-Bus address in \"\(address.prefix(200))\"\(why)")
        }
        var failures: [String] = []
        for e in endpoints where fd < 0 {
            switch Self.connect(e, deadline: deadline) {
            case .success(let socket):
                if let refused = Self.checkOwner(socket, e) {
                    _ = Glibc.close(socket)
                    failures.append(refused.description)
                    continue
                }
                fd = socket
                endpoint = e
            case .failure(let why):
                if case .timedOut = why { throw why }
                failures.append(why.description)
            }
        }
        guard fd >= 0 else { throw .cannotConnect(failures.joined(separator: "; ")) }
        try authenticate()
        let hello = try call(.call(Self.bus, "/org/freedesktop/DBus", Self.bus, "Hello"))
        uniqueName = hello.body.first?.stringValue ?? ""
    }

    deinit { close() }

    /// Closes the socket (the bus then drops everything the connection held: sessions, prompts).
    func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
        inbox.removeAll()
    }

    /// Sends `message` and waits for its reply; an error reply is thrown as `.errorReply`.
    func call(_ message: DBusMessage) throws(DBusFailure) -> DBusMessage {
        let what = message.member ?? "call"
        guard fd >= 0 else { throw .disconnected("the connection is closed (\(what))") }
        lastSerial = lastSerial == UInt32.max ? 1 : lastSerial + 1
        let serial = lastSerial
        try send(message.encoded(serial: serial), what: what)
        while true {
            let reply = try receive(what: what)
            guard reply.replySerial == serial else { continue }
            switch reply.type {
            case DBusMessage.methodReturn: return reply
            case DBusMessage.errorReply:
                throw .errorReply(name: reply.errorName ?? "", message: reply.errorMessage)
            default: continue
            }
        }
    }

    // MARK: Connecting

    /// Why the bus at the other end of `socket` is not to be trusted, or nil when it is run by this process's
    /// effective user or by root. Anyone may bind a name in the abstract namespace, and a socket file of a bus that
    /// ended may be re-created by another user (a `DBUS_SESSION_BUS_ADDRESS` left in a long-lived tmux or SSH
    /// session): such a listener would be handed the cache key. The kernel records the listener's credentials when it
    /// called `listen`; they cannot be forged by the listener.
    static func checkOwner(_ socket: Int32, _ endpoint: DBusEndpoint) -> DBusFailure? {
        var uid: UInt32 = 0
        var pid: Int32 = 0
        guard nashim_peer_uid(socket, &uid, &pid) == 0 else {
            return .untrustedBus(
                "cannot tell who runs the bus at \(endpoint.description) (SO_PEERCRED: \(errnoText(errno))); it is "
                    + "not used"
            )
        }
        let me = geteuid()
        guard uid != me && uid != 0 else { return nil }
        return .untrustedBus(
            "the bus at \(endpoint.description) is run by another user (uid \(uid), process \(pid)), not by this user "
                + "(uid \(me)) or root; nothing was sent to it (is DBUS_SESSION_BUS_ADDRESS left from a session that "
                + "ended?)"
        )
    }

    private static func connect(_ endpoint: DBusEndpoint, deadline: Deadline) -> Result<Int32, DBusFailure> {
        let fd = socket(
            AF_UNIX,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            0
        )
        guard fd >= 0 else { return .failure(.cannotConnect("socket: \(errnoText(errno))")) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8]
        switch endpoint {
        case .path(let p): name = p
        case .abstract(let a): name = [0] + a
        }
        withUnsafeMutableBytes(of: &address.sun_path) { dst in
            for (i, b) in name.prefix(dst.count - 1).enumerated() { dst[i] = b }
        }
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
        // A file's name is NUL-terminated; an abstract name is exactly its bytes.
        let extra: Int
        if case .path = endpoint { extra = 1 } else { extra = 0 }
        let length = socklen_t(pathOffset + min(name.count + extra, MemoryLayout.size(ofValue: address.sun_path)))
        while true {
            let rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, length) }
            }
            if rc == 0 { return .success(fd) }
            let e = errno
            switch e {
            case EINTR, EINPROGRESS:
                // The connection completes in the background: wait until the socket is writable.
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let n = poll(&p, 1, deadline.remainingMilliseconds)
                if n == 0 {
                    _ = Glibc.close(fd)
                    return .failure(.timedOut("connecting to \(endpoint.description) did not complete"))
                }
                var soError: Int32 = 0
                var len = socklen_t(MemoryLayout<Int32>.size)
                if n > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len) == 0 && soError == 0 {
                    return .success(fd)
                }
                _ = Glibc.close(fd)
                return .failure(.cannotConnect("connect to \(endpoint.description): \(errnoText(soError))"))
            case EAGAIN:
                // The listener's queue is full (it does not accept): try again shortly, until the deadline.
                guard deadline.remainingMilliseconds > 0 else {
                    _ = Glibc.close(fd)
                    return .failure(.timedOut("\(endpoint.description) accepted no connection"))
                }
                _ = poll(nil, 0, min(10, deadline.remainingMilliseconds))
            default:
                _ = Glibc.close(fd)
                return .failure(.cannotConnect("connect to \(endpoint.description): \(errnoText(e))"))
            }
        }
    }

    /// SASL (the specification, "Authentication Protocol"): the credentials byte, `AUTH EXTERNAL` with our uid in
    /// hex-encoded decimal, `OK <guid>` back, then `BEGIN`. Unix-fd passing is not negotiated: no call here needs it.
    private func authenticate() throws(DBusFailure) {
        let uid = Array(String(geteuid()).utf8)
        let hex = uid.map { String($0, radix: 16) }.joined()
        try send(Array("\0AUTH EXTERNAL \(hex)\r\n".utf8), what: "AUTH EXTERNAL")
        let line = try readLine(what: "AUTH EXTERNAL")
        guard line.hasPrefix("OK ") else {
            if line.hasPrefix("REJECTED") {
                throw .authenticationFailed("the bus at \(endpoint.description) refused EXTERNAL authentication")
            }
            throw .protocolError("the bus at \(endpoint.description) answered AUTH with \"\(line.prefix(64))\"")
        }
        try send(Array("BEGIN\r\n".utf8), what: "BEGIN")
    }

    /// A CR LF-terminated line of the authentication exchange (a bare LF ends one too), without its end.
    private func readLine(what: String) throws(DBusFailure) -> String {
        while true {
            let found = inbox.withBytes { bytes -> (line: String, length: Int)? in
                guard let lf = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                let end = lf > 0 && bytes[lf - 1] == UInt8(ascii: "\r") ? lf - 1 : lf
                return (String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self), lf + 1)
            }
            if let found {
                inbox.removeFirst(found.length)
                return found.line
            }
            guard inbox.count < Self.maxAuthLine else {
                throw .protocolError("a line of the authentication exchange was longer than \(Self.maxAuthLine) bytes")
            }
            try readMore(what: what)
        }
    }

    // MARK: Messages

    private func receive(what: String) throws(DBusFailure) -> DBusMessage {
        while true {
            switch inbox.withBytes({ DBusMessage.frame($0) }) {
            case .complete(let length):
                let decoded = inbox.withBytes { bytes in
                    Result { () throws(DBusDecodeError) in
                        try DBusMessage.decode(UnsafeRawBufferPointer(rebasing: bytes[0..<length]))
                    }
                }
                inbox.removeFirst(length)
                switch decoded {
                case .success(let m): return m
                case .failure(let e): throw .protocolError("an invalid message from the bus (\(e.reason))")
                }
            case .invalid(let why):
                throw .protocolError("an invalid message from the bus (\(why))")
            case .incomplete:
                try readMore(what: what)
            }
        }
    }

    /// Waits (until the deadline) for bytes and appends them to the inbox.
    private func readMore(what: String) throws(DBusFailure) {
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let n = poll(&p, 1, deadline.remainingMilliseconds)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                if n == 0 { throw .timedOut("\(endpoint.description) did not answer \(what)") }
                throw .disconnected("poll: \(errnoText(errno))")
            }
            let got = inbox.appendInPlace(maximum: 64 * 1024) { read(fd, $0, $1) }
            if got > 0 { return }
            if got == 0 {
                throw .disconnected("\(endpoint.description) closed the connection instead of answering \(what)")
            }
            let e = errno
            if e == EINTR || e == EAGAIN { continue }
            throw .disconnected("reading from \(endpoint.description): \(errnoText(e))")
        }
    }

    private func send(_ bytes: [UInt8], what: String) throws(DBusFailure) {
        let b = WipedBuffer(capacity: bytes.count)
        b.append(bytes)
        try send(b, what: what)
    }

    /// Writes all of `buffer` by the deadline.
    private func send(_ buffer: WipedBuffer, what: String) throws(DBusFailure) {
        try buffer.withBytes { (bytes) throws(DBusFailure) in
            guard let base = bytes.baseAddress else { return }
            var sent = 0
            while sent < bytes.count {
                let n = Glibc.send(fd, base + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                if n > 0 {
                    sent += n
                    continue
                }
                let e = errno
                if n < 0 && e == EINTR { continue }
                guard n < 0 && e == EAGAIN else {
                    throw .disconnected("writing \(what) to \(endpoint.description): \(errnoText(e))")
                }
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                if poll(&p, 1, deadline.remainingMilliseconds) == 0 {
                    throw .timedOut("\(endpoint.description) did not take \(what) in time")
                }
            }
        }
    }
}

/// `strerror` text for an errno value.
func errnoText(_ e: Int32) -> String {
    guard let s = strerror(e) else { return "errno \(e)" }
    return String(cString: s)
}
