import Foundation

/// docs/errors.tsv, the one list of the library's error codes (its columns: `.ci/error-table`), as tests read it to
/// check what is not generated from it.
public struct ErrorTableFile: Sendable {
    public struct Row: Sendable, Equatable {
        public var code: String
        /// The `NA_E*` name.
        public var status: String
        /// The `nativeauth` command's exit code.
        public var exit: Int32
        public var pythonClass: String
        public var pythonBase: String
        public var goName: String
        public var meaning: String
    }

    public static let columns = ["code", "status", "exit", "python_class", "python_base", "go_name", "meaning"]

    /// The repository's root.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    public let rows: [Row]

    public struct Malformed: Error, CustomStringConvertible {
        public let description: String
    }

    /// Reads docs/errors.tsv: a header row naming the columns, then one row per code (tab-separated).
    public static func load() throws -> ErrorTableFile {
        let text = try String(contentsOf: root.appendingPathComponent("docs/errors.tsv"), encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map {
            $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        }
        guard !lines.isEmpty, lines.removeFirst() == columns else {
            throw Malformed(description: "docs/errors.tsv: the first row must name the columns \(columns)")
        }
        let rows = try lines.enumerated().map { n, f throws(Malformed) -> Row in
            guard f.count == columns.count, let exit = Int32(f[2]) else {
                throw Malformed(description: "docs/errors.tsv:\(n + 2): \(columns.count) columns are needed")
            }
            return Row(
                code: f[0],
                status: f[1],
                exit: exit,
                pythonClass: f[3],
                pythonBase: f[4],
                goName: f[5],
                meaning: f[6]
            )
        }
        return ErrorTableFile(rows: rows)
    }
}
