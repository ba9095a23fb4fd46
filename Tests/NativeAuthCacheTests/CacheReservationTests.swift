import Glibc
import NativeAuthCore
import Testing

@testable import NativeAuthCache

/// Reserve before you redeem: the room for a refresh's write is made before the refresh is sent
/// (`FileTokenStore.reserveWrite`, `CacheReservation`). The tests run on one thread, as a refresh does.
@Suite struct CacheReservationTests {
    /// Bytes allocated to a file (not its apparent size).
    func allocated(_ path: String) -> Int {
        var st = stat()
        guard stat(path, &st) == 0 else { return -1 }
        return Int(st.st_blocks) * 512
    }

    /// Fills the file system holding `dir` until a write fails with ENOSPC.
    func fill(_ dir: String) {
        let fd = open(dir + "/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0x5a, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
        _ = write(fd, block, 1)  // the last partial block
    }

    /// A small tmpfs for one test (nil when it cannot be mounted here).
    func smallDisk(_ dir: TempDir, size: String) -> String? {
        let small = dir.path + "/small"
        mkdir(small, 0o700)
        guard system("mount -t tmpfs -o size=\(size),mode=0700 tmpfs '\(small)' 2>/dev/null") == 0 else { return nil }
        return small
    }

    @Test func theReservedFileIsTheOneTheWriteRenamesIntoPlace() throws {
        let dir = TempDir()
        let s = store(dir)
        #expect(s.modify(current: [:]) { $0["a"] = makeEntry(1) }.writeError == nil)
        var st = stat()
        stat(dir.file, &st)
        try s.reserveWrite()
        let reserved = entries(dir.path, prefix: "cache.json.reserved-")
        #expect(reserved.count == 1)
        let path = dir.path + "/" + (reserved.first ?? "")
        #expect(allocated(path) >= Int(st.st_size) + CacheReservation.margin)
        #expect(fileMode(path) == 0o600)
        var reservedStat = stat()
        stat(path, &reservedStat)
        let outcome = s.modify(current: current(s)) { $0["b"] = makeEntry(2) }
        #expect(outcome.writeError == nil)
        stat(dir.file, &st)
        #expect(st.st_ino == reservedStat.st_ino)  // the reserved file became the cache file
        #expect(entries(dir.path, prefix: "cache.json.reserved-").isEmpty)
        #expect(entries(dir.path, prefix: "cache.json.tmp").isEmpty)
        #expect(try store(dir).load().count == 2)
        s.releaseReservedWrite()  // nothing left to give back
    }

    private func current(_ s: FileTokenStore) -> [String: AccountEntry] { (try? s.load()) ?? [:] }

    @Test func aLiveReservationOutlivesOtherWritersAndAStaleOneIsSwept() throws {
        let dir = TempDir()
        let mine = store(dir)
        let other = store(dir)
        #expect(mine.modify(current: [:]) { $0["a"] = makeEntry(1) }.writeError == nil)
        try mine.reserveWrite()
        let live = entries(dir.path, prefix: "cache.json.reserved-")
        #expect(live.count == 1)
        // Left by a writer that ended (nobody holds it), and a symbolic link of the name.
        writeFile(dir.path + "/cache.json.reserved-1-stale", "x")
        symlink("/etc/passwd", dir.path + "/cache.json.reserved-2-link")
        #expect(other.modify(current: current(other)) { $0["b"] = makeEntry(2) }.writeError == nil)
        #expect(entries(dir.path, prefix: "cache.json.reserved-") == live)
        mine.releaseReservedWrite()
        #expect(entries(dir.path, prefix: "cache.json.reserved-").isEmpty)
        #expect(try store(dir).load().count == 2)
    }

    @Test func theReservedRoomHoldsTheWriteOnAFullDisk() throws {
        let dir = TempDir()
        guard let small = smallDisk(dir, size: "256k") else { return }  // no tmpfs here
        defer { _ = system("umount '\(small)'") }
        let s = store(dir, path: small + "/cache.json")
        #expect(s.modify(current: [:]) { $0["a"] = makeEntry(1) }.writeError == nil)
        try s.reserveWrite()
        fill(small)
        // Without the reservation this write would fail: the disk has no byte left.
        let outcome = s.modify(current: current(s)) { $0["b"] = makeEntry(2) }
        #expect(outcome.writeError == nil)
        #expect(try store(dir, path: small + "/cache.json").load().count == 2)
        // And now there is no room for the next reservation: refused, nothing left behind.
        do {
            try s.reserveWrite()
            Issue.record("a reservation on a full disk")
        } catch {
            #expect(error.code == .cacheWriteFailed)
            #expect(error.message.contains("disk is full") && error.message.contains("not sent"))
        }
        #expect(entries(small, prefix: "cache.json.reserved-").isEmpty)
    }
}
