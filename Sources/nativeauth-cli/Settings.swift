internal import Glibc
import NativeAuthTOML

/// The command line's settings: flags, then the environment, then a profile of the configuration file
/// (`$XDG_CONFIG_HOME/nativeauth/config.toml`), then built-in defaults. The file holds named profiles:
///
///     default_profile = "work"          # optional; else the profile named "default"
///
///     [profiles.work]
///     authority = "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"
///     client_id = "00001111-aaaa-2222-bbbb-3333cccc4444"
///     scopes = ["api://…/ToDoList.Read"]
///     registries = { "registry.example" = ["api://…/Registry.Pull"] }
///     git_hosts = ["dev.contoso.com", "git.contoso.com:8443"]
struct Settings {
    var profile = "default"
    var authority: String?
    var clientID: String?
    var authorityType: String?
    var tenantSubdomain: String?
    var redirectURI: String?
    var postLogoutRedirectURI: String?
    var caBundle: String?
    /// `ca_bundle_system`: the CA bundle adds to the system's CAs instead of replacing them.
    var caBundleSystem: Bool?
    /// `proxy` (`--proxy`): wins over the proxy environment (`https_proxy`, …), as git's http.proxy does; "" for none.
    var proxy: String?
    var proxyCABundle: String?
    var browserCommand: String?
    /// Keep tokens in a file (false: in this process's memory only).
    var cache = true
    var cachePath: String?
    /// A key the user manages (`NATIVEAUTH_CACHE_ENCRYPTION_KEY`, base64 of 32 bytes).
    var cacheEncryptionKey: String?
    /// Where the cache key is kept when there is no `cacheEncryptionKey`: "auto" (the default), "secret_service" or
    /// "kernel_keyring".
    var keyStore = "auto"
    /// A plaintext cache asked for (shared with MSAL for Python, which reads plaintext only).
    var plaintextCache = false
    var scopes: [String] = []
    var account: String?
    var capabilities: [String]?
    var challengeTypes: [String]?
    var connectTimeoutMs: Int64?
    var requestTimeoutMs: Int64?
    /// `docker-credential-nativeauth`: the scopes each registry needs.
    var registries: [String: [String]] = [:]
    /// `git-credential`: the hosts (`host[:port]`) it answers for (`--host` replaces them).
    var gitHosts: [String]?
    /// `kubectl-credential`: the clusters (`host[:port]`) it answers for when kubectl names one (`--server`).
    var kubectlServers: [String]?
    /// Where each setting came from: "flag", "env NAME", "profile NAME".
    var sources: [String: String] = [:]

    /// A value given on the command line, for `resolve`.
    enum Given: Equatable {
        case text(String)
        case flag(Bool)
        case list([String])
    }

    /// Profile keys and their kinds.
    static let profileKeys: [String: Kind] = [
        "authority": .string, "client_id": .string, "authority_type": .string, "tenant_subdomain": .string,
        "redirect_uri": .string, "post_logout_redirect_uri": .string, "ca_bundle": .string, "browser_command": .string,
        "cache": .bool, "cache_path": .string, "key_store": .string, "plaintext_cache": .bool, "scopes": .list,
        "account": .string, "capabilities": .list, "challenge_types": .list, "connect_timeout_ms": .integer,
        "request_timeout_ms": .integer, "registries": .registries, "git_hosts": .list, "kubectl_servers": .list,
        "proxy": .string, "proxy_ca_bundle": .string, "ca_bundle_system": .bool,
    ]

    enum Kind {
        case string, bool, list, integer, registries

        var expected: String {
            switch self {
            case .string: return "a string"
            case .bool: return "true or false"
            case .list: return "an array of strings"
            case .integer: return "an integer"
            case .registries: return "a table of arrays of strings ({ \"registry.example\" = [\"scope\"] })"
            }
        }
    }

    /// Environment variables (an empty value counts as unset).
    static let environment: [(key: String, variable: String)] = [
        ("authority", "NATIVEAUTH_AUTHORITY"), ("client_id", "NATIVEAUTH_CLIENT_ID"),
        ("authority_type", "NATIVEAUTH_AUTHORITY_TYPE"), ("tenant_subdomain", "NATIVEAUTH_TENANT_SUBDOMAIN"),
        ("redirect_uri", "NATIVEAUTH_REDIRECT_URI"), ("ca_bundle", "NATIVEAUTH_CA_BUNDLE"),
        ("browser_command", "NATIVEAUTH_BROWSER_COMMAND"), ("cache", "NATIVEAUTH_CACHE"),
        ("cache_path", "NATIVEAUTH_CACHE_PATH"), ("key_store", "NATIVEAUTH_KEY_STORE"),
        ("plaintext_cache", "NATIVEAUTH_PLAINTEXT_CACHE"), ("scopes", "NATIVEAUTH_SCOPES"),
        ("account", "NATIVEAUTH_ACCOUNT"),
    ]

    static func env(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        let s = String(cString: v)
        return s.isEmpty ? nil : s
    }

    /// `$NAME` when it is an absolute path, else `~/<fallback>` (the XDG base directory rule).
    static func xdg(_ name: String, _ fallback: String) -> String {
        if let v = env(name), v.hasPrefix("/") { return v }
        return home() + "/" + fallback
    }

    static func home() -> String {
        if let h = env("HOME"), h.hasPrefix("/") { return h }
        if let pw = getpwuid(geteuid()), let dir = pw.pointee.pw_dir { return String(cString: dir) }
        return "/"
    }

    static var configPath: String { xdg("XDG_CONFIG_HOME", ".config") + "/nativeauth/config.toml" }
    static var defaultCachePath: String { xdg("XDG_CACHE_HOME", ".cache") + "/nativeauth/token_cache.json" }

    /// Merges the settings: `flags` (only what the user gave) > the environment > the profile > defaults.
    /// `configFile` (`--config`) or `$NATIVEAUTH_CONFIG` names the file (then it must exist); `profile` (`--profile`)
    /// or `$NATIVEAUTH_PROFILE` picks the profile (then it must exist in the file).
    static func resolve(
        flags: [String: Given],
        configFile: String?,
        profile chosenProfile: String?
    ) throws(CLIError) -> Settings {
        let explicitFile = configFile ?? env("NATIVEAUTH_CONFIG")
        let path = explicitFile.map(expandTilde) ?? configPath
        var document: [String: TOMLValue] = [:]
        if explicitFile != nil || access(path, F_OK) == 0 { document = try load(path) }
        let profiles = document["profiles"]?.table ?? [:]
        let chosen = chosenProfile ?? env("NATIVEAUTH_PROFILE")
        var defaultProfile: String? = nil
        if case .string(let d)? = document["default_profile"] { defaultProfile = d }
        let name = chosen ?? defaultProfile ?? "default"
        if profiles[name] == nil, chosen != nil || defaultProfile != nil {
            let known = profiles.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
            throw CLIError(
                "usage",
                "no profile '\(name)' in \(path) (profiles: \(known.isEmpty ? "none" : known))",
                .usage
            )
        }
        var s = Settings(profile: name)
        for (key, value) in profiles[name]?.table ?? [:] {
            s.set(key, value)
            s.sources[key] = "profile \(name)"
        }
        for (key, variable) in environment {
            guard let text = env(variable) else { continue }
            switch key {
            case "cache", "plaintext_cache":
                guard let b = parseBool(text) else {
                    throw CLIError("usage", "\(variable): expected true or false, not '\(text)'", .usage)
                }
                s.set(key, .boolean(b))
            case "scopes": s.set(key, .array(splitScopes(text).map { .string($0) }))
            default: s.set(key, .string(text))
            }
            s.sources[key] = "env \(variable)"
        }
        for (key, value) in flags {
            switch value {
            case .text(let t): s.set(key, .string(t))
            case .flag(let b): s.set(key, .boolean(b))
            case .list(let l): s.set(key, .array(l.map { .string($0) }))
            }
            s.sources[key] = "flag"
        }
        s.cachePath = s.cachePath.map(absolute)
        s.caBundle = s.caBundle.map(absolute)
        s.proxyCABundle = s.proxyCABundle.map(absolute)
        s.cacheEncryptionKey = env("NATIVEAUTH_CACHE_ENCRYPTION_KEY")
        return s
    }

    private mutating func set(_ key: String, _ value: TOMLValue) {
        func string() -> String? { if case .string(let t) = value { return t } else { return nil } }
        func list() -> [String]? {
            guard case .array(let items) = value else { return nil }
            return items.compactMap { if case .string(let t) = $0 { return t } else { return nil } }
        }
        func integer() -> Int64? { if case .integer(let n) = value { return n } else { return nil } }
        func bool() -> Bool? { if case .boolean(let b) = value { return b } else { return nil } }
        switch key {
        case "authority": authority = string()
        case "client_id": clientID = string()
        case "authority_type": authorityType = string()
        case "tenant_subdomain": tenantSubdomain = string()
        case "redirect_uri": redirectURI = string()
        case "post_logout_redirect_uri": postLogoutRedirectURI = string()
        case "ca_bundle": caBundle = string()
        case "ca_bundle_system": caBundleSystem = bool()
        case "proxy": proxy = string()
        case "proxy_ca_bundle": proxyCABundle = string()
        case "browser_command": browserCommand = string()
        case "cache": cache = bool() ?? cache
        case "cache_path": cachePath = string()
        case "key_store": keyStore = string() ?? keyStore
        case "plaintext_cache": plaintextCache = bool() ?? plaintextCache
        case "scopes": scopes = list() ?? []
        case "account": account = string()
        case "capabilities": capabilities = list()
        case "challenge_types": challengeTypes = list()
        case "connect_timeout_ms": connectTimeoutMs = integer()
        case "request_timeout_ms": requestTimeoutMs = integer()
        case "git_hosts": gitHosts = list()
        case "kubectl_servers": kubectlServers = list()
        case "registries":
            var out: [String: [String]] = [:]
            for (registry, scopes) in value.table ?? [:] {
                guard case .array(let items) = scopes else { continue }
                out[registry] = items.compactMap { if case .string(let t) = $0 { return t } else { return nil } }
            }
            registries = out
        default: break
        }
    }

    static func parseBool(_ text: String) -> Bool? {
        switch text.trimmingSpaces.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: return nil
        }
    }

    static func splitScopes(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "\t" || $0 == "\n" }).map(String.init)
    }

    static func expandTilde(_ path: String) -> String {
        if path == "~" { return home() }
        if path.hasPrefix("~/") { return home() + path.dropFirst(1) }
        return path
    }

    static func absolute(_ path: String) -> String {
        let expanded = expandTilde(path)
        guard !expanded.hasPrefix("/") else { return expanded }
        guard let buffer = getcwd(nil, 0) else { return expanded }
        defer { free(buffer) }
        let cwd = String(cString: buffer)
        return (cwd == "/" ? "" : cwd) + "/" + expanded
    }

    /// Reads and checks the configuration file: no other user may have written it (`ConfigPermissions`),
    /// `default_profile` and `[profiles.NAME]` tables of known keys.
    static func load(_ path: String) throws(CLIError) -> [String: TOMLValue] {
        let text = try readFile(path)
        let document: [String: TOMLValue]
        do { document = try TOMLParser.parse(text) } catch {
            throw CLIError("usage", "\(path): \(error.description)", .usage)
        }
        for key in document.keys where key != "profiles" && key != "default_profile" {
            throw CLIError("usage", "\(path): unknown setting '\(key)' (expected [profiles.NAME] tables)", .usage)
        }
        if let d = document["default_profile"], case .string = d {
        } else if document["default_profile"] != nil {
            throw CLIError("usage", "\(path): default_profile must be a string", .usage)
        }
        guard let profiles = document["profiles"] else { return document }
        guard let tables = profiles.table else {
            throw CLIError("usage", "\(path): profiles must be tables ([profiles.NAME])", .usage)
        }
        for (name, profile) in tables {
            guard let keys = profile.table else {
                throw CLIError("usage", "\(path): profiles.\(name) must be a table ([profiles.\(name)])", .usage)
            }
            for (key, value) in keys {
                guard let kind = profileKeys[key] else {
                    throw CLIError("usage", "\(path): [profiles.\(name)]: unknown setting '\(key)'", .usage)
                }
                guard has(value, kind) else {
                    throw CLIError("usage", "\(path): [profiles.\(name)]: \(key) must be \(kind.expected)", .usage)
                }
            }
        }
        return document
    }

    private static func has(_ value: TOMLValue, _ kind: Kind) -> Bool {
        func strings(_ v: TOMLValue) -> Bool {
            guard case .array(let items) = v else { return false }
            return items.allSatisfy { if case .string = $0 { return true } else { return false } }
        }
        switch (kind, value) {
        case (.string, .string), (.bool, .boolean), (.integer, .integer): return true
        case (.list, _): return strings(value)
        case (.registries, .table(let t)): return t.values.allSatisfy(strings)
        default: return false
        }
    }

    static func readFile(_ path: String) throws(CLIError) -> String {
        // O_NONBLOCK: opening a FIFO does not wait for a writer (ConfigPermissions refuses anything but a regular
        // file, on which the flag changes nothing); O_NOCTTY: a terminal never becomes the controlling one.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            throw CLIError("usage", "cannot read \(path): \(String(cString: strerror(errno)))", .usage)
        }
        defer { close(fd) }
        try ConfigPermissions.check(fd, path)
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while bytes.count <= TOMLParser.maxBytes {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError("usage", "\(path): not UTF-8", .usage)
        }
        return text
    }
}
