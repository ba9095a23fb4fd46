import Foundation
import NativeAuthJSON
import Testing

@testable import NativeAuthCABI

/// Findings 3 and 7 of issue 18, through the C ABI: a huge cache file is refused without an allocation of its size,
/// and corrupt files are set aside privately, a few at most.
@Suite struct CacheFileHardeningTests {
    private func directory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-hardening-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        _ = chmod(dir.path, 0o700)
        return dir
    }

    private func client(_ path: String) throws -> (OpaquePointer?, JSONValue) {
        let config: JSONValue = [
            "tenant_subdomain": "contoso", "client_id": "c1", "cache": ["type": "file", "path": .string(path)],
        ]
        var h: OpaquePointer? = nil
        var err: UnsafeMutablePointer<CChar>? = nil
        let rc = na_client_new(config.serialized(), &h, &err)
        defer { na_string_free(err) }
        guard rc == 0 else { throw TestFailure("na_client_new: \(err.map { String(cString: $0) } ?? "")") }
        var out: UnsafeMutablePointer<CChar>? = nil
        defer { na_string_free(out) }
        _ = na_client_info(h, "{}", &out)
        return (h, try JSONValue.parse(out.map { String(cString: $0) } ?? "null"))
    }

    /// A 100 GiB sparse cache file (it takes no disk space) is `cache_unreadable`: the client starts empty and works
    /// from memory, and the host process is not aborted by an allocation of that size.
    @Test func aHugeCacheFileIsRefused() throws {
        let dir = try directory()
        let path = dir.appendingPathComponent("cache.json").path
        let fd = open(path, O_WRONLY | O_CREAT, 0o600)
        #expect(fd >= 0)
        #expect(ftruncate(fd, 100 << 30) == 0)
        close(fd)
        let (h, info) = try client(path)
        defer { na_client_free(h) }
        #expect(info["config"]?["cache"]?["problem"] == "cache_unreadable", "\(info.serialized())")
        var out: UnsafeMutablePointer<CChar>? = nil
        defer { na_string_free(out) }
        #expect(na_get_account(h, "{}", &out) == NAStatus.notFound.rawValue)
        // The file is left as it was: never overwritten.
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_size == 100 << 30)
    }

    /// A corrupt cache file is set aside 0600 (it may hold tokens, and it kept its old mode), and only the newest
    /// three set-aside files are kept.
    @Test func corruptFilesAreSetAsidePrivatelyAndAFewAtMost() throws {
        let dir = try directory()
        let path = dir.appendingPathComponent("cache.json").path
        for round in 0..<5 {
            try Data("{ this is not JSON \(round)".utf8).write(to: URL(fileURLWithPath: path))
            #expect(chmod(path, 0o644) == 0)  // readable by others: still read (and rewritten 0600 on write)
            let (h, _) = try client(path)
            na_client_free(h)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            .filter { $0.hasPrefix("cache.json.corrupt-") }
        #expect(names.count == 3, "\(names)")
        for name in names {
            let mode =
                try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent(name).path)[
                    .posixPermissions
                ] as? Int
            #expect(mode == 0o600, "\(name): \(String(mode ?? 0, radix: 8))")
        }
        // The newest is kept: it holds the last round's text.
        let texts = try names.map {
            String(decoding: try Data(contentsOf: dir.appendingPathComponent($0)), as: UTF8.self)
        }
        #expect(texts.contains { $0.hasSuffix(" 4") })
    }
}
