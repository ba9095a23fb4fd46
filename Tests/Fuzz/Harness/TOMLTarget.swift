// Target "toml": the nativeauth command's profile file (NativeAuthTOML). Not through the C ABI: the file is the
// user's, read by the command. Whatever the bytes, the parser answers a table or an error naming a line of the input;
// a table it answers, written back as TOML (every leaf as a dotted key at the top level, values inline), parses to
// the same table — so nothing it accepts is misread.
import NativeAuthTOML

func fuzzTOML(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    let table: [String: TOMLValue]
    do { table = try TOMLParser.parse(bytes) } catch {
        let lines = bytes.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
        guard error.line >= 1, error.line <= lines, !error.message.isEmpty else {
            finding("a TOML error names no line of the input", error.description)
        }
        return
    }
    let text = TOMLWriter.document(table)
    let again: [String: TOMLValue]
    do { again = try TOMLParser.parse(text) } catch {
        finding("a parsed document written back does not parse", "\(error)\n\(text)")
    }
    guard again == table else { finding("a parsed document written back parses differently", text) }
}

/// Writes a table as TOML the parser reads back to the same value.
enum TOMLWriter {
    static func document(_ table: [String: TOMLValue]) -> String {
        var out = ""
        leaves(table, path: [], into: &out)
        return out
    }

    private static func leaves(_ table: [String: TOMLValue], path: [String], into out: inout String) {
        for (key, value) in table.sorted(by: { $0.key < $1.key }) {
            if case .table(let inner) = value, !inner.isEmpty {
                leaves(inner, path: path + [key], into: &out)
            } else {
                out += (path + [key]).map(quoted).joined(separator: ".") + " = " + inline(value) + "\n"
            }
        }
    }

    private static func inline(_ value: TOMLValue) -> String {
        switch value {
        case .string(let s): return quoted(s)
        case .integer(let n): return String(n)
        case .boolean(let b): return b ? "true" : "false"
        case .array(let items): return "[" + items.map(inline).joined(separator: ", ") + "]"
        case .table(let t):
            let members = t.sorted { $0.key < $1.key }.map { quoted($0.key) + " = " + inline($0.value) }
            return "{" + members.joined(separator: ", ") + "}"
        }
    }

    /// A basic string: `"`, `\` and controls escaped.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where u.value < 0x20 || u.value == 0x7F:
                let hex = String(u.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
