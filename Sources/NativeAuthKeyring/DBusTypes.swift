internal import Glibc
internal import NativeAuthCore

/// A D-Bus type (the D-Bus Specification, "Type System"), as a signature spells it.
///
/// Signatures are outside input when they come from a message: `parse` checks every rule of the specification (at
/// most 255 bytes, at most 32 nested arrays and 32 nested structures, dictionary entries only as array elements and
/// with a basic key, no empty structure) and answers nil for anything else, so the decoder never meets a type it
/// cannot read.
indirect enum DBusType: Equatable, Sendable {
    case byte
    case boolean
    case int16
    case uint16
    case int32
    case uint32
    case int64
    case uint64
    case double
    case unixFD
    case string
    case objectPath
    case signature
    case variant
    case array(DBusType)
    case dictEntry(DBusType, DBusType)
    case structure([DBusType])

    static let maxSignatureLength = 255
    static let maxArrayDepth = 32
    static let maxStructDepth = 32

    /// The type's signature.
    var signature: String {
        var out: [UInt8] = []
        append(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    func append(to out: inout [UInt8]) {
        switch self {
        case .byte: out.append(UInt8(ascii: "y"))
        case .boolean: out.append(UInt8(ascii: "b"))
        case .int16: out.append(UInt8(ascii: "n"))
        case .uint16: out.append(UInt8(ascii: "q"))
        case .int32: out.append(UInt8(ascii: "i"))
        case .uint32: out.append(UInt8(ascii: "u"))
        case .int64: out.append(UInt8(ascii: "x"))
        case .uint64: out.append(UInt8(ascii: "t"))
        case .double: out.append(UInt8(ascii: "d"))
        case .unixFD: out.append(UInt8(ascii: "h"))
        case .string: out.append(UInt8(ascii: "s"))
        case .objectPath: out.append(UInt8(ascii: "o"))
        case .signature: out.append(UInt8(ascii: "g"))
        case .variant: out.append(UInt8(ascii: "v"))
        case .array(let element):
            out.append(UInt8(ascii: "a"))
            element.append(to: &out)
        case .dictEntry(let key, let value):
            out.append(UInt8(ascii: "{"))
            key.append(to: &out)
            value.append(to: &out)
            out.append(UInt8(ascii: "}"))
        case .structure(let fields):
            out.append(UInt8(ascii: "("))
            for f in fields { f.append(to: &out) }
            out.append(UInt8(ascii: ")"))
        }
    }

    /// The boundary a value of this type starts on, counted from the start of the message.
    var alignment: Int {
        switch self {
        case .byte, .signature, .variant: return 1
        case .int16, .uint16: return 2
        case .boolean, .int32, .uint32, .unixFD, .string, .objectPath, .array: return 4
        case .int64, .uint64, .double, .dictEntry, .structure: return 8
        }
    }

    /// Basic types (the only ones a dictionary entry's key may be).
    var isBasic: Bool {
        switch self {
        case .variant, .array, .dictEntry, .structure: return false
        default: return true
        }
    }

    /// The complete types of `signature` in order, or nil when it breaks a rule of the specification.
    static func parse(_ signature: some Collection<UInt8>) -> [DBusType]? {
        let bytes = Array(signature)
        guard bytes.count <= maxSignatureLength else { return nil }
        var parser = SignatureParser(bytes: bytes)
        var types: [DBusType] = []
        while parser.index < bytes.count {
            guard let t = parser.completeType(arrays: 0, structs: 0, asArrayElement: false) else { return nil }
            types.append(t)
        }
        return types
    }

    /// The single complete type of `signature` (a variant's), or nil.
    static func parseSingle(_ signature: some Collection<UInt8>) -> DBusType? {
        guard let types = parse(signature), types.count == 1 else { return nil }
        return types.first
    }
}

/// A recursive-descent reader of one signature; nesting is bounded (32 + 32), so is the recursion.
private struct SignatureParser {
    let bytes: [UInt8]
    var index = 0

    mutating func completeType(arrays: Int, structs: Int, asArrayElement: Bool) -> DBusType? {
        guard index < bytes.count else { return nil }
        let c = bytes[index]
        index += 1
        switch c {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrays < DBusType.maxArrayDepth,
                let element = completeType(arrays: arrays + 1, structs: structs, asArrayElement: true)
            else { return nil }
            return .array(element)
        case UInt8(ascii: "("):
            guard structs < DBusType.maxStructDepth else { return nil }
            var fields: [DBusType] = []
            while index < bytes.count && bytes[index] != UInt8(ascii: ")") {
                guard let f = completeType(arrays: arrays, structs: structs + 1, asArrayElement: false) else {
                    return nil
                }
                fields.append(f)
            }
            guard index < bytes.count, !fields.isEmpty else { return nil }
            index += 1
            return .structure(fields)
        case UInt8(ascii: "{"):
            guard asArrayElement, structs < DBusType.maxStructDepth,
                let key = completeType(arrays: arrays, structs: structs + 1, asArrayElement: false), key.isBasic,
                let value = completeType(arrays: arrays, structs: structs + 1, asArrayElement: false),
                index < bytes.count, bytes[index] == UInt8(ascii: "}")
            else { return nil }
            index += 1
            return .dictEntry(key, value)
        default:
            return nil
        }
    }
}

/// A D-Bus value. An array of bytes (`ay`) is always `.bytes`: it may hold a secret, and `DBusBytes` wipes itself.
enum DBusValue: Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case unixFD(UInt32)
    case string(String)
    case objectPath(String)
    case signature(String)
    case bytes(DBusBytes)
    /// An array of any element type but `y` (its element type is kept: an empty array still has one).
    case array(DBusType, [DBusValue])
    /// Only inside an array.
    indirect case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])
    indirect case variant(DBusValue)

    /// The value's type.
    var type: DBusType {
        switch self {
        case .byte: return .byte
        case .boolean: return .boolean
        case .int16: return .int16
        case .uint16: return .uint16
        case .int32: return .int32
        case .uint32: return .uint32
        case .int64: return .int64
        case .uint64: return .uint64
        case .double: return .double
        case .unixFD: return .unixFD
        case .string: return .string
        case .objectPath: return .objectPath
        case .signature: return .signature
        case .bytes: return .array(.byte)
        case .array(let element, _): return .array(element)
        case .dictEntry(let k, let v): return .dictEntry(k.type, v.type)
        case .structure(let fields): return .structure(fields.map(\.type))
        case .variant: return .variant
        }
    }

    /// An `a{ss}` dictionary (Secret Service attributes), in the order given.
    static func stringDictionary(_ pairs: [(String, String)]) -> DBusValue {
        .array(.dictEntry(.string, .string), pairs.map { .dictEntry(.string($0.0), .string($0.1)) })
    }

    /// An `ao` array.
    static func objectPaths(_ paths: [String]) -> DBusValue { .array(.objectPath, paths.map { .objectPath($0) }) }

    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var objectPathValue: String? {
        if case .objectPath(let p) = self { return p }
        return nil
    }

    /// The object paths of an `ao` array (nil for anything else).
    var objectPathsValue: [String]? {
        guard case .array(.objectPath, let items) = self else { return nil }
        return items.compactMap(\.objectPathValue)
    }
}

/// The bytes of an `ay` value, in memory of their own that is overwritten with zeros when the last reference goes (a
/// cache key travels as one). Immutable after creation.
final class DBusBytes: @unchecked Sendable {
    private let storage: UnsafeMutableRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 1)
        if let src = bytes.baseAddress, let dst = buffer.baseAddress, bytes.count > 0 {
            memcpy(dst, src, bytes.count)
        }
        storage = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<bytes.count])
    }

    /// A copy of `bytes` (not a secret: tests, the fuzz target, empty parameters).
    static func copy(_ bytes: [UInt8]) -> DBusBytes { bytes.withUnsafeBytes { DBusBytes($0) } }

    deinit {
        if let base = storage.baseAddress { wipeMemory(base, storage.count) }
        storage.deallocate()
    }

    var count: Int { storage.count }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(storage))
    }

    /// A copy as an array (for values that are not secrets: tests, the fuzz target).
    var array: [UInt8] { Array(UnsafeRawBufferPointer(storage)) }
}
