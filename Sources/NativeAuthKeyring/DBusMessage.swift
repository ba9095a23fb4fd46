/// A D-Bus message (the D-Bus Specification, "Message Protocol"): a fixed 16-byte start, an array of header fields,
/// padding to 8 bytes, and the body, whose values the SIGNATURE header field describes.
///
/// Messages are encoded little-endian. Decoding reads both byte orders (a bus forwards a message in its sender's
/// order) and treats every byte as outside input: each length is checked against what is left before it is used, no
/// arithmetic can overflow, messages over `maxSize` (1 MiB) are refused from their first 16 bytes, nesting is bounded
/// (64 containers), and any message the specification calls invalid is refused — it never traps.
struct DBusMessage: Sendable {
    /// Message types; other values are valid on the wire and ignored.
    static let methodCall: UInt8 = 1
    static let methodReturn: UInt8 = 2
    static let errorReply: UInt8 = 3
    static let signal: UInt8 = 4

    /// Header flags.
    static let noReplyExpected: UInt8 = 0x1

    /// The largest message read or written (the specification allows 128 MiB; no Secret Service answer to our calls
    /// comes near 1 MiB).
    static let maxSize = 1 << 20
    /// The specification's limit on container nesting (arrays, structures, dictionary entries, variants).
    static let maxDepth = 64

    var type: UInt8
    var flags: UInt8 = 0
    var serial: UInt32 = 0
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var replySerial: UInt32?
    var destination: String?
    var sender: String?
    /// The body's signature ("" for no body).
    var signature = ""
    var unixFDs: UInt32?
    var body: [DBusValue] = []

    init(type: UInt8) { self.type = type }

    /// A method call to `member` of `interface` on `path` at the bus name `destination`.
    static func call(
        _ destination: String?,
        _ path: String,
        _ interface: String?,
        _ member: String,
        _ body: [DBusValue] = []
    ) -> DBusMessage {
        var m = DBusMessage(type: methodCall)
        m.destination = destination
        m.path = path
        m.interface = interface
        m.member = member
        m.body = body
        m.signature = body.map(\.type.signature).joined()
        return m
    }

    // MARK: Encoding

    /// The message, little-endian, with `serial`, in memory that is wiped when released.
    func encoded(serial: UInt32) -> WipedBuffer {
        let out = WipedBuffer(capacity: 256)
        out.append([UInt8(ascii: "l"), type, flags, 1])
        out.append([0, 0, 0, 0])  // body length, set below
        out.append(withUnsafeBytes(of: serial.littleEndian) { Array($0) })
        var fields: [(UInt8, DBusValue)] = []
        if let path { fields.append((1, .objectPath(path))) }
        if let interface { fields.append((2, .string(interface))) }
        if let member { fields.append((3, .string(member))) }
        if let errorName { fields.append((4, .string(errorName))) }
        if let replySerial { fields.append((5, .uint32(replySerial))) }
        if let destination { fields.append((6, .string(destination))) }
        if let sender { fields.append((7, .string(sender))) }
        if !body.isEmpty { fields.append((8, .signature(body.map(\.type.signature).joined()))) }
        if let unixFDs { fields.append((9, .uint32(unixFDs))) }
        let header = DBusValue.array(
            .structure([.byte, .variant]),
            fields.map { .structure([.byte($0.0), .variant($0.1)]) }
        )
        DBusWriter.write(header, to: out)
        out.pad(to: 8)
        let bodyStart = out.count
        for value in body { DBusWriter.write(value, to: out) }
        out.setUInt32(UInt32(truncatingIfNeeded: out.count - bodyStart), at: 4)
        return out
    }

    // MARK: Decoding

    /// How much of a byte stream the next message takes.
    enum Framing: Equatable {
        /// Fewer than 16 bytes, or fewer than the message's length: read more.
        case incomplete
        /// The message is the first `length` bytes.
        case complete(length: Int)
        /// Not a message this reader accepts (the connection cannot continue).
        case invalid(String)
    }

    /// The length of the message that starts `bytes`, from its first 16 bytes.
    static func frame(_ bytes: UnsafeRawBufferPointer) -> Framing {
        guard bytes.count >= 16 else { return .incomplete }
        let bigEndian: Bool
        switch bytes[0] {
        case UInt8(ascii: "l"): bigEndian = false
        case UInt8(ascii: "B"): bigEndian = true
        default: return .invalid("unknown byte order")
        }
        guard bytes[3] == 1 else { return .invalid("unknown protocol version") }
        let bodyLength = DBusReader.uint32(bytes, at: 4, bigEndian: bigEndian)
        let fieldsLength = DBusReader.uint32(bytes, at: 12, bigEndian: bigEndian)
        let limit = UInt32(maxSize)
        guard bodyLength <= limit, fieldsLength <= limit else { return .invalid("message larger than 1 MiB") }
        // Both at most 2^20: no overflow.
        let total = (16 + Int(fieldsLength) + 7) / 8 * 8 + Int(bodyLength)
        guard total <= maxSize else { return .invalid("message larger than 1 MiB") }
        return bytes.count >= total ? .complete(length: total) : .incomplete
    }

    /// Decodes the message that `bytes` holds exactly (as `frame` measured it).
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(DBusDecodeError) -> DBusMessage {
        guard case .complete(let total) = frame(bytes) else {
            if case .invalid(let why) = frame(bytes) { throw DBusDecodeError(why) }
            throw DBusDecodeError("truncated message")
        }
        guard total == bytes.count else { throw DBusDecodeError("bytes after the message") }
        var r = DBusReader(bytes: bytes, bigEndian: bytes[0] == UInt8(ascii: "B"), offset: 12, end: total)
        var m = DBusMessage(type: bytes[1])
        guard m.type != 0 else { throw DBusDecodeError("message type 0") }
        m.flags = bytes[2]
        m.serial = DBusReader.uint32(bytes, at: 8, bigEndian: r.bigEndian)
        guard m.serial != 0 else { throw DBusDecodeError("serial 0") }

        let fields = try r.value(.array(.structure([.byte, .variant])), depth: 0)
        var bodySignature: [DBusType] = []
        if case .array(_, let entries) = fields {
            for entry in entries {
                guard case .structure(let pair) = entry, pair.count == 2, case .byte(let code) = pair[0],
                    case .variant(let value) = pair[1]
                else { throw DBusDecodeError("malformed header field") }
                try m.setField(code, value, signature: &bodySignature)
            }
        }
        try r.align(8)
        for type in bodySignature { m.body.append(try r.value(type, depth: 0)) }
        guard r.offset == total else { throw DBusDecodeError("body length does not match its signature") }

        switch m.type {
        case methodCall:
            guard m.path != nil, m.member != nil else { throw DBusDecodeError("method call without path or member") }
        case methodReturn:
            guard m.replySerial != nil else { throw DBusDecodeError("method return without reply serial") }
        case errorReply:
            guard m.errorName != nil, m.replySerial != nil else {
                throw DBusDecodeError("error without name or reply serial")
            }
        case signal:
            guard m.path != nil, m.interface != nil, m.member != nil else {
                throw DBusDecodeError("signal without path, interface or member")
            }
        default:
            break
        }
        return m
    }

    private mutating func setField(
        _ code: UInt8,
        _ value: DBusValue,
        signature: inout [DBusType]
    ) throws(DBusDecodeError) {
        switch (code, value) {
        case (1, .objectPath(let v)): path = v
        case (2, .string(let v)): interface = v
        case (3, .string(let v)): member = v
        case (4, .string(let v)): errorName = v
        case (5, .uint32(let v)): replySerial = v
        case (6, .string(let v)): destination = v
        case (7, .string(let v)): sender = v
        case (8, .signature(let v)):
            // Checked when it was read.
            signature = DBusType.parse(v.utf8) ?? []
            self.signature = v
        case (9, .uint32(let v)): unixFDs = v
        case (1...9, _): throw DBusDecodeError("header field \(code) of the wrong type")
        default: break  // unknown fields are ignored
        }
    }

    /// The error reply's message (its first body value, when that is a string).
    var errorMessage: String { body.first?.stringValue ?? "" }
}

/// Why a message could not be decoded.
struct DBusDecodeError: Error, Sendable, Equatable {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Writes values, aligned from the start of the message (`WipedBuffer.count` is the offset).
enum DBusWriter {
    static func write(_ value: DBusValue, to out: WipedBuffer) {
        out.pad(to: value.type.alignment)
        switch value {
        case .byte(let v): out.append(v)
        case .boolean(let v): append(UInt32(v ? 1 : 0), out)
        case .int16(let v): append(UInt16(bitPattern: v), out)
        case .uint16(let v): append(v, out)
        case .int32(let v): append(UInt32(bitPattern: v), out)
        case .uint32(let v), .unixFD(let v): append(v, out)
        case .int64(let v): append(UInt64(bitPattern: v), out)
        case .uint64(let v): append(v, out)
        case .double(let v): append(v.bitPattern, out)
        case .string(let s), .objectPath(let s):
            let bytes = Array(s.utf8)
            append(UInt32(truncatingIfNeeded: bytes.count), out)
            out.append(bytes)
            out.append(0)
        case .signature(let s):
            let bytes = Array(s.utf8)
            out.append(UInt8(truncatingIfNeeded: bytes.count))
            out.append(bytes)
            out.append(0)
        case .bytes(let b):
            append(UInt32(truncatingIfNeeded: b.count), out)
            b.withUnsafeBytes { out.append($0) }
        case .array(let element, let items):
            let lengthAt = out.count
            append(UInt32(0), out)
            out.pad(to: element.alignment)
            let start = out.count
            for item in items { write(item, to: out) }
            out.setUInt32(UInt32(truncatingIfNeeded: out.count - start), at: lengthAt)
        case .dictEntry(let k, let v):
            write(k, to: out)
            write(v, to: out)
        case .structure(let fields):
            for f in fields { write(f, to: out) }
        case .variant(let inner):
            write(.signature(inner.type.signature), to: out)
            write(inner, to: out)
        }
    }

    private static func append<T: FixedWidthInteger>(_ v: T, _ out: WipedBuffer) {
        withUnsafeBytes(of: v.littleEndian) { out.append($0) }
    }
}

/// Reads values from a message, checking every length against the bytes left (`end`).
struct DBusReader {
    let bytes: UnsafeRawBufferPointer
    let bigEndian: Bool
    var offset: Int
    var end: Int

    /// The specification's limit on one array's length.
    static let maxArrayLength = 1 << 26

    static func uint32(_ bytes: UnsafeRawBufferPointer, at offset: Int, bigEndian: Bool) -> UInt32 {
        var v: UInt32 = 0
        guard offset >= 0, offset <= bytes.count - 4 else { return 0 }
        for i in 0..<4 { v = v << 8 | UInt32(bytes[offset + (bigEndian ? i : 3 - i)]) }
        return v
    }

    mutating func align(_ boundary: Int) throws(DBusDecodeError) {
        let padding = (boundary - offset % boundary) % boundary
        guard padding <= end - offset else { throw DBusDecodeError("truncated padding") }
        for i in 0..<padding where bytes[offset + i] != 0 { throw DBusDecodeError("padding that is not zero") }
        offset += padding
    }

    /// Claims the next `n` bytes; their start.
    private mutating func take(_ n: Int) throws(DBusDecodeError) -> Int {
        guard n >= 0, n <= end - offset else { throw DBusDecodeError("truncated value") }
        let start = offset
        offset += n
        return start
    }

    private mutating func integer(_ size: Int) throws(DBusDecodeError) -> UInt64 {
        try align(size)
        let at = try take(size)
        var v: UInt64 = 0
        for i in 0..<size { v = v << 8 | UInt64(bytes[at + (bigEndian ? i : size - 1 - i)]) }
        return v
    }

    private mutating func uint32() throws(DBusDecodeError) -> UInt32 {
        UInt32(truncatingIfNeeded: try integer(4))
    }

    /// The bytes of a string-like value: `count` bytes then a NUL, no NUL inside, valid UTF-8.
    private mutating func text(count: Int) throws(DBusDecodeError) -> String {
        let at = try take(count)
        _ = try take(1)
        guard bytes[at + count] == 0 else { throw DBusDecodeError("string without its terminating NUL") }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[at..<(at + count)])
        guard !slice.contains(0), let s = String(validating: slice, as: UTF8.self) else {
            throw DBusDecodeError("string that is not valid UTF-8 without NUL")
        }
        return s
    }

    mutating func value(_ type: DBusType, depth: Int) throws(DBusDecodeError) -> DBusValue {
        switch type {
        case .byte: return .byte(UInt8(truncatingIfNeeded: try integer(1)))
        case .boolean:
            let v = try uint32()
            guard v <= 1 else { throw DBusDecodeError("boolean other than 0 or 1") }
            return .boolean(v == 1)
        case .int16: return .int16(Int16(truncatingIfNeeded: try integer(2)))
        case .uint16: return .uint16(UInt16(truncatingIfNeeded: try integer(2)))
        case .int32: return .int32(Int32(truncatingIfNeeded: try integer(4)))
        case .uint32: return .uint32(try uint32())
        case .int64: return .int64(Int64(bitPattern: try integer(8)))
        case .uint64: return .uint64(try integer(8))
        case .double: return .double(Double(bitPattern: try integer(8)))
        case .unixFD: return .unixFD(try uint32())
        case .string:
            return .string(try text(count: Int(clamping: try uint32())))
        case .objectPath:
            let path = try text(count: Int(clamping: try uint32()))
            guard Self.isObjectPath(path) else { throw DBusDecodeError("malformed object path") }
            return .objectPath(path)
        case .signature:
            let s = try text(count: Int(UInt8(truncatingIfNeeded: try integer(1))))
            guard DBusType.parse(s.utf8) != nil else { throw DBusDecodeError("malformed signature") }
            return .signature(s)
        case .variant:
            guard depth < DBusMessage.maxDepth else { throw DBusDecodeError("nested too deeply") }
            let s = try text(count: Int(UInt8(truncatingIfNeeded: try integer(1))))
            guard let inner = DBusType.parseSingle(s.utf8) else { throw DBusDecodeError("malformed variant type") }
            return .variant(try value(inner, depth: depth + 1))
        case .array(let element):
            guard depth < DBusMessage.maxDepth else { throw DBusDecodeError("nested too deeply") }
            let length = try uint32()
            guard length <= UInt32(Self.maxArrayLength) else { throw DBusDecodeError("array over 64 MiB") }
            try align(element.alignment)
            let start = try take(Int(clamping: length))
            let stop = offset
            if element == .byte {
                return .bytes(DBusBytes(UnsafeRawBufferPointer(rebasing: bytes[start..<stop])))
            }
            // The elements are read within the array's own bytes.
            let outerEnd = end
            offset = start
            end = stop
            defer { end = outerEnd }
            var items: [DBusValue] = []
            while offset < stop { items.append(try value(element, depth: depth + 1)) }
            return .array(element, items)
        case .dictEntry(let k, let v):
            guard depth < DBusMessage.maxDepth else { throw DBusDecodeError("nested too deeply") }
            try align(8)
            let key = try value(k, depth: depth + 1)
            return .dictEntry(key, try value(v, depth: depth + 1))
        case .structure(let fields):
            guard depth < DBusMessage.maxDepth else { throw DBusDecodeError("nested too deeply") }
            try align(8)
            var values: [DBusValue] = []
            for f in fields { values.append(try value(f, depth: depth + 1)) }
            return .structure(values)
        }
    }

    /// "/" or "/" followed by non-empty elements of [A-Za-z0-9_] separated by "/".
    static func isObjectPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previous = UInt8(ascii: "/")
        for b in bytes.dropFirst() {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"):
                break
            case UInt8(ascii: "/"):
                guard previous != UInt8(ascii: "/") else { return false }
            default:
                return false
            }
            previous = b
        }
        return true
    }
}
