internal import Glibc
internal import NativeAuthCore
internal import NativeAuthJSON

/// The file's bytes, wiped when the last document that refers to them goes (they hold tokens).
final class SourceBytes: @unchecked Sendable {  // immutable after init
    let pointer: UnsafeMutablePointer<UInt8>
    let count: Int

    init(copying bytes: UnsafeRawBufferPointer) {
        count = bytes.count
        pointer = .allocate(capacity: max(1, bytes.count))
        if let src = bytes.baseAddress, bytes.count > 0 { memcpy(pointer, src, bytes.count) }
    }

    /// Takes `pointer` (allocated with `allocate(capacity:)`), of which `count` bytes are used.
    init(taking pointer: UnsafeMutablePointer<UInt8>, count: Int) {
        self.pointer = pointer
        self.count = count
    }

    var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: pointer, count: count) }

    func slice(_ r: Range<Int>) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: pointer + r.lowerBound, count: r.count)
    }

    deinit {
        wipeMemory(pointer, count)
        pointer.deallocate()
    }

    static let empty = SourceBytes(copying: UnsafeRawBufferPointer(start: nil, count: 0))
}

/// A string field of an entry: where it is in the file, or (written by this library, or with escapes) its bytes.
enum FieldText: Sendable {
    case range(Range<Int>)
    case bytes([UInt8])
}

/// The fields of an entry this library reads; everything else stays in the entry's bytes.
struct EntryFields: Sendable {
    var home: String?
    /// Whether `environment` and `client_id` are the reading client's (compared as bytes, else case-insensitively).
    var environmentMatches = false
    var clientMatches = false
    var realm: String?
    var target: String?
    var username: String?
    var signInScopes: String?
    var secret: FieldText?
    var expiresOn: Double?
    var refreshOn: Double?
    var cachedAt: Double?
    var extendedExpiresOn: Double?
    var lastModified: Double?
    /// Fields that make an access token one this library does not serve (SSH certificates, PoP, extended keys).
    var bound = false
    /// `key_id`, when it is a string: the thumbprint of the DPoP key of this library's DPoP entries.
    var keyID: String?
    var hasAuthorityType = false
    var hasLocalAccountID = false

    static let names: [String] = [
        "home_account_id", "environment", "client_id", "realm", "target", "username", "nativeauth_sign_in_scopes",
        "secret", "expires_on", "refresh_on", "cached_at", "extended_expires_on", "last_modification_time",
        "key_id", "ext_cache_key", "authority_type", "local_account_id",
    ]

    /// The fields of an entry given as a JSON object (one this library writes), for the client `owner`.
    init(_ o: [String: JSONValue], owner: EntryOwner) {
        home = o["home_account_id"]?.stringValue
        environmentMatches = o["environment"]?.stringValue.map { owner.isEnvironment(Array($0.utf8)) } ?? false
        clientMatches = o["client_id"]?.stringValue.map { owner.isClient(Array($0.utf8)) } ?? false
        realm = o["realm"]?.stringValue
        target = o["target"]?.stringValue
        username = o["username"]?.stringValue
        signInScopes = o["nativeauth_sign_in_scopes"]?.stringValue
        secret = o["secret"]?.stringValue.map { .bytes(Array($0.utf8)) }
        expiresOn = MSALCacheFormat.seconds(o["expires_on"])
        refreshOn = MSALCacheFormat.seconds(o["refresh_on"])
        cachedAt = MSALCacheFormat.seconds(o["cached_at"])
        extendedExpiresOn = MSALCacheFormat.seconds(o["extended_expires_on"])
        lastModified = MSALCacheFormat.seconds(o["last_modification_time"])
        bound = o["key_id"] != nil || o["ext_cache_key"] != nil
        keyID = o["key_id"]?.stringValue
        hasAuthorityType = o["authority_type"]?.stringValue != nil
        hasLocalAccountID = o["local_account_id"]?.stringValue != nil
    }

    init() {}
}

/// The client whose entries a reader looks for: its `environment` and `client_id`.
struct EntryOwner: Sendable {
    let environment: [UInt8]
    let clientID: [UInt8]

    init(environment: String, clientID: String) {
        self.environment = Array(environment.lowercased().utf8)
        self.clientID = Array(clientID.utf8)
    }

    static func same(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty || b.withUnsafeBytes({ x in a.elementsEqual(x) }) { return true }
        return String(decoding: a, as: UTF8.self).lowercased() == String(decoding: b, as: UTF8.self).lowercased()
    }

    func isEnvironment(_ v: [UInt8]) -> Bool { v.withUnsafeBytes { Self.same($0, environment) } }
    func isClient(_ v: [UInt8]) -> Bool { v.withUnsafeBytes { Self.same($0, clientID) } }
}

/// One entry of a section: its key, its value (the file's bytes, or new JSON text) and the fields read from it.
struct CacheEntry: Sendable {
    /// The key (its decoded text: a range of the file, or bytes).
    var key: FieldText
    /// The key as it was written in the file, quotes included (nil: write `key` escaped).
    var rawKey: Range<Int>?
    var value: FieldText
    var fields: EntryFields
}

/// MSAL's unified token cache document, as MSAL for Python's `SerializableTokenCache` writes it: top-level sections
/// (`AccessToken`, `RefreshToken`, `IdToken`, `Account`, `AppMetadata`, and whatever other SDKs add), each an object of
/// entries by cache key.
///
/// It is read by a single validating pass over the bytes that notes where each entry is and decodes only the fields
/// this library uses, and written by copying every entry it did not change byte for byte: entries and fields this
/// library does not understand are kept exactly, and a cache of a thousand accounts loads and saves in milliseconds.
struct UnifiedCache: Sendable {
    var source: SourceBytes = .empty
    /// Object-valued top-level members, by name.
    var sections: [String: [CacheEntry]] = [:]
    /// Other top-level members (kept as they are): name → value bytes.
    var other: [(key: String, value: FieldText)] = []

    init() {}

    /// Reads a document, noting the entries of `owner`; nil when it is not a JSON object (or not valid JSON).
    init?(parsing bytes: UnsafeRawBufferPointer, owner: EntryOwner) {
        self.init(parsing: SourceBytes(copying: bytes), owner: owner)
    }

    /// Reads a document held in `source` (which it keeps); nil when it is not a JSON object (or not valid JSON).
    init?(parsing source: SourceBytes, owner: EntryOwner) {
        var scanner = JSONScanner(UnsafePointer(source.pointer), source.count, owner: owner)
        guard let (sections, other) = try? scanner.document() else { return nil }
        self.source = source
        self.sections = sections
        self.other = other
    }

    /// A string field as text.
    func string(_ t: FieldText) -> String {
        switch t {
        case .range(let r): return String(decoding: source.slice(r), as: UTF8.self)
        case .bytes(let b): return String(decoding: b, as: UTF8.self)
        }
    }

    /// A string field as a `Secret` (never through a `String`).
    func secret(_ t: FieldText) -> Secret {
        switch t {
        case .range(let r): return Secret(bytes: source.slice(r))
        case .bytes(let b): return b.withUnsafeBytes { Secret(bytes: $0) }
        }
    }

    /// An entry as a JSON object (to rewrite it with every field it has).
    func object(_ e: CacheEntry) -> [String: JSONValue] {
        switch e.value {
        case .range(let r): return (try? JSONValue.parse(bytes: source.slice(r)))?.objectValue ?? [:]
        case .bytes(let b): return (try? JSONValue.parse(b))?.objectValue ?? [:]
        }
    }

    /// The document as compact JSON: unchanged entries copied from the file as they were.
    func serialized() -> [UInt8] {
        let parts = pieces()
        var size = 0
        for p in parts {
            switch p {
            case .range(let r): size += r.count
            case .bytes(let b): size += b.count
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        for p in parts {
            switch p {
            case .range(let r): out.append(contentsOf: source.slice(r))
            case .bytes(let b): out.append(contentsOf: b)
            }
        }
        return out
    }

    /// The document as a list of pieces (ranges of the file, and new bytes) to write one after the other. Entries
    /// that were next to each other in the file and are unchanged form one range, separators included.
    func pieces() -> [FieldText] {
        var parts: [FieldText] = []
        var pending: [UInt8] = []
        var run: Range<Int>? = nil
        func flushRun() {
            if let r = run { parts.append(.range(r)) }
            run = nil
        }
        func bytes(_ b: [UInt8]) {
            flushRun()
            pending.append(contentsOf: b)
        }
        func range(_ r: Range<Int>) {
            if !pending.isEmpty {
                parts.append(.bytes(pending))
                pending = []
            }
            if let current = run, current.upperBound == r.lowerBound {
                run = current.lowerBound..<r.upperBound
            } else {
                flushRun()
                run = r
            }
        }
        /// Whether the file has only whitespace and one comma between two entries.
        func separatedByComma(_ gap: Range<Int>) -> Bool {
            var commas = 0
            for k in gap {
                let c = source.pointer[k]
                if c == 0x2c {
                    commas += 1
                } else if c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09 {
                    return false
                }
            }
            return commas == 1
        }
        var name: [UInt8] = []
        bytes([UInt8(ascii: "{")])
        var first = true
        for (key, value) in other {
            if !first { bytes([UInt8(ascii: ",")]) }
            first = false
            name.removeAll(keepingCapacity: true)
            JSONScanner.appendString(key, to: &name)
            bytes(name + [UInt8(ascii: ":")])
            switch value {
            case .range(let r): range(r)
            case .bytes(let b): bytes(b)
            }
        }
        for section in sections.keys.sorted() {
            if !first { bytes([UInt8(ascii: ",")]) }
            first = false
            name.removeAll(keepingCapacity: true)
            JSONScanner.appendString(section, to: &name)
            bytes(name + Array(":{".utf8))
            var previousEnd: Int? = nil  // where the last entry copied from the file ended
            for (i, e) in (sections[section] ?? []).enumerated() {
                if let raw = e.rawKey, case .range(let v) = e.value {
                    if i > 0, let end = previousEnd, end <= raw.lowerBound, separatedByComma(end..<raw.lowerBound) {
                        range(end..<raw.lowerBound)
                    } else if i > 0 {
                        bytes([UInt8(ascii: ",")])
                    }
                    range(raw.lowerBound..<v.upperBound)
                    previousEnd = v.upperBound
                    continue
                }
                if i > 0 { bytes([UInt8(ascii: ",")]) }
                previousEnd = nil
                name.removeAll(keepingCapacity: true)
                if let raw = e.rawKey {
                    range(raw)
                    bytes([UInt8(ascii: ":")])
                } else {
                    JSONScanner.appendString(string(e.key), to: &name)
                    bytes(name + [UInt8(ascii: ":")])
                }
                switch e.value {
                case .range(let r): range(r)
                case .bytes(let b): bytes(b)
                }
            }
            bytes([UInt8(ascii: "}")])
        }
        bytes([UInt8(ascii: "}")])
        flushRun()
        if !pending.isEmpty { parts.append(.bytes(pending)) }
        return parts
    }
}

/// A validating JSON scanner for the cache file (RFC 8259 grammar; nesting within `JSONDepth.limit`, the library's
/// one limit, counted as `JSONDepth` counts it). It decodes only the keys and the entry fields the cache needs and
/// notes where everything else is.
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
            ws()
            if i < n, p[i] == 0x7d {
                i += 1
                return
            }
            while true {
                ws()
                _ = try string()
                ws()
                try expect(0x3a)
                ws()
                try skipValue(depth: depth + 1)
                ws()
                guard i < n else { throw Invalid() }
                if p[i] == 0x2c {
                    i += 1
                    continue
                }
                try expect(0x7d)
                return
            }
        case 0x5b:
            guard depth < JSONDepth.limit else { throw Invalid() }
            i += 1
            ws()
            if i < n, p[i] == 0x5d {
                i += 1
                return
            }
            while true {
                ws()
                try skipValue(depth: depth + 1)
                ws()
                guard i < n else { throw Invalid() }
                if p[i] == 0x2c {
                    i += 1
                    continue
                }
                try expect(0x5d)
                return
            }
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

    /// An entry object: notes the fields the cache reads.
    mutating func entry() throws(Invalid) -> EntryFields {
        var f = EntryFields()
        guard i < n, p[i] == 0x7b else {
            try skipValue(depth: Depth.entry)
            return f
        }
        i += 1
        ws()
        if i < n, p[i] == 0x7d {
            i += 1
            return f
        }
        while true {
            ws()
            let (k, kEscaped) = try string()
            ws()
            try expect(0x3a)
            ws()
            if kEscaped {
                try skipValue(depth: Depth.field)
            } else {
                try field(k, &f)
            }
            ws()
            guard i < n else { throw Invalid() }
            if p[i] == 0x2c {
                i += 1
                continue
            }
            try expect(0x7d)
            return f
        }
    }

    private mutating func field(_ k: Range<Int>, _ f: inout EntryFields) throws(Invalid) {
        func seconds(_ v: (Range<Int>, escaped: Bool)?) -> Double? {
            guard let (r, escaped) = v, !escaped else { return nil }
            // The usual case, a string of up to 18 digits, without making a String.
            if r.count > 0 && r.count <= 18 {
                var value: Int64 = 0
                var k = r.lowerBound
                while k < r.upperBound, p[k] >= 0x30 && p[k] <= 0x39 {
                    value = value * 10 + Int64(p[k] - 0x30)
                    k += 1
                }
                if k == r.upperBound { return Double(value) }
            }
            return MSALCacheFormat.seconds(.string(text(r, escaped: false)))
        }
        switch k.count {
        case 6 where equals(k, "secret"):
            let start = i
            if let (r, escaped) = try scalarText(), i - start >= 2, p[start] == 0x22 {
                f.secret = escaped ? .bytes(unescaped(r)) : .range(r)
            }
        case 15 where equals(k, "home_account_id"): f.home = try scalarString()
        case 11 where equals(k, "environment"): f.environmentMatches = try matches(owner.environment)
        case 9 where equals(k, "client_id"): f.clientMatches = try matches(owner.clientID)
        case 5 where equals(k, "realm"): f.realm = try scalarString()
        case 6 where equals(k, "target"): f.target = try scalarString()
        case 8 where equals(k, "username"): f.username = try scalarString()
        case 25 where equals(k, "nativeauth_sign_in_scopes"): f.signInScopes = try scalarString()
        case 10 where equals(k, "expires_on"): f.expiresOn = seconds(try scalarText())
        case 10 where equals(k, "refresh_on"): f.refreshOn = seconds(try scalarText())
        case 9 where equals(k, "cached_at"): f.cachedAt = seconds(try scalarText())
        case 19 where equals(k, "extended_expires_on"): f.extendedExpiresOn = seconds(try scalarText())
        case 22 where equals(k, "last_modification_time"): f.lastModified = seconds(try scalarText())
        case 6 where equals(k, "key_id"):
            f.bound = true
            f.keyID = try scalarString()
        case 13 where equals(k, "ext_cache_key"):
            f.bound = true
            try skipValue(depth: Depth.field)
        case 14 where equals(k, "authority_type"): f.hasAuthorityType = try scalarString() != nil
        case 16 where equals(k, "local_account_id"): f.hasLocalAccountID = try scalarString() != nil
        default: try skipValue(depth: Depth.field)
        }
    }

    /// Whether the value is the string `expected` (byte for byte, else case-insensitively).
    private mutating func matches(_ expected: [UInt8]) throws(Invalid) -> Bool {
        guard i < n else { throw Invalid() }
        guard p[i] == 0x22 else {
            try skipValue(depth: Depth.field)
            return false
        }
        let (r, escaped) = try string()
        if escaped { return unescaped(r).withUnsafeBytes { EntryOwner.same($0, expected) } }
        return EntryOwner.same(UnsafeRawBufferPointer(start: p + r.lowerBound, count: r.count), expected)
    }

    /// A string value's text; nil (after skipping it) for any other value.
    private mutating func scalarString() throws(Invalid) -> String? {
        guard i < n else { throw Invalid() }
        guard p[i] == 0x22 else {
            try skipValue(depth: Depth.field)
            return nil
        }
        let (r, escaped) = try string()
        return text(r, escaped: escaped)
    }

    /// The whole document: an object whose object members are sections of entries.
    mutating func document() throws(Invalid) -> ([String: [CacheEntry]], [(key: String, value: FieldText)]) {
        var sections: [String: [CacheEntry]] = [:]
        var other: [(key: String, value: FieldText)] = []
        ws()
        try expect(0x7b)
        ws()
        if i < n, p[i] == 0x7d {
            i += 1
        } else {
            while true {
                ws()
                let (k, kEscaped) = try string()
                let name = text(k, escaped: kEscaped)
                ws()
                try expect(0x3a)
                ws()
                guard i < n else { throw Invalid() }
                if p[i] == 0x7b {
                    sections[name] = try section()
                } else {
                    let start = i
                    try skipValue(depth: Depth.member)
                    other.removeAll { $0.key == name }
                    other.append((name, .range(start..<i)))
                }
                ws()
                guard i < n else { throw Invalid() }
                if p[i] == 0x2c {
                    i += 1
                    continue
                }
                try expect(0x7d)
                break
            }
        }
        ws()
        guard i == n else { throw Invalid() }
        return (sections, other)
    }

    /// A section: its entries, each with its key, value bytes and fields. (A key given twice is kept twice, and
    /// written back twice: readers keep the last, as Python's json module does.)
    private mutating func section() throws(Invalid) -> [CacheEntry] {
        var entries: [CacheEntry] = []
        try expect(0x7b)
        ws()
        if i < n, p[i] == 0x7d {
            i += 1
            return entries
        }
        while true {
            ws()
            let keyStart = i
            let (k, kEscaped) = try string()
            let rawKey = keyStart..<i
            ws()
            try expect(0x3a)
            ws()
            let start = i
            let fields = try entry()
            let key: FieldText = kEscaped ? .bytes(unescaped(k)) : .range(k)
            entries.append(CacheEntry(key: key, rawKey: rawKey, value: .range(start..<i), fields: fields))
            ws()
            guard i < n else { throw Invalid() }
            if p[i] == 0x2c {
                i += 1
                continue
            }
            try expect(0x7d)
            return entries
        }
    }

    /// Appends `s` as a JSON string.
    static func appendString(_ s: String, to out: inout [UInt8]) {
        out.append(0x22)
        for c in s.utf8 {
            switch c {
            case 0x22: out.append(contentsOf: [0x5c, 0x22])
            case 0x5c: out.append(contentsOf: [0x5c, 0x5c])
            case 0x0a: out.append(contentsOf: [0x5c, 0x6e])
            case 0x0d: out.append(contentsOf: [0x5c, 0x72])
            case 0x09: out.append(contentsOf: [0x5c, 0x74])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5c, 0x75, 0x30, 0x30, hex[Int(c >> 4)], hex[Int(c & 15)]])
            default: out.append(c)
            }
        }
        out.append(0x22)
    }
}
