import NativeAuthCore
import Synchronization

/// Handles (of clients, and of started calls) without a process-wide lock on any call's path.
///
/// A handle is not a pointer: it is `tag << 60 | generation << 20 | slot`, a number no allocator will ever hand out
/// as an address for a live client; the tag tells the tables apart (clients 0, started calls 1), so an op passed
/// where a client is expected — or the reverse — is `invalid_handle`, never another object. Each slot has one
/// atomic state word — `generation << 24 | active calls << 1 | live` — so:
/// - a call enters with one compare-and-swap that checks the generation and the live bit and counts itself in, and
///   leaves with one atomic decrement; calls on different clients never touch the same memory;
/// - a freed, forged or never-valid handle fails the generation check (a slot is reused only with a new
///   generation), and an index outside the table fails the bounds check: `invalid_handle`, never a crash;
/// - `na_client_free` clears the live bit; the client is released by whoever brings the slot to "not live, no
///   calls" — the free itself, or the last call still running on another thread.
/// Allocating and recycling slots (client creation and destruction) take a mutex; calls never do.
/// (@unchecked Sendable: all shared state is atomic, or guarded by `allocation`.)
final class HandleTable<Object: AnyObject & Sendable>: @unchecked Sendable {
    // (Computed: a generic class cannot have static stored properties; each folds to a constant.)
    static var slotBits: Int { 20 }
    static var chunkSize: Int { 4096 }
    static var maxChunks: Int { (1 << slotBits) / chunkSize }

    private static var liveBit: UInt64 { 1 }
    private static var callUnit: UInt64 { 2 }
    private static var callMask: UInt64 { 0x00FF_FFFE }
    private static var generationShift: UInt64 { 24 }

    /// One slot: its state word and the (retained) client while live.
    private struct Slot: ~Copyable {
        let state: Atomic<UInt64>
        let client: Atomic<UInt>  // bit pattern of an Unmanaged<Object>, +1 retained while set
    }

    /// Chunk directory: each entry is 0 or the address of `chunkSize` slots. Chunks are never freed.
    private let chunks: UnsafeMutablePointer<Atomic<UInt>>
    private struct Allocation {
        var free: [Int] = []
        var used = 0  // slots ever handed out
    }
    private let allocation = Mutex(Allocation())

    /// The table's tag (bits 60…62 of its handles).
    private let tag: UInt

    init(tag: UInt = 0) {
        self.tag = tag & 7
        chunks = .allocate(capacity: Self.maxChunks)
        for i in 0..<Self.maxChunks { (chunks + i).initialize(to: Atomic(0)) }
    }

    private func slot(_ index: Int) -> UnsafeMutablePointer<Slot>? {
        guard index >= 0, index < (1 << Self.slotBits) else { return nil }
        let base = chunks[index / Self.chunkSize].load(ordering: .acquiring)
        guard base != 0, let p = UnsafeMutablePointer<Slot>(bitPattern: base) else { return nil }
        return p + index % Self.chunkSize
    }

    private func decode(_ handle: OpaquePointer?) -> (index: Int, generation: UInt64)? {
        guard let handle else { return nil }
        let raw = UInt(bitPattern: Int(bitPattern: handle))
        guard raw >> 60 == tag else { return nil }
        return (Int(raw & UInt((1 << Self.slotBits) - 1)), UInt64((raw >> UInt(Self.slotBits)) & ((1 << 40) - 1)))
    }

    /// Registers a client; nil when the table is full (a million live clients).
    func insert(_ client: Object) -> OpaquePointer? {
        allocation.withLock { a -> OpaquePointer? in
            let index: Int
            if let reused = a.free.popLast() {
                index = reused
            } else {
                guard a.used < (1 << Self.slotBits) else { return nil }
                let chunk = a.used / Self.chunkSize
                if chunks[chunk].load(ordering: .acquiring) == 0 {
                    let fresh = UnsafeMutablePointer<Slot>.allocate(capacity: Self.chunkSize)
                    for i in 0..<Self.chunkSize {
                        // Generation 1 for a fresh slot, so no handle is ever 0 (NULL).
                        (fresh + i).initialize(to: Slot(state: Atomic(1 << Self.generationShift), client: Atomic(0)))
                    }
                    chunks[chunk].store(UInt(bitPattern: fresh), ordering: .releasing)
                }
                index = a.used
                a.used += 1
            }
            guard let s = slot(index) else { return nil }
            let generation = s.pointee.state.load(ordering: .acquiring) >> Self.generationShift
            s.pointee.client.store(UInt(bitPattern: Unmanaged.passRetained(client).toOpaque()), ordering: .relaxed)
            s.pointee.state.store(generation << Self.generationShift | Self.liveBit, ordering: .releasing)
            return OpaquePointer(bitPattern: tag << 60 | UInt(generation) << UInt(Self.slotBits) | UInt(index))
        }
    }

    /// Runs `body` with the live client named by `handle` (counted in, so a concurrent free waits for it), or
    /// returns nil for a handle that is not live.
    func withObject<R>(_ handle: OpaquePointer?, _ body: (Object) throws -> R) rethrows -> R? {
        guard let (index, generation) = decode(handle), let s = slot(index) else { return nil }
        var state = s.pointee.state.load(ordering: .acquiring)
        while true {
            guard state >> Self.generationShift == generation, state & Self.liveBit != 0,
                state & Self.callMask != Self.callMask
            else { return nil }
            let (exchanged, original) = s.pointee.state.compareExchange(
                expected: state,
                desired: state + Self.callUnit,
                ordering: .acquiringAndReleasing
            )
            if exchanged { break }
            state = original
        }
        defer { leave(s, index) }
        guard let client = UnsafeRawPointer(bitPattern: s.pointee.client.load(ordering: .acquiring)) else {
            return nil
        }
        return try Unmanaged<Object>.fromOpaque(client)._withUnsafeGuaranteedRef { try body($0) }
    }

    private func leave(_ s: UnsafeMutablePointer<Slot>, _ index: Int) {
        let after = s.pointee.state.subtract(Self.callUnit, ordering: .acquiringAndReleasing).newValue
        if after & Self.liveBit == 0 && after & Self.callMask == 0 { retire(s, index, state: after) }
    }

    /// Frees the client named by `handle`. A handle that is not live (freed already, forged) is ignored.
    func remove(_ handle: OpaquePointer?) {
        guard let (index, generation) = decode(handle), let s = slot(index) else { return }
        var state = s.pointee.state.load(ordering: .acquiring)
        while true {
            guard state >> Self.generationShift == generation, state & Self.liveBit != 0 else { return }
            let (exchanged, original) = s.pointee.state.compareExchange(
                expected: state,
                desired: state & ~Self.liveBit,
                ordering: .acquiringAndReleasing
            )
            if exchanged { break }
            state = original
        }
        if state & Self.callMask == 0 { retire(s, index, state: state & ~Self.liveBit) }
    }

    /// Releases the client of a slot that is neither live nor in use, and recycles the slot with a new generation.
    private func retire(_ s: UnsafeMutablePointer<Slot>, _ index: Int, state: UInt64) {
        let client = s.pointee.client.exchange(0, ordering: .acquiringAndReleasing)
        let generation = (state >> Self.generationShift) &+ 1
        let wrapped = generation & ((1 << 40) - 1) == 0 ? 1 : generation & ((1 << 40) - 1)
        s.pointee.state.store(wrapped << Self.generationShift, ordering: .releasing)
        allocation.withLock { $0.free.append(index) }
        if let p = UnsafeRawPointer(bitPattern: client) { Unmanaged<Object>.fromOpaque(p).release() }
    }
}

/// A live client and what the C ABI keeps beside it: the pool that runs its started calls.
final class ClientBox: Sendable {
    let client: NativeAuthClient
    let calls: StartedCalls
    init(_ client: NativeAuthClient) {
        self.client = client
        calls = StartedCalls(workers: client.configuration.asyncWorkers)
    }
}

extension HandleTable where Object == ClientBox {
    /// Runs `body` with the live client named by `handle`, or returns nil (see `withObject`).
    func withClient<R>(_ handle: OpaquePointer?, _ body: (NativeAuthClient) throws -> R) rethrows -> R? {
        try withObject(handle) { try body($0.client) }
    }
}

let handles = HandleTable<ClientBox>()
