internal import Glibc
import NativeAuthCore

/// The cached-token path's per-thread memo: decoded `na_get_access_token` requests, and their last answer.
///
/// An app asks for the same token over and over with the same request text. Parsing that text with jansson costs
/// more than everything else on the path together (about 0.8 µs of a 1 µs budget, measured), and reference counting
/// on objects that every thread shares makes threads wait for each other's cache lines. So each thread keeps, per
/// client and exact request bytes:
/// - the decoded request — a repeated request is decoded exactly as jansson decoded it the first time;
/// - the last answer that came straight from the token cache (its document, rendered here once), with the cache
///   generation it was found at. It is served again only while the cache's generation is unchanged (nothing was
///   stored, refreshed or signed out since) and the token is still servable by the cache's own rule; anything else
///   goes through the cache.
/// The table is small, direct-mapped, and belongs to one thread (no lock, no sharing). Only requests that decoded
/// successfully and are at most `maxBytes` long are kept. Answer copies are wiped when replaced or when the thread
/// ends.
final class RequestMemo {
    static let slots = 64
    static let maxBytes = 512

    final class Entry {
        let client: UInt
        let hash: UInt64
        let bytes: [UInt8]
        let request: TokenRequest
        /// The last cached answer: generation, validity and the document.
        var generation: UInt64 = 0
        var validity: TokenValidity? = nil
        var answer: [UInt8] = []

        init(client: UInt, hash: UInt64, bytes: [UInt8], request: TokenRequest) {
            self.client = client
            self.hash = hash
            self.bytes = bytes
            self.request = request
        }

        /// Keeps `bytes` (the answer, rendered by the caller; the memo wipes them when it lets go).
        func remember(_ bytes: [UInt8], validity: TokenValidity, generation: UInt64) {
            forget()
            answer = bytes
            self.validity = validity
            self.generation = generation
        }

        func forget() {
            answer.withUnsafeMutableBytes { if let p = $0.baseAddress { wipeMemory(p, $0.count) } }
            answer = []
            validity = nil
        }

        deinit { forget() }
    }

    private var entries: [Entry?] = Array(repeating: nil, count: RequestMemo.slots)

    /// The calling thread's memo (created on first use, released when the thread exits).
    static var current: RequestMemo {
        if let p = pthread_getspecific(key) { return Unmanaged<RequestMemo>.fromOpaque(p).takeUnretainedValue() }
        let memo = RequestMemo()
        pthread_setspecific(key, Unmanaged.passRetained(memo).toOpaque())
        return memo
    }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        pthread_key_create(&k) { p in
            if let p { Unmanaged<RequestMemo>.fromOpaque(p).release() }
        }
        return k
    }()

    /// A multiplicative hash over 8-byte words (a table index, not a security boundary: entries are compared byte for
    /// byte).
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ UInt64(bytes.count)
        var i = 0
        while i + 8 <= bytes.count {
            h = (h ^ bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
            h ^= h >> 29
            i += 8
        }
        while i < bytes.count {
            h = (h ^ UInt64(bytes[i])) &* 0x0000_0100_0000_01b3
            i += 1
        }
        return h
    }

    /// The entry for `client` and the request `bytes`, decoding them with `decode` the first time; nil when the
    /// request is not kept (too long).
    func entry(
        client: UInt,
        bytes: UnsafeRawBufferPointer,
        decode: () throws(NativeAuthError) -> TokenRequest
    )
        throws(NativeAuthError) -> Entry?
    {
        guard bytes.count > 0, bytes.count <= Self.maxBytes, let base = bytes.baseAddress else { return nil }
        let h = Self.hash(bytes)
        let slot = Int(truncatingIfNeeded: (h ^ UInt64(client)) % UInt64(Self.slots))
        if let e = entries[slot], e.hash == h, e.client == client, e.bytes.count == bytes.count,
            e.bytes.withUnsafeBytes({ stored in stored.baseAddress.map { memcmp($0, base, bytes.count) == 0 } ?? false }
            )
        {
            return e
        }
        let e = Entry(client: client, hash: h, bytes: Array(bytes), request: try decode())
        entries[slot] = e
        return e
    }
}
