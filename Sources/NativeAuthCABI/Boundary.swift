// The C boundary: every exported function is a few lines that call `operation` (or `boundary`), which checks the
// pointers, decodes the request document once, runs the core with typed values, and encodes the answer or the error
// once. Nothing on this path may trap: no force-unwraps, no forced tries, no unchecked subscripts.
internal import Glibc
import NativeAuthCore
import NativeAuthJSON

public typealias OutString = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

/// Largest request or configuration document accepted.
let maxRequestBytes = 1 << 20

/// A static, never-freed error document for the case where the library cannot allocate one (na_string_free
/// recognises it and does nothing).
let outOfMemoryDocument: StaticString =
    #"{"v":1,"error":{"code":"out_of_memory","message":"The library could not allocate memory."}}"#

var outOfMemoryPointer: UnsafeMutablePointer<CChar> {
    UnsafeMutablePointer(mutating: UnsafeRawPointer(outOfMemoryDocument.utf8Start).assumingMemoryBound(to: CChar.self))
}

/// A request document parsed by jansson and read in place.
typealias Fields = JSONFields<JSONNode>

/// Parses a request document: NULL is read as `{}` when `nullIsEmpty`, otherwise refused. The document must be an
/// object of at most `maxRequestBytes`; "v", when present, must be 1. Errors say where the problem is, never what the
/// text there was (it may be a password).
func decodeDocument(_ ptr: UnsafePointer<CChar>?, name: String, nullIsEmpty: Bool) throws(NativeAuthError) -> Fields {
    let document: JSONDocument
    if let ptr {
        let n = strnlen(ptr, maxRequestBytes + 1)
        guard n <= maxRequestBytes else {
            throw .invalidArgument("\(name) is larger than \(maxRequestBytes) bytes")
        }
        let text = UnsafeRawBufferPointer(start: ptr, count: n)
        guard !JSONDepth.exceeds(text) else {
            throw .invalidArgument("\(name) nests deeper than \(JSONDepth.limit) levels")
        }
        do {
            document = try JSONDocument(bytes: text)
        } catch {
            throw .invalidArgument("\(name) is not valid JSON: \(error.description)")
        }
    } else {
        guard nullIsEmpty else { throw .invalidArgument("\(name) is NULL") }
        let empty: StaticString = "{}"
        do {
            document = try JSONDocument(bytes: UnsafeRawBufferPointer(start: empty.utf8Start, count: 2))
        } catch {
            throw NativeAuthError(.outOfMemory, "The library could not allocate memory.")
        }
    }
    let root = document.root
    guard root.isObject else { throw .invalidArgument("\(name) must be a JSON object, not \(root.typeName)") }
    let f = try fields { () throws(JSONFieldError) in try JSONFields(root) }
    if let v = f.value("v"), v.intValue != 1 {
        throw .invalidArgument("v: unsupported document version (this library speaks 1)", field: "v")
    }
    return f
}

/// Reads fields, turning a field error ("scopes[2]: expected string, found integer") into `invalid_argument`.
func fields<T>(_ body: () throws(JSONFieldError) -> T) throws(NativeAuthError) -> T {
    do { return try body() } catch {
        throw NativeAuthError(.invalidArgument, error.description, field: error.path.isEmpty ? nil : error.path)
    }
}

/// A request or configuration document's members, read the one way the C ABI reads documents: a member of the
/// wrong type (or out of range) is `invalid_argument` naming it (`field`). The methods are `JSONFields`' own.
struct Checked {
    let fields: Fields

    func optionalString(_ key: String) throws(NativeAuthError) -> String? {
        try NativeAuthCABI.fields { () throws(JSONFieldError) in try fields.optionalString(key) }
    }
    func string(_ key: String) throws(NativeAuthError) -> String {
        try NativeAuthCABI.fields { () throws(JSONFieldError) in try fields.string(key) }
    }
    func optionalBool(_ key: String) throws(NativeAuthError) -> Bool? {
        try NativeAuthCABI.fields { () throws(JSONFieldError) in try fields.optionalBool(key) }
    }
    func optionalInt(_ key: String, in range: ClosedRange<Int64>) throws(NativeAuthError) -> Int64? {
        try NativeAuthCABI.fields { () throws(JSONFieldError) in try fields.optionalInt(key, in: range) }
    }
    func optionalStringArray(_ key: String) throws(NativeAuthError) -> [String]? {
        try NativeAuthCABI.fields { () throws(JSONFieldError) in try fields.optionalStringArray(key) }
    }
    func optionalObject(_ key: String) throws(NativeAuthError) -> Fields? {
        try NativeAuthCABI.fields { () throws(JSONFieldError) in try fields.optionalObject(key) }
    }
}

extension JSONFields where Element == JSONNode {
    /// These members, read with `invalid_argument` errors (see `Checked`).
    var checked: Checked { Checked(fields: self) }
}

/// Copies `bytes` into a malloc'd, NUL-terminated C string for the caller. On allocation failure stores the static
/// out-of-memory document and returns false.
func emit(_ bytes: UnsafeRawBufferPointer, to out: OutString) -> Bool {
    guard let buf = malloc(bytes.count + 1) else {
        out.pointee = outOfMemoryPointer
        return false
    }
    if let base = bytes.baseAddress, bytes.count > 0 { memcpy(buf, base, bytes.count) }
    let p = buf.assumingMemoryBound(to: CChar.self)
    p[bytes.count] = 0
    out.pointee = p
    return true
}

/// Serialises `doc` for the caller (see `emit`); the intermediate copy, which may hold a token, is wiped.
func emit(_ doc: JSONValue, to out: OutString) -> Bool {
    guard var bytes = doc.serializedBytes() else {
        out.pointee = outOfMemoryPointer
        return false
    }
    defer { bytes.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } } }
    return bytes.withUnsafeBytes { emit($0, to: out) }
}

/// What an operation answers: a document to serialise, or the bytes of a cached token's answer that the calling
/// thread's memo holds.
enum Answer {
    case document(JSONValue)
    case memo(RequestMemo.Entry)
}

/// Runs one operation: checks `out`, runs `body`, encodes its answer or error, returns the status.
func boundary(_ out: OutString?, _ body: () throws(NativeAuthError) -> Answer) -> Int32 {
    guard let out else { return NAStatus.invalidArgument.rawValue }
    out.pointee = nil
    let result: Result<Answer, NativeAuthError> = Result { () throws(NativeAuthError) in try body() }
    switch result {
    case .success(.document(let doc)):
        return emit(doc, to: out) ? NAStatus.ok.rawValue : NAStatus.noMemory.rawValue
    case .success(.memo(let entry)):
        let ok = entry.answer.withUnsafeBytes { emit($0, to: out) }
        return ok ? NAStatus.ok.rawValue : NAStatus.noMemory.rawValue
    case .failure(let error):
        return emit(Encode.error(error), to: out) ? NAStatus(error).rawValue : NAStatus.noMemory.rawValue
    }
}

/// The one way to run an operation on a client with a request document.
func operation(
    _ handle: OpaquePointer?,
    _ request: UnsafePointer<CChar>?,
    _ out: OutString?,
    nullRequestIsEmpty: Bool = false,
    _ body: (NativeAuthClient, Fields) throws(NativeAuthError) -> Answer
) -> Int32 {
    operationOnText(handle, out) { (client, _) throws(NativeAuthError) -> Answer in
        try body(client, decodeDocument(request, name: "request_json", nullIsEmpty: nullRequestIsEmpty))
    }
}

/// Runs an operation on a live client, leaving the decoding of the request to `body` (which gets the client and the
/// handle's value, a key that is never reused for another client).
func operationOnText(
    _ handle: OpaquePointer?,
    _ out: OutString?,
    _ body: (NativeAuthClient, UInt) throws(NativeAuthError) -> Answer
) -> Int32 {
    boundary(out) { () throws(NativeAuthError) -> Answer in
        guard let handle else { throw NativeAuthError(.invalidHandle, "client is NULL") }
        let answer: Result<Answer, NativeAuthError>? = handles.withClient(handle) { client in
            Result { () throws(NativeAuthError) in try body(client, UInt(bitPattern: Int(bitPattern: handle))) }
        }
        guard let answer else {
            throw NativeAuthError(.invalidHandle, "client is not a live handle (already freed, or never created)")
        }
        return try answer.get()
    }
}

/// The cached-token path: the thread's memo of the last answer while the cache is unchanged and the token servable,
/// else the token cache, whose answer — when it came straight from the cache — is rendered once and kept by the memo
/// (keyed by client and request, so by account and scopes, and valid for the cache generation it was found at).
/// This is the only place a token's answer is kept rendered: the core knows nothing of documents.
func cachedTokenAnswer(_ c: NativeAuthClient, _ memo: RequestMemo.Entry) throws(NativeAuthError) -> Answer {
    if let v = memo.validity, memo.generation == c.cacheGeneration, v.isServable(at: c.now()) {
        c.logger.log(.verbose, "access token served from cache")
        return .memo(memo)
    }
    let result = try c.accessToken(memo.request)
    guard result.fromCache, let g = result.cacheGeneration,
        let bytes = Encode.rendered(result.token, fromCache: true)
    else {
        memo.forget()
        return Encode.token(result)
    }
    memo.remember(bytes, validity: result.token.validity, generation: g)
    return .memo(memo)
}
