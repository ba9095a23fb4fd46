internal import Glibc
internal import NativeAuthCore

/// A growable byte buffer whose memory is overwritten with zeros before it is given back — when it grows, when bytes
/// are consumed from its front, and when it is released. Messages that carry a cache key are built and received in
/// one (an `Array` that grows leaves copies of its old contents in freed memory).
final class WipedBuffer {
    private var storage: UnsafeMutableRawBufferPointer
    /// The bytes in use.
    private(set) var count = 0

    init(capacity: Int = 256) {
        storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(16, capacity), alignment: 8)
    }

    deinit {
        if let base = storage.baseAddress { wipeMemory(base, storage.count) }
        storage.deallocate()
    }

    var capacity: Int { storage.count }

    /// Lends the bytes in use to `body` (they stay valid only during the call).
    func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// A copy of the bytes in use (not for secrets: tests, seeds).
    var array: [UInt8] { withBytes { Array($0) } }

    /// Makes room for `extra` more bytes.
    func reserve(_ extra: Int) {
        let needed = count + extra
        guard needed > storage.count else { return }
        var size = storage.count
        while size < needed { size *= 2 }
        let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
        if let src = storage.baseAddress, let dst = bigger.baseAddress, count > 0 { memcpy(dst, src, count) }
        if let base = storage.baseAddress { wipeMemory(base, storage.count) }
        storage.deallocate()
        storage = bigger
    }

    func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let src = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        if let dst = storage.baseAddress { memcpy(dst + count, src, bytes.count) }
        count += bytes.count
    }

    func append(_ bytes: [UInt8]) { bytes.withUnsafeBytes { append($0) } }

    /// Appends zeros up to the next multiple of `boundary`.
    func pad(to boundary: Int) {
        while count % boundary != 0 { append(0) }
    }

    /// Overwrites four bytes at `offset` (little-endian), which must be in use.
    func setUInt32(_ value: UInt32, at offset: Int) {
        guard offset >= 0, offset + 4 <= count else { return }
        withUnsafeBytes(of: value.littleEndian) { v in
            for i in 0..<4 { storage[offset + i] = v[i] }
        }
    }

    /// Lets `body` write up to `maximum` bytes after those in use (a `read(2)`); it answers how many it wrote, or a
    /// negative number for none.
    func appendInPlace(maximum: Int, _ body: (UnsafeMutableRawPointer, Int) -> Int) -> Int {
        reserve(maximum)
        guard let base = storage.baseAddress else { return -1 }
        let n = body(base + count, maximum)
        if n > 0 { count += min(n, maximum) }
        return n
    }

    /// Drops the first `n` bytes in use (they are wiped).
    func removeFirst(_ n: Int) {
        let n = min(max(0, n), count)
        guard n > 0, let base = storage.baseAddress else { return }
        if n < count { memmove(base, base + n, count - n) }
        wipeMemory(base + (count - n), n)
        count -= n
    }

    /// Drops every byte (they are wiped).
    func removeAll() { removeFirst(count) }
}
