// The C boundary: handle registry, request decoding, answer encoding. Every exported function is a few lines
// that call into here; nothing on this path may trap: no force-unwraps, no forced tries, no unchecked subscripts.
internal import Glibc
internal import CNativeAuthShims
import NativeAuthCore
import NativeAuthJSON
import Synchronization

public typealias OutString = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>

/// Largest request or configuration document accepted.
let maxRequestBytes = 1 << 20

/// Live clients by handle. Handles are never-reused integers disguised as pointers, so a freed or forged handle
/// is recognised instead of dereferenced. A call holds a strong reference to its client for its whole duration,
/// so `na_client_free` during another thread's call is safe.
final class HandleRegistry: Sendable {
    private struct State {
        var next: UInt = 0x1000
        var clients: [UInt: NativeAuthClient] = [:]
    }

    private let state = Mutex(State())

    func insert(_ client: NativeAuthClient) -> OpaquePointer? {
        let id = state.withLock { s -> UInt in
            let id = s.next
            s.next &+= 0x10
            s.clients[id] = client
            return id
        }
        return OpaquePointer(bitPattern: id)
    }

    func lookup(_ handle: OpaquePointer?) -> NativeAuthClient? {
        guard let handle else { return nil }
        let id = UInt(bitPattern: Int(bitPattern: handle))
        return state.withLock { $0.clients[id] }
    }

    @discardableResult
    func remove(_ handle: OpaquePointer?) -> NativeAuthClient? {
        guard let handle else { return nil }
        let id = UInt(bitPattern: Int(bitPattern: handle))
        return state.withLock { $0.clients.removeValue(forKey: id) }
    }
}

let registry = HandleRegistry()

/// Decodes a request document: NULL is read as `{}` when `nullIsEmpty`, otherwise refused.
func decodeDocument(_ ptr: UnsafePointer<CChar>?, name: String, nullIsEmpty: Bool) throws(NativeAuthError) -> JSONValue {
    guard let ptr else {
        if nullIsEmpty { return .object([:]) }
        throw NativeAuthError(.invalidArgument, "\(name) is NULL")
    }
    let n = strnlen(ptr, maxRequestBytes + 1)
    guard n <= maxRequestBytes else {
        throw NativeAuthError(.invalidArgument, "\(name) is larger than \(maxRequestBytes) bytes")
    }
    let doc: JSONValue
    do {
        doc = try JSONValue.parse(bytes: UnsafeRawBufferPointer(start: ptr, count: n))
    } catch {
        throw NativeAuthError(.invalidArgument, "\(name) is not valid JSON: \(error.description)")
    }
    guard case .object = doc else {
        throw NativeAuthError(.invalidArgument, "\(name) must be a JSON object, not \(doc.typeName)")
    }
    return doc
}

/// Copies `doc` into a malloc'd C string for the caller. On allocation failure stores the static OOM document.
func emit(_ doc: JSONValue, to out: OutString) -> Bool {
    guard let bytes = doc.serializedBytes(), let buf = malloc(bytes.count + 1) else {
        out.pointee = nashim_oom_document()
        return false
    }
    let p = buf.assumingMemoryBound(to: CChar.self)
    bytes.withUnsafeBytes { raw in
        if let base = raw.baseAddress { memcpy(p, base, bytes.count) }
    }
    p[bytes.count] = 0
    out.pointee = p
    return true
}

/// Runs one operation: checks `out`, runs `body`, encodes its result or error, returns the status.
func boundary(_ out: OutString?, _ body: () throws(NativeAuthError) -> JSONValue) -> Int32 {
    guard let out else { return NAStatus.invalidArgument.rawValue }
    out.pointee = nil
    let result: Result<JSONValue, NativeAuthError>
    do { result = .success(try body()) } catch { result = .failure(error) }
    switch result {
    case .success(let doc):
        return emit(doc, to: out) ? NAStatus.ok.rawValue : NAStatus.noMemory.rawValue
    case .failure(let error):
        return emit(error.document, to: out) ? error.status.rawValue : NAStatus.noMemory.rawValue
    }
}

/// Looks a handle up, or throws `invalid_handle`.
func client(_ handle: OpaquePointer?) throws(NativeAuthError) -> NativeAuthClient {
    guard handle != nil else { throw NativeAuthError(.invalidHandle, "client is NULL") }
    guard let c = registry.lookup(handle) else {
        throw NativeAuthError(.invalidHandle, "client is not a live handle (already freed, or never created)")
    }
    return c
}

/// The one way to run an operation on a client with a request document.
func operation(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?,
               nullRequestIsEmpty: Bool = false,
               _ body: (NativeAuthClient, JSONValue) throws(NativeAuthError) -> JSONValue) -> Int32 {
    boundary(out) { () throws(NativeAuthError) -> JSONValue in
        let c = try client(handle)
        let doc = try decodeDocument(request, name: "request_json", nullIsEmpty: nullRequestIsEmpty)
        return try body(c, doc)
    }
}

/// A C pointer carried into a @Sendable closure. The host promised (header) that its callback is callable from
/// any thread.
struct UnsafeSendablePointer: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer?
}
