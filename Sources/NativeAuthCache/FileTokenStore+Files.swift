internal import Glibc
internal import NativeAuthCore
internal import NativeAuthCrypto

/// What identifies one version of the cache file: a cooperating writer renames a new file into place (a new inode),
/// and a writer that rewrites in place changes its size or modification time.
struct FileSignature: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var seconds: Int
    var nanoseconds: Int
    var mode: UInt32
    var owner: UInt32

    init(_ st: stat) {
        device = UInt64(st.st_dev)
        inode = UInt64(st.st_ino)
        size = Int64(st.st_size)
        seconds = st.st_mtim.tv_sec
        nanoseconds = st.st_mtim.tv_nsec
        mode = st.st_mode
        owner = st.st_uid
    }

    /// The file at `path` now (nil when there is none, or it cannot be looked at).
    static func of(_ path: String) -> FileSignature? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return FileSignature(st)
    }
}

extension FileTokenStore {
    /// The file-system work of the file cache, in Glibc: reading with the ownership and mode checks, atomic replacement
    /// (temporary file in the same directory, fsync, rename, fsync of the directory), the advisory lock, and setting a
    /// corrupt file aside. Errors never name file contents.
    enum Files {
        /// What a read found.
        enum ReadResult {
            case missing
            case contents(SourceBytes, FileSignature)
        }

        static func errnoText(_ e: Int32) -> String {
            switch e {
            case ENOSPC, EDQUOT: return "the disk is full"
            case EACCES, EPERM: return "permission denied"
            case EROFS: return "the file system is read-only"
            case EISDIR, ENOTEMPTY, EEXIST: return "a directory is in the file's place"
            case ENOTDIR: return "a path component is not a directory"
            case ENOENT: return "the directory does not exist"
            case ELOOP: return "a symbolic link is in the file's place"
            case ENAMETOOLONG: return "the path is too long"
            case EIO: return "an I/O error"
            default: return "error \(e)"
            }
        }

        static func directory(of path: String) -> String {
            guard let slash = path.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "." }
            let dir = String(path[..<slash])
            return dir.isEmpty ? "/" : dir
        }

        /// The directory may hold the cache: owned by this user (or root) and writable by nobody else.
        static func checkDirectory(_ dir: String) throws(NativeAuthError) -> Bool {
            var st = stat()
            guard stat(dir, &st) == 0 else {
                if errno == ENOENT { return false }
                throw NativeAuthError(
                    .cacheUnreadable,
                    "The token cache directory cannot be read (\(errnoText(errno)))."
                )
            }
            guard (st.st_mode & S_IFMT) == S_IFDIR else {
                throw NativeAuthError(.cacheUnreadable, "The token cache directory is not a directory.")
            }
            guard st.st_uid == geteuid() || st.st_uid == 0, st.st_mode & 0o022 == 0 else {
                throw NativeAuthError(
                    .cacheInsecure,
                    "The token cache directory is writable by other users or owned by another user; it is not used."
                )
            }
            return true
        }

        /// The largest cache file read (64 MiB; a cache of 1,000 accounts is about 4.5 MB): a bigger one — a sparse
        /// 100 GiB file, say — is `cache_unreadable`, and never an allocation of a size taken from the file.
        static let maxFileBytes = 64 << 20

        static func tooLarge() -> NativeAuthError {
            NativeAuthError(.cacheUnreadable, "The token cache file is larger than 64 MiB; it is not read.")
        }

        /// Reads the cache file after checking its directory, its owner (this user) and its mode (writable by no one
        /// else). A file readable by others is read (and rewritten 0600 by the next write); `readableByOthers` says so.
        static func read(_ path: String, readableByOthers: inout Bool) throws(NativeAuthError) -> ReadResult {
            guard try checkDirectory(directory(of: path)) else { return .missing }
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            if fd < 0 {
                let e = errno
                if e == ENOENT { return .missing }
                if e == ELOOP {
                    throw NativeAuthError(.cacheInsecure, "The token cache file is a symbolic link; it is not used.")
                }
                throw NativeAuthError(.cacheUnreadable, "The token cache file cannot be read (\(errnoText(e))).")
            }
            defer { close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0 else {
                throw NativeAuthError(.cacheUnreadable, "The token cache file cannot be read (\(errnoText(errno))).")
            }
            guard (st.st_mode & S_IFMT) == S_IFREG else {
                let what = (st.st_mode & S_IFMT) == S_IFDIR ? "a directory is in its place" : "not a regular file"
                throw NativeAuthError(.cacheUnreadable, "The token cache file cannot be read (\(what)).")
            }
            guard st.st_uid == geteuid() else {
                throw NativeAuthError(.cacheInsecure, "The token cache file is owned by another user; it is not used.")
            }
            guard st.st_mode & 0o022 == 0 else {
                throw NativeAuthError(
                    .cacheInsecure,
                    "The token cache file is writable by other users; it is not used."
                )
            }
            readableByOthers = st.st_mode & 0o044 != 0
            guard st.st_size <= maxFileBytes else { throw tooLarge() }
            var capacity = max(Int(st.st_size), 0) + 1
            var buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            var count = 0
            while true {
                if count == capacity {  // the file grew while being read
                    guard capacity <= maxFileBytes else {
                        wipeMemory(buffer, count)
                        buffer.deallocate()
                        throw tooLarge()
                    }
                    let bigger = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * 2)
                    bigger.update(from: buffer, count: count)
                    wipeMemory(buffer, count)
                    buffer.deallocate()
                    buffer = bigger
                    capacity *= 2
                }
                let n = Glibc.read(fd, buffer + count, capacity - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    let e = errno
                    wipeMemory(buffer, count)
                    buffer.deallocate()
                    throw NativeAuthError(.cacheUnreadable, "The token cache file cannot be read (\(errnoText(e))).")
                }
                if n == 0 { break }
                count += n
            }
            return .contents(SourceBytes(taking: buffer, count: count), FileSignature(st))
        }

        /// Creates `dir` and its missing parents with mode 0700.
        static func makeDirectories(_ dir: String) throws(NativeAuthError) {
            var st = stat()
            if stat(dir, &st) == 0 { return }
            let parent = directory(of: dir)
            if parent != dir && parent != "/" { try makeDirectories(parent) }
            if mkdir(dir, 0o700) != 0 && errno != EEXIST {
                throw NativeAuthError(
                    .cacheWriteFailed,
                    "The token cache directory could not be created (\(errnoText(errno)))."
                )
            }
        }

        /// How many set-aside corrupt files are kept (the newest); older ones are removed.
        static let keptCorruptFiles = 3

        /// Moves a corrupt file aside as `<path>.corrupt-<epoch seconds>` (`-2`, `-3`, … if taken), readable by this
        /// user only (it may hold tokens, and it kept the mode it had), and removes all but the newest
        /// `keptCorruptFiles`. Answers the new name.
        static func setAside(_ path: String) -> String? {
            let base = "\(path).corrupt-\(time(nil))"
            var name = base
            var n = 1
            var st = stat()
            while lstat(name, &st) == 0 && n < 100 {
                n += 1
                name = "\(base)-\(n)"
            }
            guard rename(path, name) == 0 else { return nil }
            let fd = open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            if fd >= 0 {
                _ = fchmod(fd, 0o600)
                close(fd)
            }
            pruneSetAside(path)
            return name
        }

        /// Removes set-aside corrupt files of `path` beyond the newest `keptCorruptFiles` (by modification time).
        static func pruneSetAside(_ path: String) {
            let dir = directory(of: path)
            let prefix = (path.split(separator: "/").last.map(String.init) ?? path) + ".corrupt-"
            guard let d = opendir(dir) else { return }
            defer { closedir(d) }
            var found: [(name: String, mtime: Int, nsec: Int)] = []
            while let e = readdir(d) {
                let name = withUnsafeBytes(of: e.pointee.d_name) { raw -> String in
                    guard let base = raw.baseAddress else { return "" }
                    return String(cString: base.assumingMemoryBound(to: CChar.self))
                }
                guard name.hasPrefix(prefix) else { continue }
                var st = stat()
                guard fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
                    continue
                }
                found.append((name, st.st_mtim.tv_sec, st.st_mtim.tv_nsec))
            }
            guard found.count > keptCorruptFiles else { return }
            let oldestFirst = found.sorted { ($0.mtime, $0.nsec, $0.name) < ($1.mtime, $1.nsec, $1.name) }
            for old in oldestFirst.dropLast(keptCorruptFiles) { unlinkat(dirfd(d), old.name, 0) }
        }
    }
}
