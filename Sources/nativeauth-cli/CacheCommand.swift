import ArgumentParser
internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

/// `nativeauth cache`: the token cache file itself.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "The token cache file.",
        subcommands: [CacheEncryptCommand.self]
    )
}

/// `nativeauth cache encrypt`: encrypts a plaintext token cache file in place, keeping its sign-ins — the one way a
/// plaintext file becomes the encrypted cache (an encrypted cache never reads or seals a plaintext file unasked). The
/// key is the one `token` and `login` use: the key store's (`key_store`), or `NATIVEAUTH_CACHE_ENCRYPTION_KEY`.
/// Programs without the key (MSAL for Python) can no longer read the file afterwards.
struct CacheEncryptCommand: ContextCommand {
    static let configuration = CommandConfiguration(
        commandName: "encrypt",
        abstract: "Encrypt a plaintext token cache file in place, keeping its sign-ins.",
        discussion: """
            The file becomes the encrypted cache that login and token use, its key kept in the Secret Service or the
            kernel keyring (key_store), or NATIVEAUTH_CACHE_ENCRYPTION_KEY. Programs without the key, such as MSAL for
            Python, can no longer read it. An encrypted file, or none, is left as it is.
            """
    )

    @OptionGroup var options: SettingsOptions

    /// What is in the cache file's place.
    enum Found: String {
        case none, empty, encrypted, plaintext
    }

    static func look(_ path: String) -> Found {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return errno == ENOENT ? .none : .plaintext }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &head, head.count)
        guard n > 0 else { return .empty }
        let bytes = head.prefix(n)
        if bytes.starts(with: Array("NACE".utf8)) { return .encrypted }
        return bytes.allSatisfy({ [0x20, 0x0a, 0x0d, 0x09].contains($0) }) && n < head.count ? .empty : .plaintext
    }

    func run(_ ctx: Context) throws(CLIError) -> ExitCode {
        let settings = try ctx.settings()
        guard let path = try ctx.cachePath() else {
            throw CLIError(
                "usage",
                "tokens are not kept in a file (--no-cache, NATIVEAUTH_CACHE=0): nothing to encrypt",
                .usage
            )
        }
        guard settings.cacheEncryptionKey != nil || !settings.plaintextCache else {
            throw CLIError(
                "usage",
                "the cache is asked to stay plaintext (--plaintext-cache, NATIVEAUTH_PLAINTEXT_CACHE or "
                    + "plaintext_cache in the profile): leave that out to encrypt it",
                .usage
            )
        }
        let before = Self.look(path)
        let client = try ctx.client(migratePlaintext: before == .plaintext)
        let info = try client.call(na_client_info, ["v": 1])
        let keyStore = info["config"]?["cache"]?["key_store"]?.stringValue ?? "?"
        let after = Self.look(path)
        let migrated = before == .plaintext && after == .encrypted
        if before == .plaintext && after == .none {
            throw CLIError(
                "cache_unreadable",
                "\(path) was not a token cache (not a JSON object): it was kept aside as \(path).corrupt-<time> and "
                    + "the cache starts empty.",
                .storage
            )
        }
        if before == .plaintext && !migrated {
            let problem = info["config"]?["cache"]?["problem"]?.stringValue ?? "cache_write_failed"
            throw CLIError(
                problem,
                "\(path) could not be encrypted (\(problem)); it is left as it was. --verbose says why.",
                .storage
            )
        }
        if ctx.json {
            Terminal.emitJSON([
                "path": .string(path), "encrypted": .bool(after == .encrypted), "migrated": .bool(migrated),
                "key_store": .string(keyStore),
            ])
        } else if migrated {
            Terminal.out(
                "Encrypted \(Terminal.safe(path)) (key: \(Terminal.safe(keyStore))); its sign-ins are kept. Programs "
                    + "without the key, such as MSAL for Python, can no longer read it."
            )
        } else if after == .encrypted {
            Terminal.out("\(Terminal.safe(path)) is encrypted already (key: \(Terminal.safe(keyStore))).")
        } else {
            Terminal.out(
                "No token cache at \(Terminal.safe(path)) yet (\(after.rawValue)): it is encrypted when written."
            )
        }
        return .ok
    }
}
