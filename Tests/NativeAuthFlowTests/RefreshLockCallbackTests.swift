import Foundation
import Glibc
import NativeAuthCABI
import NativeAuthJSON
import Synchronization
import Testing

/// The cache file's refresh lock, taken at the refresh's lock step and given back by the driver, against a host that
/// calls back into the library from the log callback of the thread holding it (issue 30's hold): the lock is never
/// left held, and the thread is not left marked as holding it.
@Suite struct RefreshLockCallbackTests {
    private func waitUntil(_ what: String, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(60)
        while try !condition() {
            guard Date() < deadline else { throw TestFailure("timed out waiting for \(what)") }
            usleep(2000)
        }
    }

    /// Whether another open file description can take the lock file now.
    private func lockIsFree(_ cachePath: String) -> Bool {
        let fd = open(cachePath + ".refresh-lock", O_RDWR | O_CREAT, 0o600)
        defer { close(fd) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { return false }
        flock(fd, LOCK_UN)
        return true
    }

    private final class Probe: @unchecked Sendable {  // `lock` guards the rest
        let lock = NSLock()
        var handle: OpaquePointer? = nil
        var other: OpaquePointer? = nil
        var request = ""
        var lockHeld: Bool? = nil
        var answers: [String] = []
        var done = false
        var path = ""
    }

    /// On the refresh's log line (under the lock): notes whether the lock is held, and frees the client.
    static let freeing: NALogFunction = { _, message, _, user in
        guard let user, let message else { return }
        let p = Unmanaged<Probe>.fromOpaque(user).takeUnretainedValue()
        guard String(cString: message).hasPrefix("refreshing an access token") else { return }
        let (first, handle, path) = p.lock.withLock { () -> (Bool, OpaquePointer?, String) in
            defer { p.done = true }
            return (!p.done, p.handle, p.path)
        }
        guard first else { return }
        let fd = open(path + ".refresh-lock", O_RDWR | O_CREAT, 0o600)
        let free = flock(fd, LOCK_EX | LOCK_NB) == 0
        close(fd)
        p.lock.withLock { p.lockHeld = !free }
        na_client_free(handle)
    }

    private func fileCache() -> (JSONValue, String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-lockcb-\(UUID().uuidString)")
        let path = dir.appendingPathComponent("cache.json").path
        return (["type": "file", "path": .string(path)], path)
    }

    /// A client of a new cache file, signed in, whose log callback (`freeing`) frees it; the probe the callback
    /// reports to. The emulator and the client are kept alive by the caller.
    private func signedInWithAFreeingCallback() throws -> (EmulatorProcess, ABIClient, Probe, JSONValue, String) {
        let emu = try EmulatorProcess()
        let (cache, path) = fileCache()
        let c = try ABIClient(emu, ["cache": cache, "request_timeout_ms": 20000])
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        let probe = Probe()
        probe.handle = c.handle
        probe.path = path
        #expect(na_client_set_log_callback(c.handle, 4, Self.freeing, Unmanaged.passUnretained(probe).toOpaque()) == 0)
        return (emu, c, probe, cache, path)
    }

    /// The refresh's log callback frees the client while its thread holds the lock: the call returns, the lock is
    /// given back, and another client of the file refreshes at once.
    @Test func theClientFreedFromTheLogCallbackOfTheLockHolder() throws {
        let (emu, c, probe, cache, path) = try signedInWithAFreeingCallback()
        let scope = emu.apiScopes.todo
        let outer = c.call(na_get_access_token, ["scopes": [.string(scope)], "force_refresh": true])
        #expect(probe.lock.withLock { probe.lockHeld } == true, "the callback ran while the lock was held")
        // Whatever the freed client's call answered, the lock is free and another client refreshes at once.
        #expect(outer.rc != NA_OK || outer.doc["access_token"] != nil, "\(outer.doc.serialized())")
        #expect(lockIsFree(path))
        let other = try ABIClient(emu, ["cache": cache, "request_timeout_ms": 5000])
        let next = other.call(na_get_access_token, ["scopes": [.string(scope)], "force_refresh": true])
        #expect(next.rc == NA_OK, "\(next.doc.serialized())")
        #expect(lockIsFree(path))
    }

    /// The same from a started call's refresh, on its thread of its own: the call answers, and once the refresh
    /// (sent before the free) is stored the lock is given back; another client refreshes at once.
    @Test func theClientFreedFromTheLogCallbackOfABackgroundRefreshHoldingTheLock() async throws {
        let (emu, c, probe, cache, path) = try signedInWithAFreeingCallback()
        let scope = emu.apiScopes.todo
        let done = Completion()
        let (rc, op) = c.start("get_access_token", ["scopes": [.string(scope)], "force_refresh": true], done)
        #expect(rc == NA_OK)
        _ = try await done.wait()
        na_op_free(op)
        #expect(probe.lock.withLock { probe.lockHeld } == true, "the callback ran while the lock was held")
        #expect(try await eventually { lockIsFree(path) }, "the lock was given back")
        let other = try ABIClient(emu, ["cache": cache, "request_timeout_ms": 5000])
        let next = other.call(na_get_access_token, ["scopes": [.string(scope)], "force_refresh": true])
        #expect(next.rc == NA_OK, "\(next.doc.serialized())")
    }

    /// A second client of the file (naming it another way), called from the lock holder's log callback:
    /// reentrant_call at once, not a wait for its own thread until the timeout; once the
    /// outer call returned, the same thread refreshes through that client (it is not left marked as a holder), and a
    /// started call's refresh (on a thread of its own) does too.
    @Test func theLockHoldersThreadIsUnmarkedOnceTheRefreshEnds() throws {
        let emu = try EmulatorProcess()
        try emu.control("POST", "settings", ["access_token_lifetime": 300])
        let (cache, path) = fileCache()
        let c = try ABIClient(emu, ["cache": cache, "request_timeout_ms": 20000])
        // The second client names the same file another way (as a relative path or a symlinked home would).
        let dir = FileTokenStoreSpelling.directory(of: path)
        let otherCache: JSONValue = ["type": "file", "path": .string(dir + "/./" + "cache.json")]
        let other = try ABIClient(emu, ["cache": otherCache, "request_timeout_ms": 2000])
        let scope = emu.apiScopes.todo
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        let probe = Probe()
        probe.other = other.handle
        probe.request = JSONValue.object(["scopes": [.string(scope)], "force_refresh": true]).serialized()
        let callback: NALogFunction = { _, message, _, user in
            guard let user, let message else { return }
            let p = Unmanaged<Probe>.fromOpaque(user).takeUnretainedValue()
            guard String(cString: message).hasPrefix("refreshing an access token") else { return }
            let (first, other, request) = p.lock.withLock { () -> (Bool, OpaquePointer?, String) in
                defer { p.done = true }
                return (!p.done, p.other, p.request)
            }
            guard first else { return }
            var out: UnsafeMutablePointer<CChar>? = nil
            _ = na_get_access_token(other, request, &out)
            let code = out.flatMap { try? JSONValue.parse(String(cString: $0)) }?.errorCode ?? "none"
            na_string_free(out)
            p.lock.withLock { p.answers.append(code) }
        }
        #expect(na_client_set_log_callback(c.handle, 4, callback, Unmanaged.passUnretained(probe).toOpaque()) == 0)
        let outer = c.call(na_get_access_token, ["scopes": [.string(scope)], "force_refresh": true])
        #expect(outer.rc == NA_OK, "\(outer.doc.serialized())")
        #expect(probe.lock.withLock { probe.answers } == ["reentrant_call"])
        _ = na_client_set_log_callback(c.handle, 0, nil, nil)
        #expect(lockIsFree(path))
        // The same thread, after the refresh: not a holder any more, on either client.
        for client in [other, c] {
            let again = client.call(na_get_access_token, ["scopes": [.string(scope)], "force_refresh": true])
            #expect(again.rc == NA_OK, "\(again.doc.serialized())")
        }
        #expect(lockIsFree(path))
    }
}

/// Another spelling of a cache file's path.
private enum FileTokenStoreSpelling {
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}
