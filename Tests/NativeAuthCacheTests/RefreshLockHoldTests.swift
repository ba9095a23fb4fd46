import Foundation
import Glibc
import NativeAuthCore
import Synchronization
import Testing

@testable import NativeAuthCache

/// The refresh lock's hold (`FileTokenStore.acquireRefreshLock`): the file lock and the taking thread's note that it
/// holds it, both given back by the first `release()` — from any thread — or when the hold is dropped.
@Suite struct RefreshLockHoldTests {
    /// Whether another open file description can take the lock file now.
    func lockIsFree(_ s: FileTokenStore) -> Bool {
        let fd = open(s.refreshLockPath, O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(fd, LOCK_UN)
        return true
    }

    func acquire(_ s: FileTokenStore) throws(NativeAuthError) -> any RefreshLockHold {
        try s.acquireRefreshLock(deadline: SystemClock().now() + 5, isCancelled: { false })
    }

    /// Runs `body` on a thread of its own and waits for it.
    func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
        let done = Mutex(false)
        let t = Thread {
            body()
            done.withLock { $0 = true }
        }
        t.start()
        while !done.withLock({ $0 }) { usleep(1000) }
    }

    @Test func aThreadHoldingTheLockIsAnsweredReentrantAndNotOnceItIsReleased() throws {
        let dir = TempDir()
        let s = store(dir)
        let hold = try acquire(s)
        #expect(!lockIsFree(s))
        #expect(throws: NativeAuthError.self) { _ = try acquire(s) }
        do { _ = try acquire(s) } catch { #expect(error.code == .reentrantCall) }
        hold.release()
        hold.release()  // a second release does nothing
        #expect(lockIsFree(s))
        let again = try acquire(s)
        again.release()
        #expect(lockIsFree(s))
    }

    /// Released from another thread than the one that took it: the file lock is free and the taking thread is no
    /// longer marked (its next refresh is not `reentrant_call`); the releasing thread was never marked.
    @Test func aHoldReleasedFromAnotherThreadUnmarksTheTakingThread() throws {
        let dir = TempDir()
        let s = store(dir)
        let hold = try acquire(s)
        let box = UncheckedBox(hold)
        let other = Mutex<NativeAuthError.Code?>(nil)
        onAnotherThread {
            // Another thread is not the holder: it waits (here: gives up at once), it is not answered reentrant.
            do throws(NativeAuthError) {
                _ = try s.acquireRefreshLock(deadline: SystemClock().now() - 1, isCancelled: { false })
            } catch {
                other.withLock { $0 = error.code }
            }
            box.value.release()
        }
        #expect(other.withLock { $0 } == .timeout)
        #expect(lockIsFree(s))
        let again = try acquire(s)
        #expect(!lockIsFree(s))
        again.release()
        #expect(lockIsFree(s))
    }

    /// A hold dropped without `release()` gives the lock and the thread's note back.
    @Test func aHoldDroppedUnreleasedGivesTheLockBack() throws {
        let dir = TempDir()
        let s = store(dir)
        do {
            let hold = try acquire(s)
            #expect(!lockIsFree(s))
            _ = hold
        }
        #expect(lockIsFree(s))
        let again = try acquire(s)
        again.release()
    }

    /// Two stores of one file in one process (two clients), whatever the path each names it by: one thread holding
    /// the lock through the first is answered reentrant at once through the second (not after waiting for itself
    /// until its deadline); after the release the second takes it.
    @Test func theNoteIsPerFileNotPerStore() throws {
        let dir = TempDir()
        let first = store(dir)
        // The same file by other names: `.` and `..` in the path, and a symbolic link to its directory.
        mkdir(dir.path + "/sub", 0o700)
        symlink(dir.path, dir.path + "/link")
        let others = [
            store(dir), store(dir, path: dir.path + "/./cache.json"), store(dir, path: dir.path + "/sub/../cache.json"),
            store(dir, path: dir.path + "/link/cache.json"),
        ]
        let hold = try acquire(first)
        for second in others {
            #expect(throws: NativeAuthError.self) { _ = try acquire(second) }
            do { _ = try acquire(second) } catch { #expect(error.code == .reentrantCall, "\(second.path)") }
        }
        hold.release()
        for second in others {
            let again = try acquire(second)
            again.release()
        }
        #expect(lockIsFree(first))
    }
}

/// Hands a non-Sendable-checked value to another thread in a test.
private final class UncheckedBox<T>: @unchecked Sendable {  // used by one thread at a time (the test waits)
    let value: T
    init(_ value: T) { self.value = value }
}
