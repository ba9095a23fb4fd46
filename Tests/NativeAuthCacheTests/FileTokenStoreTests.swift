import Glibc
import NativeAuthCore
import NativeAuthCrypto
import NativeAuthJSON
import Synchronization
import Testing

@testable import NativeAuthCache

/// A fresh private directory for one test.
final class TempDir {
    let path: String
    init() {
        var template = Array("/tmp/nativeauth-cache-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }
    deinit { _ = system("rm -rf '\(path)'") }
    var file: String { path + "/cache.json" }
}

let env = "contoso.ciamlogin.com"
let client = "11112222-3333-4444-5555-666677778888"
let tenant = "aaaabbbb-0000-cccc-1111-dddd2222eeee"

func fakeJWT(_ claims: JSONValue) -> String {
    let header: JSONValue = ["alg": "none", "typ": "JWT"]
    return Base64.urlEncode(header.serializedBytes() ?? []) + "." + Base64.urlEncode(claims.serializedBytes() ?? [])
        + ".sig"
}

func makeEntry(_ n: Int, scopes: [[String]] = [["api://x/Read"]], now: Double = 1_900_000_000) -> AccountEntry {
    let oid = "0000000\(n)-0000-0000-0000-000000000000"
    let claims: JSONValue = [
        "oid": .string(oid), "tid": .string(tenant), "preferred_username": .string("user\(n)@contoso.com"),
        "sub": "s",
    ]
    let account = Account(
        homeAccountID: "\(oid).\(tenant)",
        username: "user\(n)@contoso.com",
        tenantID: tenant,
        environment: env,
        idToken: fakeJWT(claims),
        claims: claims,
        realm: tenant
    )
    var entry = AccountEntry(account: account, refreshToken: RefreshToken(Secret("RT-\(n)")))
    entry.signInScopes = scopes.first ?? []
    for (i, s) in scopes.enumerated() {
        entry.store(
            AccessToken(
                value: Secret("AT-\(n)-\(i)"),
                scopes: s + ["openid", "profile", "offline_access"],
                expiresOn: now + 3600,
                refreshOn: nil,
                cachedAt: now,
                extExpiresOn: now + 7200
            )
        )
    }
    return entry
}

func store(_ dir: TempDir, key: Secret? = nil, path: String? = nil) -> FileTokenStore {
    FileTokenStore(path: path ?? dir.file, environment: env, clientID: client, key: key, logger: Logger())
}

func readJSON(_ path: String) throws -> JSONValue {
    guard let f = fopen(path, "rb") else { throw NativeAuthError(.cacheUnreadable, "no file") }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        bytes += buf[0..<n]
    }
    return try JSONValue.parse(bytes)
}

func writeFile(_ path: String, _ text: String, mode: mode_t = 0o600) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
    _ = text.withCString { write(fd, $0, strlen($0)) }
    fchmod(fd, mode)
    close(fd)
}

func fileMode(_ path: String) -> mode_t {
    var st = stat()
    stat(path, &st)
    return st.st_mode & 0o7777
}

func entries(_ dir: String, prefix: String) -> [String] {
    guard let d = opendir(dir) else { return [] }
    defer { closedir(d) }
    var out: [String] = []
    while let e = readdir(d) {
        let name = withUnsafeBytes(of: e.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
        if name.hasPrefix(prefix) { out.append(name) }
    }
    return out
}

@Suite struct FileTokenStoreTests {
    @Test func writesMSALsUnifiedFormatAndReadsItBack() throws {
        let dir = TempDir()
        let a = store(dir)
        #expect(try a.load().isEmpty)
        let entry = makeEntry(1, scopes: [["api://x/Write", "api://x/Read"], ["api://y/Notes"]])
        let outcome = a.modify(current: [:]) { $0[entry.account.homeAccountID] = entry }
        #expect(outcome.writeError == nil)
        #expect(fileMode(dir.file) == 0o600)

        let doc = try readJSON(dir.file)
        let home = entry.account.homeAccountID
        let atKey =
            "\(home)-\(env)-accesstoken-\(client)-\(tenant)-api://x/read api://x/write offline_access openid profile"
        let at = try #require(doc["AccessToken"]?[atKey])
        #expect(at["credential_type"] == "AccessToken")
        #expect(at["secret"] == "AT-1-0")
        #expect(at["target"] == "api://x/Read api://x/Write offline_access openid profile")
        #expect(at["cached_at"] == "1900000000")
        #expect(at["expires_on"] == "1900003600")
        #expect(at["extended_expires_on"] == "1900007200")
        #expect(at["token_type"] == "Bearer")
        #expect(at["realm"] == .string(tenant))
        let rtKey = "\(home)-\(env)-refreshtoken-\(client)--api://x/read api://x/write offline_access openid profile"
        #expect(doc["RefreshToken"]?[rtKey]?["secret"] == "RT-1")
        #expect(doc["IdToken"]?["\(home)-\(env)-idtoken-\(client)-\(tenant)-"]?["secret"] != nil)
        let account = try #require(doc["Account"]?["\(home)-\(env)-\(tenant)"])
        #expect(account["authority_type"] == "MSSTS")
        #expect(account["username"] == "user1@contoso.com")
        #expect(account["local_account_id"] == "00000001-0000-0000-0000-000000000000")
        #expect(doc["AppMetadata"]?["appmetadata-\(env)-\(client)"]?["client_id"] == .string(client))

        let b = store(dir)
        let loaded = try b.load()
        let e = try #require(loaded[home])
        #expect(e.account == entry.account)
        #expect(e.refreshToken == entry.refreshToken)
        #expect(e.signInScopes == entry.signInScopes)
        #expect(Set(e.accessTokens.keys) == Set(entry.accessTokens.keys))
        for (k, t) in entry.accessTokens {
            let u = try #require(e.accessTokens[k])
            #expect(u.value == t.value && u.expiresOn == t.expiresOn && u.extExpiresOn == t.extExpiresOn)
        }
    }

    @Test func keepsWhatItDoesNotUnderstand() throws {
        let dir = TempDir()
        let entry = makeEntry(1)
        let home = entry.account.homeAccountID
        _ = store(dir).modify(current: [:]) { $0[home] = entry }
        // Another client's tokens, another SDK's fields and sections.
        var doc = try readJSON(dir.file).objectValue ?? [:]
        var rts = doc["RefreshToken"]?.objectValue ?? [:]
        let rtKey = try #require(rts.keys.first)
        var rt = rts[rtKey]?.objectValue ?? [:]
        rt["other_sdk_field"] = ["nested": true]
        rts[rtKey] = .object(rt)
        rts["x-\(env)-refreshtoken-other-client--"] = [
            "credential_type": "RefreshToken", "secret": "OTHER", "home_account_id": "x", "environment": .string(env),
            "client_id": "other-client",
        ]
        doc["RefreshToken"] = .object(rts)
        doc["FutureSection"] = ["k": ["v": 1]]
        doc["version"] = 3
        writeFile(dir.file, JSONValue.object(doc).serialized())

        let s = store(dir)
        let loaded = try s.load()
        #expect(loaded.count == 1)
        var rotated = try #require(loaded[home])
        rotated.refreshToken = RefreshToken(Secret("RT-rotated"))
        #expect(s.modify(current: loaded) { $0[home] = rotated }.writeError == nil)

        let after = try readJSON(dir.file)
        #expect(after["RefreshToken"]?[rtKey]?["secret"] == "RT-rotated")
        #expect(after["RefreshToken"]?[rtKey]?["other_sdk_field"] == ["nested": true])
        #expect(after["RefreshToken"]?[rtKey]?["last_modification_time"] != nil)
        #expect(after["RefreshToken"]?["x-\(env)-refreshtoken-other-client--"]?["secret"] == "OTHER")
        #expect(after["FutureSection"] == ["k": ["v": 1]])
        #expect(after["version"] == 3)
    }

    @Test func signOutRemovesOnlyThatAccount() throws {
        let dir = TempDir()
        let s = store(dir)
        let one = makeEntry(1)
        let two = makeEntry(2)
        _ = s.modify(current: [:]) {
            $0[one.account.homeAccountID] = one
            $0[two.account.homeAccountID] = two
        }
        let outcome = s.modify(current: try s.load()) { $0[one.account.homeAccountID] = nil }
        #expect(outcome.writeError == nil)
        let doc = try readJSON(dir.file)
        for section in ["AccessToken", "RefreshToken", "IdToken", "Account"] {
            let keys = doc[section]?.objectValue?.keys.map { $0 } ?? []
            #expect(keys.count == 1, "\(section)")
            #expect(keys.allSatisfy { $0.hasPrefix(two.account.homeAccountID) })
        }
        #expect(Array(try store(dir).load().keys) == [two.account.homeAccountID])
    }

    @Test func twoWritersLoseNothing() throws {
        let dir = TempDir()
        let a = store(dir)
        let b = store(dir)
        var viewA = try a.load()
        var viewB = try b.load()
        for i in 0..<40 {
            let ea = makeEntry(1000 + i)
            viewA = a.modify(current: viewA) { $0[ea.account.homeAccountID] = ea }.accounts
            let eb = makeEntry(2000 + i)
            viewB = b.modify(current: viewB) { $0[eb.account.homeAccountID] = eb }.accounts
        }
        #expect(try store(dir).load().count == 80)
    }

    @Test func aCorruptFileIsKeptAsideAndReadAsEmpty() throws {
        let dir = TempDir()
        writeFile(dir.file, "{\"AccessToken\": {\"trunc")
        let s = store(dir)
        #expect(try s.load().isEmpty)
        #expect(entries(dir.path, prefix: "cache.json.corrupt-").count == 1)
        let entry = makeEntry(1)
        #expect(s.modify(current: [:]) { $0[entry.account.homeAccountID] = entry }.writeError == nil)
        #expect(try store(dir).load().count == 1)
        // An empty file is an empty cache (as MSAL for Python reads it), not a corrupt one.
        writeFile(dir.file, "")
        #expect(try store(dir).load().isEmpty)
        #expect(entries(dir.path, prefix: "cache.json.corrupt-").count == 1)
    }

    @Test func aCorruptFileFoundAtStartIsReportedOnceWhenTheHostCanListen() throws {
        let dir = TempDir()
        writeFile(dir.file, "not json")
        let lines = Mutex<[String]>([])
        let logger = Logger(level: .warning, sink: { _, line, _ in lines.withLock { $0.append(line) } })
        let s = FileTokenStore(path: dir.file, environment: env, clientID: client, logger: logger)
        #expect(try s.load().isEmpty)  // while the client is created: held back
        #expect(lines.withLock { $0 }.isEmpty)
        s.checkForChanges()
        s.checkForChanges()
        let logged = lines.withLock { $0 }
        #expect(logged.count == 1)
        #expect(logged.first?.contains("kept aside as cache.json.corrupt-") == true)
        #expect(logged.first?.contains(dir.path) == false)
    }

    @Test func encryptionRoundTripWrongKeyAndTampering() throws {
        let dir = TempDir()
        let keyBytes = [UInt8](repeating: 7, count: 32)
        let goodKey = keyBytes.withUnsafeBytes { Secret(bytes: $0) }
        let entry = makeEntry(1)
        #expect(
            store(dir, key: goodKey).modify(current: [:]) { $0[entry.account.homeAccountID] = entry }.writeError
                == nil
        )
        // Not JSON on disk, and no token in the clear.
        let raw = try #require(readBytes(dir.file))
        #expect(Array(raw.prefix(4)) == Array("NACE".utf8))
        #expect(!String(decoding: raw, as: UTF8.self).contains("RT-1"))
        #expect(try store(dir, key: goodKey).load().count == 1)

        let otherKey = [UInt8](repeating: 8, count: 32).withUnsafeBytes { Secret(bytes: $0) }
        #expect(throws: NativeAuthError.self) { try store(dir, key: otherKey).load() }
        do { _ = try store(dir, key: otherKey).load() } catch { #expect(error.code == .cacheKeyInvalid) }
        do { _ = try store(dir).load() } catch { #expect(error.code == .cacheKeyInvalid) }
        // A change with the wrong key is kept in memory; the file is never replaced.
        let wrong = store(dir, key: otherKey)
        let outcome = wrong.modify(current: [:]) { $0["x"] = makeEntry(9) }
        #expect(outcome.writeError?.code == .cacheKeyInvalid)
        #expect(try readBytes(dir.file) == raw)

        // One flipped byte anywhere is detected.
        for offset in [5, 20, raw.count / 2, raw.count - 1] {
            var flipped = raw
            flipped[offset] ^= 0x01
            writeBytes(dir.file, flipped)
            do {
                _ = try store(dir, key: goodKey).load()
                Issue.record("a flipped byte at \(offset) was not detected")
            } catch { #expect(error.code == .cacheKeyInvalid) }
        }
    }

    @Test func insecureFilesAreRefused() throws {
        let dir = TempDir()
        writeFile(dir.file, "{}", mode: 0o666)
        do {
            _ = try store(dir).load()
            Issue.record("a world-writable file was used")
        } catch { #expect(error.code == .cacheInsecure) }
        if geteuid() == 0 {
            writeFile(dir.file, "{}", mode: 0o644)
            chown(dir.file, 65534, 65534)
            do {
                _ = try store(dir).load()
                Issue.record("a file owned by another user was used")
            } catch { #expect(error.code == .cacheInsecure) }
            // A change is kept in memory and refused on disk, with the same code.
            let outcome = store(dir).modify(current: [:]) { $0["x"] = makeEntry(3) }
            #expect(outcome.writeError?.code == .cacheInsecure)
            #expect(outcome.accounts["x"] != nil)
        }
        // A directory others can write to is refused.
        let open = TempDir()
        chmod(open.path, 0o777)
        do {
            _ = try store(open).load()
            Issue.record("a world-writable directory was used")
        } catch { #expect(error.code == .cacheInsecure) }
    }

    @Test func aDirectoryInTheFilesPlaceKeepsChangesInMemory() throws {
        let dir = TempDir()
        mkdir(dir.file, 0o700)
        let s = store(dir)
        #expect(try s.load().isEmpty)
        #expect(s.problem == .cacheUnreadable)
        let entry = makeEntry(1)
        let outcome = s.modify(current: [:]) { $0[entry.account.homeAccountID] = entry }
        #expect(outcome.writeError?.code == .cacheUnreadable)
        #expect(outcome.accounts.count == 1)
        // The change stays in memory (a reload keeps it), and reaches the file once it can be written.
        #expect(try s.load().count == 1)
        rmdir(dir.file)
        let next = makeEntry(2)
        let retried = s.modify(current: outcome.accounts) { $0[next.account.homeAccountID] = next }
        #expect(retried.writeError == nil)
        #expect(try store(dir).load().count == 2)
    }

    @Test func aFullDiskKeepsChangesInMemory() throws {
        let dir = TempDir()
        let small = dir.path + "/small"
        mkdir(small, 0o700)
        guard system("mount -t tmpfs -o size=8k,mode=0700 tmpfs '\(small)' 2>/dev/null") == 0 else {
            // No tmpfs here: `FileTokenStoreTests` in the C ABI tests cover a simulated write failure instead.
            return
        }
        defer { _ = system("umount '\(small)'") }
        let s = store(dir, path: small + "/cache.json")
        let big = makeEntry(1, scopes: (0..<40).map { ["api://x/Scope\($0)-" + String(repeating: "x", count: 200)] })
        let outcome = s.modify(current: [:]) { $0[big.account.homeAccountID] = big }
        #expect(outcome.writeError?.code == .cacheWriteFailed)
        #expect(outcome.writeError?.message.contains("disk is full") == true)
        #expect(outcome.accounts.count == 1)
        #expect(entries(small, prefix: "cache.json.tmp").isEmpty)  // no temporary file left behind
        #expect(try s.load().count == 1)
    }
}

func readBytes(_ path: String) -> [UInt8]? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        bytes += buf[0..<n]
    }
    return bytes
}

func writeBytes(_ path: String, _ bytes: [UInt8]) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
}
