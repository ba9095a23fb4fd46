internal import Glibc

/// stdin as `RedirectWait` reads it: lines taken from whatever bytes are there, never waiting for the rest of a
/// line. A line that arrives in pieces — or a piece whose end never comes (a pipe whose writer stalls, Ctrl-D in the
/// middle of a terminal line) — never holds the wait: between reads the listener is served, the deadline is looked
/// at, and Ctrl-C is noticed (was: a blocking read of the whole line, which none of them could end).
final class PastedInput {
    enum Next: Equatable {
        /// A whole line (without its CR LF), or what came before the end of the input.
        case line(String)
        /// Nothing (more) yet.
        case nothing
        /// The end of the input, with no line left.
        case end
    }

    /// A line longer than this is handed over as it is (and refused: no redirect address is that long); the rest
    /// makes the next line.
    static let maxLine = 64 * 1024

    private let fd: Int32
    private var buffer: [UInt8] = []
    private var ended = false

    init(fd: Int32 = 0) { self.fd = fd }

    /// The next line when one is there; else waits up to `waitMs` for bytes, takes those that came, and answers the
    /// line they complete, if any.
    func next(waitMs: Int32) -> Next {
        if let line = takeLine() { return .line(line) }
        if ended { return takeRest() }
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, max(0, waitMs)) > 0, p.revents != 0 else { return .nothing }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR || errno == EAGAIN { return .nothing }
            ended = true
        } else if n == 0 {
            ended = true
        } else {
            buffer += chunk[0..<n]
        }
        if let line = takeLine() { return .line(line) }
        return ended ? takeRest() : .nothing
    }

    private func takeLine() -> String? {
        let cut: Int
        let skip: Int
        if let newline = buffer.firstIndex(of: 0x0A) {
            (cut, skip) = (newline, 1)
        } else if buffer.count >= Self.maxLine {
            (cut, skip) = (Self.maxLine, 0)
        } else {
            return nil
        }
        var line = Array(buffer[..<cut])
        buffer.removeFirst(cut + skip)
        if line.last == 0x0D { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }

    private func takeRest() -> Next {
        guard !buffer.isEmpty else { return .end }
        defer { buffer.removeAll() }
        return .line(String(decoding: buffer, as: UTF8.self))
    }
}
