// Reading and writing corpus files, without Foundation.
import Glibc

enum Files {
    static func read(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
            if n > 0 { out += buffer[0..<n] }
            if n < buffer.count { break }
        }
        return ferror(f) == 0 ? out : nil
    }

    static func write(_ path: String, _ bytes: [UInt8]) -> Bool {
        guard let f = fopen(path, "wb") else { return false }
        let n = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
        return fclose(f) == 0 && n == bytes.count
    }

    static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    static func makeDirectory(_ path: String) -> Bool {
        isDirectory(path) || mkdir(path, 0o755) == 0
    }

    /// The regular files in `dir`, sorted by name (hidden files left out).
    static func list(_ dir: String) -> [String] {
        guard let d = opendir(dir) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(".") { continue }
            let path = dir + "/" + name
            var st = stat()
            if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG { names.append(path) }
        }
        return names.sorted()
    }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return String(path[..<slash])
    }
}
