/// A value of the configuration file.
public enum TOMLValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case boolean(Bool)
    case array([TOMLValue])
    case table([String: TOMLValue])

    public var table: [String: TOMLValue]? {
        if case .table(let t) = self { return t }
        return nil
    }
}

/// Why a file was refused, and on which line (1-based).
public struct TOMLError: Error, Equatable, CustomStringConvertible {
    public var line: Int
    public var message: String
    public var description: String { "line \(line): \(message)" }
}

/// The subset of TOML (v1.0) that profiles need, parsed by hand: tables (`[profiles.work]`, bare or quoted keys),
/// dotted keys, basic strings (with TOML's escapes) and literal strings, integers, booleans, arrays (over several
/// lines too) and inline tables (`registries = { "registry.example" = ["scope"] }`), comments. Anything else —
/// multi-line strings, floats, dates, arrays of tables — is an error naming the line.
///
/// Why not TOMLKit (in the package mirror)? It wraps toml++, a C++ library: a longer build, a larger command and C++
/// in the process, for a file of a few profiles. This parser is about 250 lines, has its own tests
/// (`Tests/NativeAuthTOMLTests`) and a libFuzzer target (`toml`), and refuses input it does not understand.
public struct TOMLParser {
    private let s: [UInt8]
    private var i = 0
    private var depth = 0

    /// Refused beyond this size (a configuration file is a few kilobytes) and this nesting.
    public static let maxBytes = 1 << 20
    public static let maxDepth = 32

    init(_ bytes: [UInt8]) { s = bytes }

    /// The document's top-level table.
    public static func parse(_ text: String) throws(TOMLError) -> [String: TOMLValue] {
        try parse(Array(text.utf8))
    }

    /// The document's top-level table; the bytes must be UTF-8 (TOML's encoding).
    public static func parse(_ bytes: [UInt8]) throws(TOMLError) -> [String: TOMLValue] {
        guard bytes.count <= maxBytes else { throw TOMLError(line: 1, message: "the file is larger than 1 MiB") }
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw TOMLError(line: 1, message: "the file is not UTF-8")
        }
        var p = TOMLParser(bytes)
        return try p.document()
    }

    private func fail(_ message: String) -> TOMLError {
        TOMLError(line: s[0..<min(i, s.count)].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }, message: message)
    }

    private var peek: UInt8? { i < s.count ? s[i] : nil }

    private func starts(_ text: String) -> Bool {
        let t = Array(text.utf8)
        return i + t.count <= s.count && Array(s[i..<(i + t.count)]) == t
    }

    private mutating func skipSpaces() { while let c = peek, c == 0x20 || c == 0x09 { i += 1 } }

    private mutating func skipComment() {
        guard peek == UInt8(ascii: "#") else { return }
        while let c = peek, c != 0x0A { i += 1 }
    }

    /// Spaces, comments and line ends (CR LF too).
    private mutating func skipBlank() {
        while true {
            skipSpaces()
            skipComment()
            if peek == 0x0A || (peek == 0x0D && i + 1 < s.count && s[i + 1] == 0x0A) {
                i += peek == 0x0D ? 2 : 1
                continue
            }
            return
        }
    }

    private mutating func endOfLine() throws(TOMLError) {
        skipSpaces()
        skipComment()
        if peek == 0x0D, i + 1 < s.count, s[i + 1] == 0x0A { i += 1 }
        guard peek == nil || peek == 0x0A else { throw fail("unexpected \(describe(peek))") }
    }

    private func describe(_ c: UInt8?) -> String {
        guard let c else { return "end of file" }
        if c >= 0x20 && c < 0x7F { return "'\(Character(UnicodeScalar(c)))'" }
        return "byte 0x\(String(c, radix: 16))"
    }

    private mutating func document() throws(TOMLError) -> [String: TOMLValue] {
        var root: [String: TOMLValue] = [:]
        var current: [String] = []
        var defined: Set<[String]> = []
        while true {
            skipBlank()
            guard let c = peek else { return root }
            if c == UInt8(ascii: "[") {
                i += 1
                if peek == UInt8(ascii: "[") { throw fail("arrays of tables are not supported") }
                let keys = try key()
                skipSpaces()
                guard peek == UInt8(ascii: "]") else { throw fail("expected ']'") }
                i += 1
                guard defined.insert(keys).inserted else {
                    throw fail("table [\(keys.joined(separator: "."))] defined twice")
                }
                try Self.insert(&root, path: keys, value: nil, fail: fail)
                current = keys
            } else {
                let keys = try key()
                skipSpaces()
                guard peek == UInt8(ascii: "=") else { throw fail("expected '='") }
                i += 1
                skipSpaces()
                let v = try value()
                try Self.insert(&root, path: current + keys, value: v, fail: fail)
            }
            try endOfLine()
        }
    }

    /// Puts `value` at `path` (nil: makes sure a table is there), creating tables on the way.
    private static func insert(
        _ table: inout [String: TOMLValue],
        path: [String],
        value: TOMLValue?,
        fail: (String) -> TOMLError
    ) throws(TOMLError) {
        guard let first = path.first else { return }
        if path.count == 1, let value {
            guard table[first] == nil else { throw fail("'\(first)' set twice") }
            table[first] = value
            return
        }
        var inner: [String: TOMLValue]
        switch table[first] {
        case nil: inner = [:]
        case .table(let t)?: inner = t
        default: throw fail("'\(first)' is not a table")
        }
        try insert(&inner, path: Array(path.dropFirst()), value: value, fail: fail)
        table[first] = .table(inner)
    }

    private mutating func key() throws(TOMLError) -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            switch peek {
            case UInt8(ascii: "\"")?: parts.append(try basicString())
            case UInt8(ascii: "'")?: parts.append(try literalString())
            default:
                let start = i
                while let c = peek, Self.isBare(c) { i += 1 }
                guard i > start else { throw fail("expected a key") }
                parts.append(String(decoding: s[start..<i], as: UTF8.self))
            }
            skipSpaces()
            guard peek == UInt8(ascii: ".") else { return parts }
            i += 1
        }
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)
    }

    /// What TOML does not allow raw in a string: C0 controls but tab, and DEL (a CR LF ends the line before).
    private static func isControl(_ c: UInt8) -> Bool { (c < 0x20 && c != 0x09) || c == 0x7F }

    private static func isBare(_ c: UInt8) -> Bool {
        (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c == 0x2D
    }

    private mutating func value() throws(TOMLError) -> TOMLValue {
        switch peek {
        case UInt8(ascii: "\"")?:
            if starts("\"\"\"") { throw fail("multi-line strings are not supported") }
            return .string(try basicString())
        case UInt8(ascii: "'")?:
            if starts("'''") { throw fail("multi-line strings are not supported") }
            return .string(try literalString())
        case UInt8(ascii: "[")?:
            return try nested { (p: inout TOMLParser) throws(TOMLError) in try p.array() }
        case UInt8(ascii: "{")?:
            return try nested { (p: inout TOMLParser) throws(TOMLError) in try p.inlineTable() }
        default:
            if starts("true") {
                i += 4
                return .boolean(true)
            }
            if starts("false") {
                i += 5
                return .boolean(false)
            }
            return .integer(try integer())
        }
    }

    private mutating func nested(
        _ body: (inout TOMLParser) throws(TOMLError) -> TOMLValue
    ) throws(TOMLError) -> TOMLValue {
        depth += 1
        defer { depth -= 1 }
        guard depth <= Self.maxDepth else { throw fail("nested deeper than \(Self.maxDepth) levels") }
        return try body(&self)
    }

    /// A decimal integer with optional sign and single underscores between digits; no leading zeros.
    private mutating func integer() throws(TOMLError) -> Int64 {
        let start = i
        var text = ""
        if let c = peek, c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
            text.unicodeScalars.append(UnicodeScalar(c))
            i += 1
        }
        var digits = 0
        var lastUnderscore = false
        while let c = peek, (c >= 0x30 && c <= 0x39) || c == 0x5F {
            if c == 0x5F {
                guard digits > 0, !lastUnderscore else { throw fail("misplaced '_' in a number") }
                lastUnderscore = true
            } else {
                text.unicodeScalars.append(UnicodeScalar(c))
                digits += 1
                lastUnderscore = false
            }
            i += 1
        }
        guard digits > 0, !lastUnderscore else {
            i = start
            throw fail("unsupported value (strings, integers, booleans, arrays and inline tables only)")
        }
        let body = text.hasPrefix("+") || text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard body == "0" || !body.hasPrefix("0") else { throw fail("leading zeros in a number") }
        guard let n = Int64(text) else { throw fail("the number is out of range") }
        return n
    }

    private mutating func array() throws(TOMLError) -> TOMLValue {
        i += 1
        var items: [TOMLValue] = []
        while true {
            skipBlank()
            if peek == UInt8(ascii: "]") {
                i += 1
                return .array(items)
            }
            items.append(try value())
            skipBlank()
            if peek == UInt8(ascii: ",") {
                i += 1
            } else if peek != UInt8(ascii: "]") {
                throw fail("expected ',' or ']' in the array")
            }
        }
    }

    /// `{ key = value, … }` on one line (TOML 1.0: no newline, no trailing comma).
    private mutating func inlineTable() throws(TOMLError) -> TOMLValue {
        i += 1
        var table: [String: TOMLValue] = [:]
        skipSpaces()
        if peek == UInt8(ascii: "}") {
            i += 1
            return .table(table)
        }
        while true {
            skipSpaces()
            let keys = try key()
            skipSpaces()
            guard peek == UInt8(ascii: "=") else { throw fail("expected '=' in the inline table") }
            i += 1
            skipSpaces()
            let v = try value()
            try Self.insert(&table, path: keys, value: v, fail: fail)
            skipSpaces()
            if peek == UInt8(ascii: ",") {
                i += 1
                continue
            }
            guard peek == UInt8(ascii: "}") else { throw fail("expected ',' or '}' in the inline table") }
            i += 1
            return .table(table)
        }
    }

    private mutating func literalString() throws(TOMLError) -> String {
        i += 1
        let start = i
        while let c = peek, c != UInt8(ascii: "'") {
            guard c != 0x0A else { throw fail("unterminated string") }
            guard !Self.isControl(c) else { throw fail("a control character (\(describe(c))) in a string") }
            i += 1
        }
        guard peek != nil else { throw fail("unterminated string") }
        let text = String(decoding: s[start..<i], as: UTF8.self)
        i += 1
        return text
    }

    private mutating func basicString() throws(TOMLError) -> String {
        i += 1
        var out: [UInt8] = []
        while true {
            guard let c = peek, c != 0x0A else { throw fail("unterminated string") }
            i += 1
            if c == UInt8(ascii: "\"") { return String(decoding: out, as: UTF8.self) }
            guard c == UInt8(ascii: "\\") else {
                guard !Self.isControl(c) else {
                    i -= 1
                    throw fail("a control character (\(describe(c))) in a string")
                }
                out.append(c)
                continue
            }
            guard let e = peek else { throw fail("unterminated string") }
            i += 1
            switch e {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(e)
            case UInt8(ascii: "u"), UInt8(ascii: "U"):
                let width = e == UInt8(ascii: "u") ? 4 : 8
                guard i + width <= s.count, s[i..<(i + width)].allSatisfy(Self.isHexDigit),
                    let v = UInt32(String(decoding: s[i..<(i + width)], as: UTF8.self), radix: 16),
                    let scalar = UnicodeScalar(v)
                else { throw fail("invalid unicode escape") }
                out += Array(String(scalar).utf8)
                i += width
            default:
                throw fail("invalid escape \\\(describe(e))")
            }
        }
    }
}
