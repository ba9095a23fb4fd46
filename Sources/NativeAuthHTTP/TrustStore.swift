/// The certificate authorities that verify servers: CA files (PEM bundles) and at most one CA directory (hashed, as
/// `c_rehash` / `update-ca-certificates` make it). Each file is a path or the system's default file — libcurl's
/// built-in one, or, when that does not exist on this machine, the first well-known bundle that does
/// (NativeAuthNet's `SystemTrust`).
public struct TrustStore: Sendable, Equatable {
    public enum File: Sendable, Equatable {
        case path(String)
        case systemDefault
    }

    public enum Directory: Sendable, Equatable {
        case none
        case path(String)
        /// libcurl's built-in CA directory (when it has one).
        case systemDefault
    }

    /// Trusted together, in order; empty: no file.
    public var files: [File]
    public var directory: Directory

    public init(files: [File], directory: Directory) {
        self.files = files
        self.directory = directory
    }

    /// The system's store: its default file and directory.
    public static let system = TrustStore(files: [.systemDefault], directory: .systemDefault)

    /// Only `path`.
    public static func only(_ path: String) -> TrustStore { TrustStore(files: [.path(path)], directory: .none) }
}
