internal import NativeAuthCore

/// Writing the document back: unchanged entries are copied from the file as they were.
extension MSALCacheFormat.Document {
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
        var out = DocumentPieces()
        var name: [UInt8] = []
        out.bytes([UInt8(ascii: "{")])
        var first = true
        for (key, value) in other {
            if !first { out.bytes([UInt8(ascii: ",")]) }
            first = false
            name.removeAll(keepingCapacity: true)
            JSONScanner.appendString(key, to: &name)
            out.bytes(name + [UInt8(ascii: ":")])
            out.text(value)
        }
        for section in sections.keys.sorted() {
            if !first { out.bytes([UInt8(ascii: ",")]) }
            first = false
            name.removeAll(keepingCapacity: true)
            JSONScanner.appendString(section, to: &name)
            out.bytes(name + Array(":{".utf8))
            appendEntries(sections[section] ?? [], to: &out)
            out.bytes([UInt8(ascii: "}")])
        }
        out.bytes([UInt8(ascii: "}")])
        return out.finished()
    }

    /// A section's entries: those unchanged since the file was read are copied as they were, with the separator
    /// before them when it was only a comma and whitespace.
    private func appendEntries(_ entries: [CacheEntry], to out: inout DocumentPieces) {
        var name: [UInt8] = []
        var previousEnd: Int? = nil  // where the last entry copied from the file ended
        for (i, e) in entries.enumerated() {
            if let raw = e.rawKey, case .range(let v) = e.value {
                if i > 0, let end = previousEnd, end <= raw.lowerBound, separatedByComma(end..<raw.lowerBound) {
                    out.range(end..<raw.lowerBound)
                } else if i > 0 {
                    out.bytes([UInt8(ascii: ",")])
                }
                out.range(raw.lowerBound..<v.upperBound)
                previousEnd = v.upperBound
                continue
            }
            if i > 0 { out.bytes([UInt8(ascii: ",")]) }
            previousEnd = nil
            name.removeAll(keepingCapacity: true)
            if let raw = e.rawKey {
                out.range(raw)
                out.bytes([UInt8(ascii: ":")])
            } else {
                JSONScanner.appendString(string(e.key), to: &name)
                out.bytes(name + [UInt8(ascii: ":")])
            }
            out.text(e.value)
        }
    }

    /// Whether the file has only whitespace and one comma between two entries.
    private func separatedByComma(_ gap: Range<Int>) -> Bool {
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
}

/// The pieces of a document being written, in order: ranges of the file (neighbouring ones merged into one) and new
/// bytes (consecutive ones gathered into one).
struct DocumentPieces {
    private var parts: [FieldText] = []
    private var pending: [UInt8] = []
    private var run: Range<Int>? = nil

    private mutating func flushRun() {
        if let r = run { parts.append(.range(r)) }
        run = nil
    }

    mutating func bytes(_ b: [UInt8]) {
        flushRun()
        pending.append(contentsOf: b)
    }

    mutating func range(_ r: Range<Int>) {
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

    mutating func text(_ t: FieldText) {
        switch t {
        case .range(let r): range(r)
        case .bytes(let b): bytes(b)
        }
    }

    mutating func finished() -> [FieldText] {
        flushRun()
        if !pending.isEmpty {
            parts.append(.bytes(pending))
            pending = []
        }
        return parts
    }
}
