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
