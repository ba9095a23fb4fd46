internal import Glibc
import NativeAuthCrypto
import NativeAuthJSON

// `nativeauth call`'s response body (issue 28, defect 7). The body is the API's, and a hostile API can put terminal
// controls in it — set the window title, clear the screen, move the cursor, draw a fake "Signed in as admin". On a
// terminal the body is shown with those escaped; with `--raw`, or when stdout is not a terminal (a pipe, a file), its
// exact bytes are written, as curl writes them.

extension CallCommand {
    /// Writes the body of `response` (`na_call_api`'s result) on stdout: its bytes exactly when `raw` or when stdout
    /// is not a terminal, else `Terminal.safeBody` of them (and a final newline, so the shell's prompt starts a line).
    /// A JSON body (the library parses it) is written indented, its strings' characters as they came.
    static func printBody(_ response: JSONValue, raw: Bool) {
        var bytes: [UInt8]
        if let b64 = response["body_base64"]?.stringValue {
            bytes = Base64.decode(b64) ?? []  // not UTF-8
        } else if let body = response["body"] {
            switch body {
            case .string(let text): bytes = Array(text.utf8)
            case .null: return
            default: bytes = (body.serializedBytes(pretty: true, asciiOnly: false) ?? []) + [0x0A]
            }
        } else {
            return
        }
        guard !bytes.isEmpty else { return }
        guard !raw && isatty(1) != 0 else { return Terminal.outBytes(bytes) }
        let shown = Terminal.safeBody(bytes)
        Terminal.write(1, shown.hasSuffix("\n") ? shown : shown + "\n")
    }
}

extension Terminal {
    /// A response body as a terminal may show it: its text with newlines, tabs and CR LF line ends kept, every other
    /// character `isUnsafe` marks (C0 controls, a lone CR, DEL, C1 controls, the bidirectional controls, the line and
    /// paragraph separators) as its visible escape (`\x1b`, `\x9b`, `\u202e`), and each byte that is not UTF-8 as
    /// `\xNN`. Printable text, ASCII or not, is unchanged.
    static func safeBody(_ bytes: [UInt8]) -> String {
        var out = ""
        out.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        var at = 0  // the index in `bytes` of what the parser answers next
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                let scalar = Unicode.UTF8.decode(encoded)
                let v = scalar.value
                let kept = v == 0x0A || v == 0x09 || (v == 0x0D && at + 1 < bytes.count && bytes[at + 1] == 0x0A)
                if kept || !isUnsafe(v) {
                    out.unicodeScalars.append(scalar)
                } else {
                    out += v < 0x100 ? "\\x" + hex(v, 2) : "\\u" + hex(v, 4)
                }
                at += encoded.count
            case .error(let length):
                for b in bytes[at..<min(at + length, bytes.count)] { out += "\\x" + hex(UInt32(b), 2) }
                at += length
            case .emptyInput:
                return out
            }
        }
    }
}
