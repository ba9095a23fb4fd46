internal import Glibc
public import NativeAuthCore
internal import NativeAuthJSON
import Synchronization

/// The persistent token store: MSAL's unified token cache in one file, shared with other processes (this library in
/// other programs, MSAL for Python, msal-extensions) under an advisory lock.
///
/// - Every change is a read-modify-write under `flock` on `<path>.lockfile`: the file is re-read (unless it is the one
///   this store last read or wrote: same inode, size and modification time), the change applied to what it holds, and
///   the result written to a temporary file in the same directory, fsync'd and renamed into place. Two processes
///   never lose each other's entries, and a writer killed at any point leaves the previous file or the new one.
/// - A lookup never touches the file: `checkForChanges()` (called by the cache on slow paths) compares the file's
///   inode, size and modification time with the last ones seen and moves `changeCounter`, and the cache reloads.
/// - A file that is not a JSON object (or fails to decrypt-and-parse as one) is corrupt: it is kept aside as
///   `<path>.corrupt-<epoch seconds>`, reported once through the log, and read as empty.
/// - With a key, a plaintext file is refused (`cache_key_invalid`), never read nor sealed, unless `migratePlaintext`.
/// - A change that cannot be written (permissions, disk full, read-only, unreadable file) is kept in memory, answered
///   as the call's error, and written with the next change that can be.
public final class FileTokenStore: TokenStore {
    public let path: String
    let lockPath: String
    let format: MSALCacheFormat
    let owner: EntryOwner
    let encryption: CacheEncryption?
    let logger: Logger
    /// Whether a plaintext file found where the encrypted one should be is read once and encrypted (see
    /// `FileTokenStore+Keys.swift`); without it such a file is refused.
    let migratePlaintext: Bool
    private let counter = Atomic<UInt64>(0)
    let state: Mutex<State>

    struct State: Sendable {
        /// The file the document below came from (nil: there was none).
        var signature: FileSignature?
        var document = MSALCacheFormat.Document()
        /// The document's accounts.
        var view: [String: AccountEntry] = [:]
        /// Changes kept in memory that the file does not have yet (nil: the account was removed).
        var pending: [String: AccountEntry?] = [:]
        /// The signature `changeCounter` last moved for.
        var announced: FileSignature?
        /// Problems already logged (each is reported once).
        var reported: Set<String> = []
        /// Lines found before the host could install a log callback (while the client was being created).
        var deferred: [(LogLevel, String)] = []
        var starting = true
        /// The last problem with the file, for `na_client_info` (nil once a read or write succeeds).
        var problem: NativeAuthError.Code?
        /// What the next token or account call answers once (`takeNotice`): the file was set aside because its key
        /// left the key store.
        var notice: NativeAuthError?
        /// Room reserved for a thread's next write (`reserveWrite`), by thread.
        var reserved: [UInt: CacheReservation] = [:]
    }

    /// - Parameters:
    ///   - path: an absolute path.
    ///   - environment: the authority's host (MSAL's `environment`); `clientID` the app's client id.
    ///   - key: a 32-byte AES-256-GCM key for encryption at rest, or nil.
    /// - Parameters:
    ///   - keyStore: the name of the key store `key` came from (`"secret_service"`, `"kernel_keyring"`), when it
    ///     came from one: a file this key does not open is then set aside and the cache starts empty (the file's
    ///     key left the store: a deleted item, a reset keyring, a reboot), where a host's own key makes it an error.
    ///   - migratePlaintext: with a key, a plaintext file is read once and replaced by its encrypted version (and
    ///     that is logged); without it, a plaintext file is `cache_key_invalid` and left as it is.
    public init(
        path: String,
        environment: String,
        clientID: String,
        key: Secret? = nil,
        keyStore: String? = nil,
        migratePlaintext: Bool = false,
        logger: Logger
    ) {
        self.migratePlaintext = migratePlaintext
        self.keyStore = keyStore
        self.path = path
        self.lockPath = path + ".lockfile"
        self.format = MSALCacheFormat(environment: environment, clientID: clientID)
        self.owner = format.owner
        self.encryption = key.map(CacheEncryption.init)
        self.logger = logger
        self.state = Mutex(State())
    }

    public var isEncrypted: Bool { encryption != nil }

    /// Where the key came from (`"secret_service"`, `"kernel_keyring"`), when a key store holds it.
    public let keyStore: String?

    /// The notice the next token or account call answers, once (see `TokenStore.takeNotice`).
    public func takeNotice() -> NativeAuthError? {
        state.withLock { s in
            defer { s.notice = nil }
            return s.notice
        }
    }

    /// The last problem with the file (an error code), or nil.
    public var problem: NativeAuthError.Code? { state.withLock { $0.problem } }

    /// Read on every cached-token call. At most once a second (per store, so per client) it also looks at the
    /// file's signature (one `stat`): a sign-out or a sign-in in another process reaches this client's cache hits
    /// within a second. Every other read is a clock read (the coarse monotonic clock, no system call) and an atomic
    /// load.
    public var changeCounter: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &ts)
        let now = Int64(ts.tv_sec) &* 1_000_000_000 &+ Int64(ts.tv_nsec)
        let due = nextLook.load(ordering: .relaxed)
        if now >= due,
            nextLook.compareExchange(expected: due, desired: now &+ Self.lookInterval, ordering: .relaxed).exchanged
        {
            lookAtFile()
        }
        return counter.load(ordering: .acquiring)
    }

    /// Nanoseconds between two looks at the file from the cache-hit path.
    static let lookInterval: Int64 = 1_000_000_000
    /// When (CLOCK_MONOTONIC_COARSE nanoseconds) the cache-hit path looks at the file next.
    private let nextLook = Atomic<Int64>(0)

    /// The cache-hit path's look: moves `changeCounter` if the file is not the one last read or written. It never
    /// waits: when another thread is reading or writing the file, that thread brings the state up to date itself.
    private func lookAtFile() {
        let now = FileSignature.of(path)
        state.withLockIfAvailable { s in
            guard now != s.signature, now != s.announced else { return }
            s.announced = now
            counter.add(1, ordering: .releasing)
        }
    }

    /// The default path: `$XDG_CACHE_HOME/nativeauth/token_cache.json`, `$HOME/.cache/…` when it is unset.
    public static func defaultPath(environment: (String) -> String?) -> String? {
        if let xdg = environment("XDG_CACHE_HOME"), xdg.hasPrefix("/") { return xdg + "/nativeauth/token_cache.json" }
        var home = environment("HOME")
        if home == nil || home?.hasPrefix("/") != true, let pw = getpwuid(geteuid()), let dir = pw.pointee.pw_dir {
            home = String(cString: dir)
        }
        guard let home, home.hasPrefix("/") else { return nil }
        return (home == "/" ? "" : home) + "/.cache/nativeauth/token_cache.json"
    }

    // MARK: - TokenStore

    public func load() throws(NativeAuthError) -> [String: AccountEntry] {
        try Logger.holdingLines { () throws(NativeAuthError) -> [String: AccountEntry] in try loadLocked() }
    }

    private func loadLocked() throws(NativeAuthError) -> [String: AccountEntry] {
        let result = state.withLock { s -> Result<[String: AccountEntry], NativeAuthError> in
            defer { flush(&s) }
            do throws(NativeAuthError) {
                try refresh(&s, locked: false)
            } catch {
                switch error.code {
                case .cacheInsecure, .cacheKeyInvalid:
                    s.problem = error.code
                    return .failure(error)
                default:
                    // Unreadable: the client works from memory (what it holds, and changes it could not write).
                    s.problem = error.code
                    report(&s, .warning, error.code.rawValue, "\(error.message) The client keeps its tokens in memory.")
                    s.signature = nil
                    s.document = MSALCacheFormat.Document()
                    s.view = [:]
                }
            }
            return .success(Self.overlay(s.view, s.pending))
        }
        return try result.get()
    }

    public func checkForChanges() {
        let now = FileSignature.of(path)
        Logger.holdingLines { checkLocked(now) }
    }

    private func checkLocked(_ now: FileSignature?) {
        state.withLock { s in
            flush(&s)
            guard now != s.signature, now != s.announced else { return }
            s.announced = now
            counter.add(1, ordering: .releasing)
        }
    }

    public func modify(
        current: [String: AccountEntry],
        _ change: (inout [String: AccountEntry]) -> Void
    ) -> StoreOutcome {
        Logger.holdingLines { modifyLocked(current: current, change) }
    }

    private func modifyLocked(
        current: [String: AccountEntry],
        _ change: (inout [String: AccountEntry]) -> Void
    ) -> StoreOutcome {
        state.withLock { s -> StoreOutcome in
            defer { flush(&s) }
            /// The change on the client's own view, kept in memory with `why` as the call's error.
            func inMemory(_ why: NativeAuthError) -> StoreOutcome {
                var accounts = current
                change(&accounts)
                for id in MSALCacheFormat.changed(current, accounts) { s.pending[id] = .some(accounts[id]) }
                s.problem = why.code
                report(&s, .warning, "write:" + why.code.rawValue, "\(why.message) The change is kept in memory.")
                return StoreOutcome(accounts: accounts, writeError: why)
            }
            do throws(NativeAuthError) {
                try FileTokenStore.Files.makeDirectories(FileTokenStore.Files.directory(of: path))
            } catch {
                return inMemory(error)
            }
            let lock: CacheLock
            do throws(NativeAuthError) { lock = try CacheLock(lockPath) } catch { return inMemory(error) }
            defer { lock.release() }
            do throws(NativeAuthError) {
                try refresh(&s, locked: true)
            } catch {
                return inMemory(error)
            }
            var accounts = Self.overlay(s.view, s.pending)
            change(&accounts)
            let ids = MSALCacheFormat.changed(s.view, accounts)
            guard !ids.isEmpty else {
                s.pending = [:]
                return StoreOutcome(accounts: accounts)
            }
            var document = s.document
            format.apply(accounts, ids: ids, to: &document, now: Double(time(nil)))
            FileTokenStore.Files.removeStaleTemporaries(path)
            do throws(NativeAuthError) {
                let signature = try write(document, into: s.reserved.removeValue(forKey: Self.thisThread))
                s.signature = signature
                s.announced = nil
                s.document = document
                s.view = accounts
                s.pending = [:]
                s.problem = nil
                return StoreOutcome(accounts: accounts)
            } catch {
                for id in ids { s.pending[id] = .some(accounts[id]) }
                s.problem = error.code
                report(&s, .warning, "write:" + error.code.rawValue, "\(error.message) The change is kept in memory.")
                return StoreOutcome(accounts: accounts, writeError: error)
            }
        }
    }

    /// The exclusive refresh lock: `flock` on `<path>.refresh-lock`, which every process using this cache file takes
    /// around a refresh-token grant (see `TokenStore.acquireRefreshLock`). It is a file of its own, not the write
    /// lock (`<path>.lockfile`), because it is held across a network request while writes (this process's own among
    /// them) go on; and it is never removed, so every process always locks the same file. A process that dies holding
    /// it (even by SIGKILL) releases it with its file descriptors. When the lock file cannot be opened (a read-only
    /// directory), the refresh goes ahead unlocked: what it rotates could not be written for others anyway.
    public func acquireRefreshLock(
        deadline: Double,
        isCancelled: () -> Bool
    ) throws(NativeAuthError) -> any RefreshLockHold {
        let lockPath = refreshLockPath
        let made = Result { () throws(NativeAuthError) in
            try FileTokenStore.Files.makeDirectories(FileTokenStore.Files.directory(of: path))
        }
        // The thread's note names the lock file by its canonical path: clients naming one cache file differently
        // (relative, `.`/`..`, a symbolic link to its directory) share its lock, so they share the note too — else
        // a callback's call through the other client would wait for its own thread until its deadline.
        let spelled = lockPath.contains("/") ? lockPath : "./" + lockPath
        let note = CacheKeyLocation.canonicalPath(spelled) ?? lockPath
        guard !HeldRefreshLocks.holds(note) else { throw Self.reentrant() }
        let lock: RefreshLock?
        do {
            try made.get()
            lock = try RefreshLock(lockPath, deadline: deadline, isCancelled: isCancelled) {
                logger.log(.info, "token cache: waiting for another process's token refresh")
            }
        } catch {
            guard error.code == .cacheWriteFailed else { throw error }
            Logger.holdingLines {
                state.withLock { s in
                    let message = "\(error.message) Refreshes are not serialised with other processes."
                    report(&s, .warning, "refresh-lock", message)
                }
            }
            lock = nil
        }
        return RefreshLockHeld(note, lock)
    }

    var refreshLockPath: String { path + ".refresh-lock" }

    static func reentrant() -> NativeAuthError {
        NativeAuthError(
            .reentrantCall,
            "This call was made from inside a callback on the thread that holds the token cache's refresh lock; it "
                + "would wait for itself. Call again after the callback returned."
        )
    }

    // MARK: - Reading and writing

    /// `view` with the changes kept in memory laid over it.
    private static func overlay(
        _ view: [String: AccountEntry],
        _ pending: [String: AccountEntry?]
    ) -> [String: AccountEntry] {
        guard !pending.isEmpty else { return view }
        var out = view
        for (id, entry) in pending { out[id] = entry }
        return out
    }

    /// Brings `s` up to the file: re-reads it unless it is the one last read or written. A corrupt file is set aside
    /// (under the lock; without it, the lock is taken for that) and reads as empty.
    private func refresh(_ s: inout State, locked: Bool) throws(NativeAuthError) {
        // The file this store last read or wrote (same inode, size, times, mode and owner) is not read again.
        if let known = s.signature, FileSignature.of(path) == known { return }
        var attempts = 0
        while true {
            attempts += 1
            var readableByOthers = false
            let read = try FileTokenStore.Files.read(path, readableByOthers: &readableByOthers)
            guard case .contents(let bytes, let signature) = read else {
                s.signature = nil
                s.document = MSALCacheFormat.Document()
                s.view = [:]
                s.problem = nil
                return
            }
            if signature == s.signature { return }
            if isEncrypted && Self.isPlaintext(bytes.buffer) {
                try readPlaintext(&s, signature, locked: locked)
                return
            }
            if readableByOthers {
                report(
                    &s,
                    .warning,
                    "mode",
                    "The token cache file is readable by other users; the next write makes it 0600."
                )
            }
            let parsed: MSALCacheFormat.Document?
            do { parsed = try parse(bytes) } catch {
                guard error.code == .cacheKeyInvalid, keyStore != nil else { throw error }
                try setAsideLost(&s, signature, locked: locked)
                return
            }
            if let document = parsed {
                s.signature = signature
                s.announced = nil
                s.document = document
                s.view = format.accounts(in: document)
                s.problem = nil
                return
            }
            // Not a JSON object. A writer that rewrites the file in place (MSAL for Python's own recipe) may be half
            // way through: look again shortly, and set the file aside only when it stays the same.
            if attempts < 3 {
                usleep(30_000)
                if FileSignature.of(path) != signature { continue }
            }
            if !locked {
                let lock: CacheLock
                do throws(NativeAuthError) { lock = try CacheLock(lockPath) } catch {
                    throw NativeAuthError(.cacheUnreadable, "The token cache file is corrupt and could not be locked.")
                }
                defer { lock.release() }
                try refreshCorrupt(&s, signature)
                return
            }
            try refreshCorrupt(&s, signature)
            return
        }
    }

    /// Under the lock: sets a corrupt file aside (unless it changed meanwhile: then it is read again).
    func refreshCorrupt(_ s: inout State, _ signature: FileSignature) throws(NativeAuthError) {
        if FileSignature.of(path) != signature {
            var readableByOthers = false
            if case .contents(let bytes, let sig) = try FileTokenStore.Files.read(
                path,
                readableByOthers: &readableByOthers
            ) {
                if let document = try parse(bytes) {
                    s.signature = sig
                    s.document = document
                    s.view = format.accounts(in: document)
                    return
                }
            }
        }
        guard let aside = FileTokenStore.Files.setAside(path) else {
            throw NativeAuthError(.cacheUnreadable, "The token cache file is corrupt and could not be set aside.")
        }
        let name = aside.split(separator: "/").last.map(String.init) ?? aside
        report(
            &s,
            .warning,
            "corrupt:\(name)",
            "The token cache file was corrupt; it was kept aside as \(name) and the cache starts empty."
        )
        s.signature = nil
        s.document = MSALCacheFormat.Document()
        s.view = [:]
    }

    /// The document in `bytes` (decrypted first when it is sealed); nil when it is not a JSON object. An empty file
    /// is an empty cache, as MSAL for Python reads it. With a key, a plaintext file is `cache_key_invalid`.
    func parse(_ source: SourceBytes) throws(NativeAuthError) -> MSALCacheFormat.Document? {
        let bytes = source.buffer
        if Self.isBlank(bytes) { return MSALCacheFormat.Document() }
        guard CacheEncryption.isSealed(bytes) else {
            guard encryption == nil else { throw plaintextRefused() }
            return MSALCacheFormat.Document(parsing: source, owner: owner)
        }
        guard let encryption else {
            throw NativeAuthError(.cacheKeyInvalid, "The token cache file is encrypted and no key is configured.")
        }
        return MSALCacheFormat.Document(parsing: try encryption.open(bytes), owner: owner)
    }

    // MARK: - Reporting

    /// Logs a problem once (per `id`); lines found while the client is being created wait for the next call, when
    /// the host has had the chance to install its log callback.
    func report(_ s: inout State, _ level: LogLevel, _ id: String, _ message: String) {
        guard s.reported.insert(id).inserted else { return }
        if s.starting {
            s.deferred.append((level, message))
        } else {
            logger.log(level, "token cache: \(message)")
        }
    }

    private func flush(_ s: inout State) {
        if s.starting {
            s.starting = false
            return
        }
        guard !s.deferred.isEmpty else { return }
        let lines = s.deferred
        s.deferred = []
        for (level, message) in lines { logger.log(level, "token cache: \(message)") }
    }
}
