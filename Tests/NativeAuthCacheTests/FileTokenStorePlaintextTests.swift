import Glibc
import NativeAuthCore
import Testing

@testable import NativeAuthCache

/// An encrypted cache and a plaintext file in its place (issue 28, defect 5).
@Suite struct FileTokenStorePlaintextTests {
    /// A plaintext cache file with one account, as a store without a key (or MSAL for Python) writes it.
    func plaintextFile(_ dir: TempDir) throws -> [UInt8] {
        let plain = store(dir)
        _ = try plain.load()
        let entry = makeEntry(1)
        #expect(plain.modify(current: [:]) { $0[entry.account.homeAccountID] = entry }.writeError == nil)
        return readBytes(dir.file) ?? []
    }

    @Test func aPlaintextFileIsNotReadNorSealedWithAKey() throws {
        let dir = TempDir()
        let planted = try plaintextFile(dir)
        #expect(planted.first == UInt8(ascii: "{"))
        let (key, _) = try randomSecret()
        let encrypted = store(dir, key: key)
        do {
            _ = try encrypted.load()
            Issue.record("a plaintext file was read by an encrypted cache")
        } catch {
            #expect(error.code == .cacheKeyInvalid)
            #expect(error.message.contains("plaintext") && error.message.contains("migrate_plaintext_cache"))
        }
        let entry = makeEntry(2)
        let outcome = encrypted.modify(current: [:]) { $0[entry.account.homeAccountID] = entry }
        #expect(outcome.writeError?.code == .cacheKeyInvalid)
        #expect(readBytes(dir.file) == planted, "left as it was")
        #expect(entries(dir.path, prefix: "cache.json.corrupt-").isEmpty)
    }

    @Test func migratePlaintextEncryptsItOnce() throws {
        let dir = TempDir()
        _ = try plaintextFile(dir)
        let (key, _) = try randomSecret()
        let migrating = FileTokenStore(
            path: dir.file,
            environment: env,
            clientID: client,
            key: key,
            migratePlaintext: true,
            logger: Logger()
        )
        #expect(try migrating.load().count == 1)
        #expect(readBytes(dir.file)?.starts(with: Array("NACE".utf8)) == true)
        #expect(try store(dir, key: key).load().count == 1)
    }

    @Test func anEmptyFileIsAFreshEncryptedCache() throws {
        let dir = TempDir()
        writeBytes(dir.file, Array(" \n".utf8))
        chmod(dir.file, 0o600)
        let (key, _) = try randomSecret()
        #expect(try store(dir, key: key).load().isEmpty)
    }
}

func randomSecret() throws -> (Secret, [UInt8]) {
    var bytes = [UInt8](repeating: 0, count: 32)
    for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255) }
    return (bytes.withUnsafeBytes { Secret(bytes: $0) }, bytes)
}
