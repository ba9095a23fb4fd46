internal import Glibc
internal import NativeAuthCore
internal import NativeAuthJSON

/// A validating JSON scanner for the cache file (RFC 8259 grammar; nesting within `JSONDepth.limit`, the library's
/// one limit, counted as `JSONDepth` counts it). It decodes only the keys and the entry fields the cache needs and
/// notes where everything else is. One deliberate leniency: it does not check that strings are UTF-8 (jansson and
/// Python's json refuse such a file); a bad byte reads as U+FFFD and an unchanged entry is written back as it was, so
/// one bad byte from another program does not set the whole cache aside.
///
/// Why the library reads this one document without NativeAuthJSON (jansson):
/// - Speed. `make bench`, a file cache of 1,000 accounts written by MSAL for Python 1.39 (4.4 MB), 2 shared cores:
///   loading it (`na_client_new` over the file: read, scan, index) takes 5–9 ms; jansson's `json_loadb` alone takes
///   48–61 ms, before NativeAuthJSON has turned a single value into a `JSONValue` (MSAL for Python's `deserialize()`:
///   8–11 ms). Writing it back after a sign-out takes 8–10 ms with `fsync`; jansson's `json_dumps` alone 25–28 ms.
///   The rows "load: jansson json_loadb alone" and "save: jansson json_dumps alone" keep measuring it.
/// - Fidelity. Unchanged entries, and whatever other clients and SDKs wrote, go back byte for byte: a tree from
///   NativeAuthJSON would come back with sorted keys, its own escapes and number forms, duplicate keys merged, and
///   it refuses integers beyond Int64 that Python's `json` (MSAL) reads and writes.
struct JSONScanner {
    struct Invalid: Error {}
    let p: UnsafePointer<UInt8>
    let n: Int
    let owner: EntryOwner
    var i = 0

    init(_ p: UnsafePointer<UInt8>, _ n: Int, owner: EntryOwner) {
        self.p = p
        self.n = n
        self.owner = owner
    }

    /// How many containers enclose a value at each place of the document, the document's own object being the
    /// first: `skipValue(depth:)` refuses a container that would nest deeper than `JSONDepth.limit`.
    enum Depth {
        static let member = 1  // a top-level member's value
        static let entry = 2  // an entry of a section
        static let field = 3  // a field of an entry
    }

    mutating func ws() {
        while i < n {
            let c = p[i]
            guard c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09 else { return }
            i += 1
        }
    }

    mutating func expect(_ c: UInt8) throws(Invalid) {
        guard i < n, p[i] == c else { throw Invalid() }
        i += 1
    }

    /// Just after a container's opening bracket: whether it closes at once (`close` then consumed).
    mutating func closesAtOnce(_ close: UInt8) -> Bool {
        ws()
        guard i < n, p[i] == close else { return false }
        i += 1
        return true
    }

    /// After a container's member: true when a comma follows (consumed: another member comes), false when the
    /// container's `close` does (consumed); anything else is not JSON.
    mutating func anotherMember(_ close: UInt8) throws(Invalid) -> Bool {
        ws()
        guard i < n else { throw Invalid() }
        if p[i] == 0x2c {
            i += 1
            return true
        }
        try expect(close)
        return false
    }

    /// A string at `i` (on its opening quote): the range of its contents and whether it has escapes.
    mutating func string() throws(Invalid) -> (Range<Int>, escaped: Bool) {
        try expect(UInt8(ascii: "\""))
        let start = i
        var escaped = false
        while true {
            guard i < n else { throw Invalid() }
            // Fast path: the next quote; a backslash before it means escapes to check one by one.
            guard let q = memchr(p + i, 0x22, n - i) else { throw Invalid() }
            let end = p.distance(to: q.assumingMemoryBound(to: UInt8.self))
            if memchr(p + i, 0x5c, end - i) == nil {
                guard !Self.hasControlByte(p + i, end - i) else { throw Invalid() }
                i = end + 1
                return (start..<end, escaped)
            }
            escaped = true
            while i < n {
                let c = p[i]
                if c == 0x22 {
                    i += 1
                    return (start..<(i - 1), escaped)
                }
                if c < 0x20 { throw Invalid() }
                if c == 0x5c {
                    guard i + 1 < n else { throw Invalid() }
                    switch p[i + 1] {
                    case 0x22, 0x5c, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74: i += 2
                    case 0x75:
                        guard i + 6 <= n else { throw Invalid() }
                        for k in (i + 2)..<(i + 6) where Self.hex(p[k]) == nil { throw Invalid() }
                        i += 6
                    default: throw Invalid()
                    }
                } else {
                    i += 1
                }
            }
            throw Invalid()
        }
    }

    /// Whether any of `count` bytes at `q` is below 0x20 (eight at a time: a byte below 0x20 borrows in the
    /// subtraction and had its top bit clear).
    static func hasControlByte(_ q: UnsafePointer<UInt8>, _ count: Int) -> Bool {
        let raw = UnsafeRawPointer(q)
        var k = 0
        while k + 8 <= count {
            let x = raw.loadUnaligned(fromByteOffset: k, as: UInt64.self)
            if (x &- 0x2020_2020_2020_2020) & ~x & 0x8080_8080_8080_8080 != 0 { return true }
            k += 8
        }
        while k < count {
            if q[k] < 0x20 { return true }
            k += 1
        }
        return false
    }

    static func hex(_ c: UInt8) -> UInt32? {
        switch c {
        case 0x30...0x39: return UInt32(c - 0x30)
        case 0x61...0x66: return UInt32(c - 0x61 + 10)
        case 0x41...0x46: return UInt32(c - 0x41 + 10)
        default: return nil
        }
    }

    /// The decoded bytes of a string's contents (escapes resolved; lone surrogates become U+FFFD).
    func unescaped(_ r: Range<Int>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(r.count)
        var k = r.lowerBound
        func code(_ at: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 << 4 | (Self.hex(p[at + $1]) ?? 0) }
        }
        while k < r.upperBound {
            let c = p[k]
            guard c == 0x5c, k + 1 < r.upperBound else {
                out.append(c)
                k += 1
                continue
            }
            let e = p[k + 1]
            k += 2
            switch e {
            case 0x62: out.append(0x08)
            case 0x66: out.append(0x0c)
            case 0x6e: out.append(0x0a)
            case 0x72: out.append(0x0d)
            case 0x74: out.append(0x09)
            case 0x75:
                guard k + 4 <= r.upperBound else { return out }
                var u = code(k)
                k += 4
                if u >= 0xd800 && u < 0xdc00, k + 6 <= r.upperBound, p[k] == 0x5c, p[k + 1] == 0x75 {
                    let low = code(k + 2)
                    if low >= 0xdc00 && low < 0xe000 {
                        u = 0x10000 + ((u - 0xd800) << 10) + (low - 0xdc00)
                        k += 6
                    }
                }
                let scalar = Unicode.Scalar(u) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default: out.append(e)
            }
        }
        return out
    }

    func text(_ r: Range<Int>, escaped: Bool) -> String {
        escaped
            ? String(decoding: unescaped(r), as: UTF8.self)
            : String(decoding: UnsafeRawBufferPointer(start: p + r.lowerBound, count: r.count), as: UTF8.self)
    }

    /// Whether the string contents at `r` (without escapes) equal `s`.
    func equals(_ r: Range<Int>, _ s: StaticString) -> Bool {
        r.count == s.utf8CodeUnitCount && memcmp(p + r.lowerBound, s.utf8Start, r.count) == 0
    }

    mutating func number() throws(Invalid) {
        let start = i
        if i < n, p[i] == 0x2d { i += 1 }
        guard i < n else { throw Invalid() }
        if p[i] == 0x30 {
            i += 1
        } else {
            guard p[i] >= 0x31 && p[i] <= 0x39 else { throw Invalid() }
            while i < n, p[i] >= 0x30 && p[i] <= 0x39 { i += 1 }
        }
        if i < n, p[i] == 0x2e {
            i += 1
            let d = i
            while i < n, p[i] >= 0x30 && p[i] <= 0x39 { i += 1 }
            guard i > d else { throw Invalid() }
        }
        if i < n, p[i] == 0x65 || p[i] == 0x45 {
            i += 1
            if i < n, p[i] == 0x2b || p[i] == 0x2d { i += 1 }
            let d = i
            while i < n, p[i] >= 0x30 && p[i] <= 0x39 { i += 1 }
            guard i > d else { throw Invalid() }
        }
        guard i > start else { throw Invalid() }
    }

    mutating func literal(_ s: StaticString) throws(Invalid) {
        guard i + s.utf8CodeUnitCount <= n, memcmp(p + i, s.utf8Start, s.utf8CodeUnitCount) == 0 else {
            throw Invalid()
        }
        i += s.utf8CodeUnitCount
    }

    /// Skips any value enclosed by `depth` containers, checking its grammar. A container in it may nest up to
    /// `JSONDepth.limit` levels in all (the text is then exactly what `JSONDepth` calls within the limit).
    mutating func skipValue(depth: Int) throws(Invalid) {
        guard i < n else { throw Invalid() }
        switch p[i] {
        case 0x22: _ = try string()
        case 0x7b:
            guard depth < JSONDepth.limit else { throw Invalid() }
            i += 1
            if closesAtOnce(0x7d) { return }
            repeat {
                ws()
                _ = try string()
                ws()
                try expect(0x3a)
                ws()
                try skipValue(depth: depth + 1)
            } while try anotherMember(0x7d)
        case 0x5b:
            guard depth < JSONDepth.limit else { throw Invalid() }
            i += 1
            if closesAtOnce(0x5d) { return }
            repeat {
                ws()
                try skipValue(depth: depth + 1)
            } while try anotherMember(0x5d)
        case 0x74: try literal("true")
        case 0x66: try literal("false")
        case 0x6e: try literal("null")
        default: try number()
        }
    }

    /// A value that may be a string or a number: its text (numbers as written), else nil (after skipping it).
    mutating func scalarText() throws(Invalid) -> (Range<Int>, escaped: Bool)? {
        guard i < n else { throw Invalid() }
        if p[i] == 0x22 { return try string() }
        let start = i
        if p[i] == 0x2d || (p[i] >= 0x30 && p[i] <= 0x39) {
            try number()
            return (start..<i, false)
        }
        try skipValue(depth: Depth.field)
        return nil
    }
}
