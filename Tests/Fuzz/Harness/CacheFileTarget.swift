// Target "cachefile": the file token cache's scanner, `MSALCacheFormat.Document(parsing:owner:)` (JSONScanner), which
// reads a file other processes, MSAL for Python or another user's mistake may have written. Input: any bytes, the
// file. Not through the C ABI: a client reaches the file only after a sign-in, and the other targets use memory
// caches.
//  - it never traps;
//  - a document it accepts, written back (`serialized()`), is read again to the same sections, entries (keys, value
//    bytes, fields) and other members, and written back again to the same bytes (a fixed point); jansson reads the
//    input and what was written back to the same value (readers keep the last of names given twice, as Python's json
//    module does); every entry's key, secret and object read, and the accounts of the seeds' client found;
//  - against NativeAuthJSON (jansson) and JSONDepth: a text jansson reads as an object that nests within the limit
//    is accepted (NativeAuthJSON refuses any raw NUL, which jansson alone skips after a scalar); a text
//    the scanner accepts jansson reads, as an object, except for what the scanner accepts on purpose, because
//    Python's json module (MSAL for Python) reads and writes it:
//      * numbers beyond Int64 or Double (jansson: "number out of range"; Python: ints of any size, 1e400 = inf),
//      * `\u` escapes of lone surrogates (jansson: invalid syntax; Python: a str holding the surrogate),
//      * `\u0000` in a key (jansson refuses NUL in keys even with JSON_ALLOW_NUL; Python reads it),
//    so jansson is given the text with those made tame (digit runs of 3 or more cut to their first digit and a 0,
//    which keeps a leading zero a leading zero; surrogate and NUL escapes turned into \u0041); and
//      * bytes that are not UTF-8 inside strings: the scanner does not check UTF-8 (it reads such text as U+FFFD
//        and writes unchanged entries back as they were), where jansson and Python refuse the file: deliberate
//        (one bad byte written by another program does not set the whole cache aside; Tests/Fuzz/README.md).
import NativeAuthJSON

@testable import NativeAuthCache

/// The client the checks read accounts for: the emulator's, whose sign-ins the recorded seeds hold.
private let fuzzCacheFormat = MSALCacheFormat(environment: "127.0.0.1", clientID: cacheFuzzClientID)
let cacheFuzzClientID = "00001111-aaaa-2222-bbbb-3333cccc4444"

func fuzzCacheFile(_ data: UnsafeRawBufferPointer) {
    let owner = fuzzCacheFormat.owner
    let janssonValue = try? JSONValue.parse(Array(data))
    guard let document = MSALCacheFormat.Document(parsing: data, owner: owner) else {
        if case .object? = janssonValue, JSONDepth.shape(data) == .fits {
            finding("jansson reads an object within the depth limit that the cache scanner refused")
        }
        return
    }
    readEverything(document)
    let once = document.serialized()
    guard let again = once.withUnsafeBytes({ MSALCacheFormat.Document(parsing: $0, owner: owner) }) else {
        finding("a document written back is refused", String(decoding: once, as: UTF8.self))
    }
    sameDocuments(document, again)
    guard fuzzCacheFormat.accounts(in: document).keys.sorted() == fuzzCacheFormat.accounts(in: again).keys.sorted()
    else { finding("written back: other accounts found") }
    guard again.serialized() == once else { finding("writing back is not a fixed point") }
    guard isUTF8(data) else { return }  // the finding reported above: the scanner does not check UTF-8
    guard case .object? = try? JSONValue.parse(tamed(data)) else {
        finding("the cache scanner accepted what jansson does not read as an object")
    }
    if let janssonValue, (try? JSONValue.parse(once)) != janssonValue {
        finding("jansson reads the document written back as another value", String(decoding: once, as: UTF8.self))
    }
}

/// Every field a reader takes from a document: keys, secrets, strings, entry objects, and the accounts.
private func readEverything(_ document: MSALCacheFormat.Document) {
    for (_, entries) in document.sections {
        for e in entries {
            _ = document.string(e.key)
            if let s = e.fields.secret { _ = document.secret(s) }
            _ = document.object(e)
        }
    }
    for (_, value) in document.other { _ = document.string(value) }
    _ = fuzzCacheFormat.accounts(in: document)
}

/// `a` and `b` (read from what `a` wrote) hold the same sections, entries and other members.
private func sameDocuments(_ a: MSALCacheFormat.Document, _ b: MSALCacheFormat.Document) {
    guard a.sections.keys.sorted() == b.sections.keys.sorted() else { finding("written back: other sections") }
    for (name, entries) in a.sections {
        let others = b.sections[name] ?? []
        guard entries.count == others.count else { finding("written back: another number of entries", name) }
        for (x, y) in zip(entries, others) {
            guard bytes(a, x.key) == bytes(b, y.key) else { finding("written back: an entry's key changed", name) }
            guard bytes(a, x.value) == bytes(b, y.value) else {
                finding("written back: an entry's value bytes changed", name)
            }
            guard fieldsText(a, x.fields) == fieldsText(b, y.fields) else {
                finding("written back: an entry's fields read differently", name)
            }
        }
    }
    guard a.other.map(\.key) == b.other.map(\.key),
        zip(a.other, b.other).allSatisfy({ bytes(a, $0.value) == bytes(b, $1.value) })
    else { finding("written back: the other members changed") }
}

private func bytes(_ d: MSALCacheFormat.Document, _ t: FieldText) -> [UInt8] {
    switch t {
    case .range(let r): return Array(d.source.slice(r))
    case .bytes(let b): return b
    }
}

/// The fields as comparable text (the secret as its bytes, never printed).
private func fieldsText(_ d: MSALCacheFormat.Document, _ f: EntryFields) -> [String] {
    let strings = [f.home, f.realm, f.target, f.username, f.signInScopes, f.keyID].map { $0 ?? "\u{0}nil" }
    let times = [f.expiresOn, f.refreshOn, f.cachedAt, f.extendedExpiresOn, f.lastModified].map {
        $0.map { $0.isNaN ? "nan" : "\($0)" } ?? "nil"
    }
    let flags = [f.environmentMatches, f.clientMatches, f.bound, f.hasAuthorityType, f.hasLocalAccountID]
    let secret = f.secret.map { String(decoding: bytes(d, $0), as: UTF8.self) } ?? "\u{0}nil"
    return strings + times + flags.map { $0 ? "1" : "0" } + [secret]
}

/// Whether `data` is UTF-8 (Swift's own check: decoding it repairs nothing).
private func isUTF8(_ data: UnsafeRawBufferPointer) -> Bool {
    var ok = true
    var decoder = UTF8()
    var it = data.makeIterator()
    loop: while true {
        switch decoder.decode(&it) {
        case .scalarValue: continue
        case .emptyInput: break loop
        case .error:
            ok = false
            break loop
        }
    }
    return ok
}

/// Whether the four hex digits of a `\u` escape are a surrogate or NUL (which jansson refuses in keys).
private func tameEscape(_ hex: Slice<UnsafeRawBufferPointer>) -> Bool {
    let h = hex.map { $0 | 0x20 }
    let surrogate = h[0] == 0x64 && ((0x38...0x39).contains(h[1]) || (0x61...0x66).contains(h[1]))
    return surrogate || h.allSatisfy { $0 == 0x30 }
}

/// The text with what the scanner accepts on purpose made acceptable to jansson (see the top of this file): outside
/// strings, digit runs of three or more become their first digit and a 0; inside, surrogate and NUL `\u` escapes
/// become \u0041.
func tamed(_ data: UnsafeRawBufferPointer) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(data.count)
    let isDigit = { (c: UInt8) in c >= 0x30 && c <= 0x39 }
    var k = 0
    var inString = false
    while k < data.count {
        let c = data[k]
        if inString {
            if c == 0x5c, k + 5 < data.count, data[k + 1] == 0x75, tameEscape(data[(k + 2)..<(k + 6)]) {
                out += Array(#"\u0041"#.utf8)
                k += 6
                continue
            }
            if c == 0x5c, k + 1 < data.count {
                out += [c, data[k + 1]]
                k += 2
                continue
            }
            if c == 0x22 { inString = false }
            out.append(c)
            k += 1
            continue
        }
        if c == 0x22 { inString = true }
        if isDigit(c) {
            var end = k
            while end < data.count, isDigit(data[end]) { end += 1 }
            out += end - k >= 3 ? [c, 0x30] : Array(data[k..<end])
            k = end
            continue
        }
        out.append(c)
        k += 1
    }
    return out
}
