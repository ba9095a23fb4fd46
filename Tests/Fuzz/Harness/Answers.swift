import NativeAuthHTTP
import NativeAuthNet
import NativeAuthTestSupport
// Server answers as the "server" and "api" targets read them from their input, and the transport that plays them.
import Synchronization

/// HTTP answers written as text: answers separated by a line "--", each a status line, header lines
/// ("name: value"), an empty line and the body:
///
///     429
///     retry-after: 2
///
///     {"error":"slow_down"}
///     --
///     200
///     content-type: application/json
///
///     {"continuation_token":"…","challenge_type":"password"}
///
/// The status line holds the status (its first three digits; 200 when it has none), or "E" and a letter for a
/// transport failure: En network, Ec connect, Et timeout, Es TLS, El response too large, Ei internal, Eu invalid URL.
/// Lines may end in CRLF. Without an empty line, every line after the status is a header and the body is empty. A NUL
/// byte before the body is a network failure, as libcurl answers it ("Nul byte in header").
enum Answers {
    static let separator = Array("\n--\n".utf8)

    static func parse(_ bytes: some Collection<UInt8>) -> [Result<HTTPResponse, HTTPError>] {
        split(Array(bytes), on: separator).map(parseOne)
    }

    static func parseOne(_ bytes: [UInt8]) -> Result<HTTPResponse, HTTPError> {
        let (head, body) =
            splitOnce(bytes, on: Array("\n\n".utf8)) ?? splitOnce(bytes, on: Array("\r\n\r\n".utf8))
            ?? (bytes, [])
        if head.contains(0) { return .failure(HTTPError(.network, "Nul byte in header")) }
        var lines = split(head, on: [UInt8(ascii: "\n")]).map { line -> [UInt8] in
            line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line
        }
        let statusLine = lines.isEmpty ? [] : lines.removeFirst()
        if statusLine.first == UInt8(ascii: "E") {
            let kinds: [HTTPError.Kind] = [
                .network, .connect, .timeout, .tls, .responseTooLarge, .internal, .invalidURL,
            ]
            let letters = Array("nctslin".utf8)
            let kind = statusLine.dropFirst().first.flatMap { letters.firstIndex(of: $0) }.map { kinds[$0] }
            return .failure(HTTPError(kind ?? .network, "scripted transport failure"))
        }
        let digits = statusLine.prefix { $0 >= 0x30 && $0 <= 0x39 }.prefix(3)
        let status = digits.isEmpty ? 200 : digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            // As CurlHTTPClient reads a header line: name before the first colon, value without leading blanks.
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            var value = line[(colon + 1)...]
            while let f = value.first, f == 0x20 || f == 0x09 { value = value.dropFirst() }
            while let l = value.last, l == 0x20 || l == 0x09 { value = value.dropLast() }
            headers.append((String(decoding: line[..<colon], as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return .success(HTTPResponse(status: status, headers: headers, body: body))
    }

    /// The text form of answers (what `parse` reads back).
    static func encode(_ answers: [Result<HTTPResponse, HTTPError>]) -> [UInt8] {
        var out: [UInt8] = []
        for (i, a) in answers.enumerated() {
            if i > 0 { out += separator }
            switch a {
            case .success(let r):
                out += Array("\(r.status)\n".utf8)
                for (name, value) in r.headers { out += Array("\(name): \(value)\n".utf8) }
                out += Array("\n".utf8) + r.body
            case .failure(let e):
                let letters: [HTTPError.Kind: String] = [
                    .network: "n", .connect: "c", .timeout: "t", .tls: "s", .responseTooLarge: "l", .internal: "i",
                    .invalidURL: "u",
                ]
                out += Array("E\(letters[e.kind] ?? "n")\n".utf8)
            }
        }
        return out
    }

    static func split(_ bytes: [UInt8], on separator: [UInt8]) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        var rest = bytes
        while let (head, tail) = splitOnce(rest, on: separator) {
            parts.append(head)
            rest = tail
        }
        parts.append(rest)
        return parts
    }

    static func splitOnce(_ bytes: [UInt8], on separator: [UInt8]) -> ([UInt8], [UInt8])? {
        guard !separator.isEmpty, bytes.count >= separator.count else { return nil }
        var i = 0
        while i + separator.count <= bytes.count {
            if bytes[i] == separator[0] && bytes[i..<(i + separator.count)].elementsEqual(separator) {
                return (Array(bytes[..<i]), Array(bytes[(i + separator.count)...]))
            }
            i += 1
        }
        return nil
    }
}

/// Plays canned answers in order, the last one again when they run out; while `scripted` is set, the scripted
/// server answers instead (to sign in before the canned answers start). Counts what it served.
final class AnswerPlayer: Sendable {
    private struct State {
        var next = 0
        var scripted = false
        var served = 0
        var last: Int? = nil
    }
    private let answers: [Result<HTTPResponse, HTTPError>]
    private let state = Mutex(State())

    init(_ answers: [Result<HTTPResponse, HTTPError>]) { self.answers = answers }

    var scripted: Bool {
        get { state.withLock { $0.scripted } }
        set { state.withLock { $0.scripted = newValue } }
    }

    /// How many canned answers were served, and the index of the last one.
    var served: (count: Int, last: Int?) { state.withLock { ($0.served, $0.last) } }

    func answer(_ request: HTTPRequest, _ form: [String: String]) -> Result<HTTPResponse, HTTPError> {
        let index: Int? = state.withLock { s in
            if s.scripted { return nil }
            let i = min(s.next, answers.count - 1)
            s.next += 1
            s.served += 1
            s.last = i
            return i
        }
        guard let index, answers.indices.contains(index) else { return HappyServer.answer(request, form) }
        return answers[index]
    }

    /// A FakeTransport that answers every request from this player.
    func transport() -> FakeTransport {
        let t = FakeTransport()
        t.on("", { [self] request, form in answer(request, form) })
        return t
    }
}
