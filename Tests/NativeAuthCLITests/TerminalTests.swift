import NativeAuthJSON
import Testing

@testable import nativeauth_cli

/// What the command prints that came from outside reaches the terminal escaped: C0 (but the output's own newlines),
/// DEL, C1, the bidirectional controls and the line and paragraph separators (issue 18's review; the end-to-end side
/// is bindings/python/tests/test_cli.py).
@Suite("Terminal escaping")
struct TerminalTests {
    /// Every character that must never reach the terminal raw.
    static let every: String = {
        var scalars: [UInt32] = Array(0..<0x20) + Array(0x7F..<0xA0)
        scalars += [0x61C, 0x200E, 0x200F] + Array(0x202A...0x202E) + Array(0x2066...0x2069) + [0x2028, 0x2029]
        return String(String.UnicodeScalarView(scalars.compactMap(UnicodeScalar.init)))
    }()
    static let hostile =
        "\u{1b}]0;pwned\u{07}\u{1b}]52;c;cHduZWQ=\u{07}\u{1b}[2J\r\u{9b}1A\u{85}\u{7f}\u{202e}\u{2066}\u{200f}\u{61c}"
        + "\nfake signed in"

    static func isClean(_ text: String) -> Bool {
        !text.unicodeScalars.contains { $0 != "\n" && Terminal.isUnsafe($0.value) }
    }

    @Test("safe: each unsafe character a visible escape; printable text unchanged; idempotent")
    func safe() {
        let safe = Terminal.safe("a" + Self.every + "é✓\\z")
        #expect(safe.hasPrefix("a\\x00\\x01"))
        #expect(safe.hasSuffix("\\u2028\\u2029é✓\\z"))
        #expect(safe.contains("\\x1b\\x1c") && safe.contains("\\x7f\\x80") && safe.contains("\\x9f\\u061c\\u200e"))
        #expect(!safe.contains("\n") && Self.isClean(safe))
        #expect(Terminal.safe(safe) == safe)
        #expect(Terminal.safe("plain text") == "plain text")
    }

    @Test("lines: the command's own newlines stay, everything else is escaped")
    func lines() {
        #expect(Terminal.lines("one\u{1b}\ntwo\u{202e}") == "one\\x1b\ntwo\\u202e")
    }

    @Test("safeBody: a body's lines and tabs stay; controls, a lone CR and bytes that are not UTF-8 are escaped")
    func safeBody() {
        let body = Array("a\tb\r\nc\rd é✓\n".utf8) + Array(Self.every.utf8) + [0xFF, 0xC2, 0x41, 0xE2, 0x80]
        let shown = Terminal.safeBody(body)
        #expect(shown.hasPrefix("a\tb\r\nc\\x0dd é✓\n\\x00\\x01\\x02"))
        #expect(shown.hasSuffix("\\u2028\\u2029\\xff\\xc2A\\xe2\\x80"))
        #expect(!shown.unicodeScalars.contains { !["\n", "\t", "\r"].contains($0) && Terminal.isUnsafe($0.value) })
        #expect(shown.filter { $0 == "\r\n" }.count == 1)  // the CR LF is one Character
        #expect(Terminal.safeBody(Array("plain\nlines\n".utf8)) == "plain\nlines\n")
        #expect(Terminal.safeBody([]) == "")
    }

    @Test("json: the same value, in ASCII, with no raw control (DEL too)")
    func json() throws {
        let document: JSONValue = [
            "k\u{85}\u{202e}": .array([.string("v" + Self.every), 1, .null]), "n": ["x\u{1b}": "é"],
        ]
        for compact in [false, true] {
            let text = Terminal.json(document, compact: compact)
            #expect(try JSONValue.parse(text) == document)
            #expect(Self.isClean(text) && text.unicodeScalars.allSatisfy { $0.isASCII })
            let lower = text.lowercased()  // jansson writes \u202E
            #expect(lower.contains("\\u007f") && lower.contains("\\u0085") && lower.contains("\\u202e"))
            #expect(compact == !text.contains("\n"))
        }
    }

    @Test("--verbose log lines are one safe line")
    func logLines() {
        let line = Library.logLine(3, "token answered \(Self.hostile)", "id\(Self.hostile)")
        #expect(line.hasPrefix("nativeauth: log info: token answered \\x1b]0;pwned\\x07"))
        #expect(line.filter { $0 == "\n" }.count == 1 && line.hasSuffix("\n"))
        #expect(Self.isClean(String(line.dropLast())))
        #expect(Library.logLine(9, "plain", nil) == "nativeauth: log 9: plain\n")
    }

    @Test("the spinner shows its label escaped, with only its own controls")
    func spinner() {
        let spinner = Spinner("Waiting for \(Self.hostile)")
        let line = Spinner.line(0, Terminal.safe("Waiting for \(Self.hostile)"), seconds: 3)
        #expect(line.hasPrefix("\r⠋ Waiting for \\x1b]0;pwned"))
        #expect(line.hasSuffix("(3 s, Ctrl-C to stop)\u{1B}[K"))
        #expect(Self.isClean(String(line.dropFirst().dropLast(3))))
        _ = spinner
    }
}
