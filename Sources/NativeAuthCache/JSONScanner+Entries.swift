internal import NativeAuthCore

/// The cache document's shape: the document, its sections, their entries and the fields this library reads.
extension JSONScanner {
    /// An entry object: notes the fields the cache reads.
    mutating func entry() throws(Invalid) -> EntryFields {
        var f = EntryFields()
        guard i < n, p[i] == 0x7b else {
            try skipValue(depth: Depth.entry)
            return f
        }
        i += 1
        if closesAtOnce(0x7d) { return f }
        repeat {
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
        } while try anotherMember(0x7d)
        return f
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

    /// The whole document: an object whose object members are sections of entries. A name given twice is the last
    /// one's, a section or not (as Python's json module reads it); the other members keep the order of their last
    /// places. One pass, a dictionary look-up per member: a file of millions of members reads in linear time.
    mutating func document() throws(Invalid) -> ([String: [CacheEntry]], [(key: String, value: FieldText)]) {
        var sections: [String: [CacheEntry]] = [:]
        var members: [(key: String, value: FieldText)] = []  // every non-object member, in order
        var lastMember: [String: Int] = [:]  // name → its place in `members`, while a non-object is its last value
        ws()
        try expect(0x7b)
        if !closesAtOnce(0x7d) {
            repeat {
                ws()
                let (k, kEscaped) = try string()
                let name = text(k, escaped: kEscaped)
                ws()
                try expect(0x3a)
                ws()
                guard i < n else { throw Invalid() }
                if p[i] == 0x7b {
                    sections[name] = try section()
                    lastMember[name] = nil
                } else {
                    let start = i
                    try skipValue(depth: Depth.member)
                    sections[name] = nil
                    lastMember[name] = members.count
                    members.append((name, .range(start..<i)))
                }
            } while try anotherMember(0x7d)
        }
        ws()
        guard i == n else { throw Invalid() }
        var other: [(key: String, value: FieldText)] = []
        other.reserveCapacity(lastMember.count)
        for (place, m) in members.enumerated() where lastMember[m.key] == place { other.append(m) }
        return (sections, other)
    }

    /// A section: its entries, each with its key, value bytes and fields. (A key given twice is kept twice, and
    /// written back twice: readers keep the last, as Python's json module does.)
    private mutating func section() throws(Invalid) -> [CacheEntry] {
        var entries: [CacheEntry] = []
        try expect(0x7b)
        if closesAtOnce(0x7d) { return entries }
        repeat {
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
        } while try anotherMember(0x7d)
        return entries
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
