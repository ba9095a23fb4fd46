internal import Glibc
internal import NativeAuthCore
internal import NativeAuthJSON

extension MSALCacheFormat {
    /// MSAL's unified token cache document, as MSAL for Python's `SerializableTokenCache` writes it: top-level sections
    /// (`AccessToken`, `RefreshToken`, `IdToken`, `Account`, `AppMetadata`, and whatever other SDKs add), each an
    /// object of entries by cache key.
    ///
    /// It is read by a single validating pass over the bytes that notes where each entry is and decodes only the fields
    /// this library uses, and written by copying every entry it did not change byte for byte: entries and fields this
    /// library does not understand are kept exactly, and a cache of a thousand accounts loads and saves in
    /// milliseconds.
    struct Document: Sendable {
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
    }
}
