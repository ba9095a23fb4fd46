internal import Glibc
internal import NativeAuthCore

/// What `CacheKeyring` needs to know about a cache file before it asks the key stores: the name its key is kept
/// under (the canonical path), which store held the key last time (a note beside the file), and which key sealed the
/// file (the key id in its header). None of it is secret, and none of it is trusted for more than the order in which
/// the stores are asked and which of the keys found opens the file: the key itself always comes from a store.
enum CacheKeyLocation {
    /// The name a cache file's key is kept under: the real directory (symbolic links, `.` and `..` resolved) and the
    /// file's own name — the same file reached through a symlinked home or another spelling of `XDG_CACHE_HOME` has
    /// the same key. Nil when the directory does not exist (yet): then there is no file either.
    static func canonicalPath(_ path: String) -> String? {
        let dir = FileTokenStore.Files.directory(of: path)
        guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let name = String(path[path.utf8.index(after: slash)...])
        guard !name.isEmpty, name != ".", name != "..", let resolved = realpath(dir, nil) else { return nil }
        defer { free(resolved) }
        let real = String(cString: resolved)
        guard real.hasPrefix("/") else { return nil }
        return (real == "/" ? "" : real) + "/" + name
    }

    /// The note that says which key store holds the key of the cache file at `path`: `<path>.key-store`, one line.
    static func hintPath(_ path: String) -> String { path + ".key-store" }

    /// The longest note read.
    static let maxHintBytes = 64

    /// The store the note beside `path` names, or nil (no note, or not one this user wrote: another owner, a
    /// symbolic link, not a regular file, writable by others, or not one of `names`).
    static func readHint(_ path: String, names: [String]) -> String? {
        let fd = open(hintPath(path), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_uid == geteuid(), st.st_mode & 0o022 == 0,
            st.st_size <= maxHintBytes
        else { return nil }
        var buffer = [UInt8](repeating: 0, count: maxHintBytes + 1)
        let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, maxHintBytes + 1) }
        guard n > 0, n <= maxHintBytes else { return nil }
        var text = String(decoding: buffer[0..<n], as: UTF8.self)
        while text.last == "\n" { text.removeLast() }
        return names.contains(text) ? text : nil
    }

    /// Notes that the key of `path` is kept in `store` (best effort: a note that cannot be written only costs the
    /// next process the order of the stores). Written only into a directory that may hold the cache.
    static func writeHint(_ path: String, store: String) {
        guard (try? FileTokenStore.Files.checkDirectory(FileTokenStore.Files.directory(of: path))) == true else {
            return
        }
        let fd = open(hintPath(path), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return }
        if st.st_mode & 0o077 != 0 { _ = fchmod(fd, 0o600) }
        let line = Array((store + "\n").utf8)
        _ = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    /// The key id in the header of the encrypted cache file at `path` (see `CacheEncryption`), or nil when there is
    /// no such file or it is not one (absent, plaintext, empty, not a regular file, a symbolic link).
    static func sealedKeyID(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let wanted = 5 + 8
        var header = [UInt8](repeating: 0, count: wanted)
        var got = 0
        while got < wanted {
            let n = header.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress.map { $0 + got }, wanted - got) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            got += n
        }
        guard got == wanted, header.withUnsafeBytes({ CacheEncryption.isSealed($0) }),
            header[4] == CacheEncryption.version
        else { return nil }
        return Array(header[5..<wanted])
    }
}
