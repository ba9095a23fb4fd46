// Measured on the development machine (2 shared x86-64 cores, Linux, Swift 6.3.1; gnome-keyring 42.1 on a private
// dbus-daemon 1.14.10; medians of 51 runs, each lookup a new connection; Tests/NativeAuthKeyringTests/
// KeyringMeasurements.swift, NATIVEAUTH_KEYRING_BENCH=1):
//   SecretServiceKeyStore.lookup, item found (connect, AUTH, Hello, OpenSession, SearchItems, GetSecrets):
//       1.14 ms release, 1.2-1.7 ms debug (the round trips to dbus-daemon and gnome-keyring are most of it)
//   SecretServiceKeyStore.lookup, no item (… SearchItems): 0.86 ms release;  store (… CreateItem): 2.4 ms release
//   KernelKeyringStore.lookup (KEYCTL_GET_PERSISTENT, KEYCTL_SEARCH, KEYCTL_READ): 0.007 ms; store: 0.006 ms
// What libsecret would cost instead (Tests/bench/dlopen_libsecret.c, medians of 31 fresh processes):
//   dlopen("libsecret-1.so.0") and GLib, GObject, GIO, libgcrypt, … (13 libraries): 1.15 ms (RTLD_NOW or LAZY) —
//   as much as our whole lookup before libsecret does anything; dlopen + its first secret_password_lookupv_sync
//   (a GDBus connection with its worker thread, a Diffie-Hellman session): 9.3 ms. And it would leave GLib's
//   threads and global state in every host process.
internal import Glibc
public import NativeAuthCache
public import NativeAuthCore

/// The cache keys in the user's Secret Service — the desktop's keychain (GNOME Keyring, KeePassXC, KWallet's
/// Secret Service), spoken to directly over the D-Bus session bus (freedesktop.org Secret Service API,
/// https://specifications.freedesktop.org/secret-service-spec/latest/): one item per cache file in the default
/// collection, found by the attributes `application` = `nativeauth`, `xdg:schema` = `org.nativeauth.CacheKey` and
/// `cache_path` = the file's absolute path, labelled "NativeAuth token cache key", its secret the 32-byte key.
///
/// The D-Bus client is our own (a Unix socket, SASL EXTERNAL, the few message types these calls need): libsecret
/// would bring GLib and GIO into every host process and costs more to load than the whole lookup (see the
/// measurements at the top of this file). Each `lookup` and `store` opens one connection, makes its calls and closes
/// it; the whole operation — connecting, authenticating, every call — ends by `timeout`, whatever the bus does (a
/// Secret Service the bus is still starting, a socket nobody answers), with `keyring_unavailable`.
///
/// Nothing here shows a prompt: a keyring that is locked and would need one to unlock (a password dialog) is
/// `keyring_unavailable` at once, never a wait for a user who may not be there.
public struct SecretServiceKeyStore: CacheKeyStore {
    public let name = "secret_service"
    /// The bus address (`unix:path=…` or `unix:abstract=…`; several separated by `;` are tried in order).
    public let busAddress: String?
    /// The longest a `lookup` or `store` takes, in seconds.
    public let timeout: Double

    static let service = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let label = "NativeAuth token cache key"
    static let schema = "org.nativeauth.CacheKey"
    static let contentType = "application/octet-stream"
    static let keyLength = 32

    /// The session bus of this process's environment (`DBUS_SESSION_BUS_ADDRESS`), if it names one.
    public static var sessionBusAddress: String? {
        guard let p = getenv("DBUS_SESSION_BUS_ADDRESS") else { return nil }
        let s = String(cString: p)
        return s.isEmpty ? nil : s
    }

    /// A store on the bus at `busAddress` (by default the session bus), whose operations each end within `timeout`
    /// seconds (a value that is not a positive number of seconds means the default, 2; at most 60).
    public init(busAddress: String? = SecretServiceKeyStore.sessionBusAddress, timeout: Double = 2) {
        self.busAddress = busAddress
        self.timeout = timeout > 0 ? min(timeout, 60) : 2
    }

    /// The key kept for the cache file at `cachePath` (absolute), or nil when there is none. An item whose secret is
    /// not exactly 32 bytes is not a key this library stored (or it was damaged): it counts as no key, so the next
    /// `store` replaces it.
    public func lookup(cachePath: String) throws(NativeAuthError) -> Secret? {
        try Self.checkPath(cachePath)
        let s = try Exchange(self)
        let session = try s.openSession()
        let found = try s.call(
            Self.servicePath,
            Self.serviceInterface,
            "SearchItems",
            [Self.attributes(cachePath)]
        )
        guard found.count == 2, var items = found[0].objectPathsValue, let locked = found[1].objectPathsValue else {
            throw s.unexpected("SearchItems")
        }
        if items.isEmpty {
            guard !locked.isEmpty else { return nil }
            items = try s.unlock(locked)
            guard !items.isEmpty else { return nil }
        }
        let secrets = try s.call(
            Self.servicePath,
            Self.serviceInterface,
            "GetSecrets",
            [.objectPaths(items), .objectPath(session)]
        )
        guard case .array(_, let entries) = secrets.first else { throw s.unexpected("GetSecrets") }
        for entry in entries {
            // {o(oayays)}: the item, and its secret (session, parameters, value, content type).
            guard case .dictEntry(_, .structure(let secret)) = entry, secret.count == 4,
                case .bytes(let value) = secret[2]
            else { throw s.unexpected("GetSecrets") }
            if value.count == Self.keyLength { return value.withUnsafeBytes { Secret(bytes: $0) } }
        }
        return nil
    }

    /// Keeps `key` (32 bytes) for the cache file at `cachePath` (absolute) in the default collection, replacing the
    /// item kept for it.
    public func store(_ key: Secret, cachePath: String) throws(NativeAuthError) {
        try Self.checkPath(cachePath)
        guard key.count == Self.keyLength else {
            throw .invalidArgument("a cache key is \(Self.keyLength) bytes")
        }
        let s = try Exchange(self)
        let session = try s.openSession()
        let alias = try s.call(Self.servicePath, Self.serviceInterface, "ReadAlias", [.string("default")])
        guard let collection = alias.first?.objectPathValue else { throw s.unexpected("ReadAlias") }
        guard collection != "/" else {
            throw s.failure("the Secret Service has no default collection (keyring) to keep the key in")
        }
        let properties = DBusValue.array(
            .dictEntry(.string, .variant),
            [
                .dictEntry(.string("org.freedesktop.Secret.Item.Label"), .variant(.string(Self.label))),
                .dictEntry(.string("org.freedesktop.Secret.Item.Attributes"), .variant(Self.attributes(cachePath))),
            ]
        )
        let secret = DBusValue.structure([
            .objectPath(session), .bytes(DBusBytes.copy([])), .bytes(key.withUnsafeBytes { DBusBytes($0) }),
            .string(Self.contentType),
        ])
        let create = DBusMessage.call(
            Self.service,
            collection,
            Self.collectionInterface,
            "CreateItem",
            [properties, secret, .boolean(true)]
        )
        var created: [DBusValue]
        do throws(DBusFailure) {
            created = try s.bus.call(create).body
        } catch .errorReply(let name, _) where name == "org.freedesktop.Secret.Error.IsLocked" {
            // A locked collection: unlock it if that needs no prompt, then try once more.
            _ = try s.unlock([collection])
            created = try s.call(create)
        } catch {
            throw s.failure(error, during: "CreateItem")
        }
        guard created.count == 2, let item = created[0].objectPathValue, let prompt = created[1].objectPathValue
        else { throw s.unexpected("CreateItem") }
        if item == "/" && prompt != "/" { throw s.locked() }
        guard item != "/" else { throw s.unexpected("CreateItem") }
    }

    /// The attributes that name the item of `cachePath` (`a{ss}`).
    static func attributes(_ cachePath: String) -> DBusValue {
        .stringDictionary([("application", "nativeauth"), ("xdg:schema", schema), ("cache_path", cachePath)])
    }

    static func checkPath(_ path: String) throws(NativeAuthError) {
        guard path.hasPrefix("/"), !path.utf8.contains(0) else {
            throw .invalidArgument("the cache path for a key store must be absolute", field: "cache.path")
        }
    }
}

/// One connection to the Secret Service for one `lookup` or `store`, and the errors it answers.
private struct Exchange {
    let bus: DBusConnection
    let store: SecretServiceKeyStore

    init(_ store: SecretServiceKeyStore) throws(NativeAuthError) {
        self.store = store
        guard let address = store.busAddress else {
            throw NativeAuthError(
                .keyringUnavailable,
                "Secret Service: no session bus (DBUS_SESSION_BUS_ADDRESS is not set)."
            )
        }
        do throws(DBusFailure) {
            bus = try DBusConnection(address: address, deadline: Deadline(seconds: store.timeout))
        } catch {
            throw Exchange.failure(error, during: "connecting to the session bus", timeout: store.timeout)
        }
    }

    /// A session for secrets in the clear ("plain"), once the service that answers is known to run as this user or
    /// root. The key travels over this Unix socket to a bus run by this user or root (`DBusConnection` checks its
    /// owner before sending a byte) and from there to a Secret Service run by this user or root (checked here): every
    /// process that could read it on the way can read the user's keyring anyway. The spec's Diffie-Hellman
    /// algorithm (`dh-ietf1024-sha256-aes128-cbc-pkcs7`) is not used: it guards only against a passive eavesdropper
    /// on the bus — on a session bus only the user's own processes or root may monitor it — and not against a
    /// listener that poses as the bus or the service (it would simply complete the exchange itself), which is what
    /// the owner checks refuse; it would cost a 1024-bit modular exponentiation and an AES round trip per lookup.
    /// The session ends when the connection closes.
    func openSession() throws(NativeAuthError) -> String {
        let opened = try call(
            SecretServiceKeyStore.servicePath,
            SecretServiceKeyStore.serviceInterface,
            "OpenSession",
            [.string("plain"), .variant(.string(""))]
        )
        guard opened.count == 2, let session = opened[1].objectPathValue else { throw unexpected("OpenSession") }
        try checkServiceOwner()
        return session
    }

    /// The Secret Service (which `OpenSession` started if need be) runs as this user or root. A bus run by root may
    /// let other users connect and own names (one configured so, or the system bus named by mistake): the key is
    /// not handed to whoever owns `org.freedesktop.secrets` there.
    func checkServiceOwner() throws(NativeAuthError) {
        let owner = try call(
            .call(
                DBusConnection.bus,
                "/org/freedesktop/DBus",
                DBusConnection.bus,
                "GetConnectionUnixUser",
                [.string(SecretServiceKeyStore.service)]
            )
        )
        guard owner.count == 1, case .uint32(let uid) = owner[0] else { throw unexpected("GetConnectionUnixUser") }
        let me = geteuid()
        guard uid == me || uid == 0 else {
            throw failure(
                "\(SecretServiceKeyStore.service) on the bus at \(bus.endpoint.description) is run by another user "
                    + "(uid \(uid)), not by this user (uid \(me)) or root; the key is not sent to it"
            )
        }
    }

    /// Unlocks `objects` if that needs no prompt; the objects it unlocked. Throws when it needs one.
    func unlock(_ objects: [String]) throws(NativeAuthError) -> [String] {
        let unlocked = try call(
            SecretServiceKeyStore.servicePath,
            SecretServiceKeyStore.serviceInterface,
            "Unlock",
            [.objectPaths(objects)]
        )
        guard unlocked.count == 2, let items = unlocked[0].objectPathsValue,
            let prompt = unlocked[1].objectPathValue
        else { throw unexpected("Unlock") }
        // The prompt is not run: it would show a password dialog to whoever is at the screen, if anyone, and wait
        // for them without end. The bus drops it when this connection closes.
        guard prompt == "/" else { throw locked() }
        return items
    }

    func call(
        _ path: String,
        _ interface: String,
        _ member: String,
        _ body: [DBusValue]
    ) throws(NativeAuthError) -> [DBusValue] {
        try call(.call(SecretServiceKeyStore.service, path, interface, member, body))
    }

    func call(_ message: DBusMessage) throws(NativeAuthError) -> [DBusValue] {
        do throws(DBusFailure) {
            return try bus.call(message).body
        } catch {
            throw failure(error, during: message.member ?? "a call")
        }
    }

    func locked() -> NativeAuthError {
        failure(
            "the keyring is locked and unlocking it needs a password prompt, which nobody is there to answer "
                + "(unlock the keyring in the desktop session first)"
        )
    }

    func unexpected(_ member: String) -> NativeAuthError {
        failure("\(SecretServiceKeyStore.service) answered \(member) with something other than the API's reply")
    }

    func failure(_ what: String) -> NativeAuthError {
        NativeAuthError(.keyringUnavailable, "Secret Service: \(what).")
    }

    func failure(_ error: DBusFailure, during member: String) -> NativeAuthError {
        Exchange.failure(error, during: member, timeout: store.timeout)
    }

    static func failure(_ error: DBusFailure, during what: String, timeout: Double) -> NativeAuthError {
        let text: String
        switch error {
        case .timedOut(let s):
            text = "no answer within \(timeout) s (\(s))"
        case .errorReply(let name, _) where isNoService(name):
            text =
                "\(what): no Secret Service (\(SecretServiceKeyStore.service)) runs on the session bus and none "
                + "could be started (\(error))"
        case .errorReply(let name, _) where name == "org.freedesktop.Secret.Error.IsLocked":
            text = "\(what): the keyring is locked (\(error))"
        case .errorReply:
            text = "\(what) failed: \(error)"
        default:
            text = "\(what): \(error)"
        }
        return NativeAuthError(.keyringUnavailable, "Secret Service: \(text).")
    }

    /// Errors of the bus that mean no Secret Service runs and none could be started (activated).
    static func isNoService(_ errorName: String) -> Bool {
        errorName == "org.freedesktop.DBus.Error.ServiceUnknown"
            || errorName == "org.freedesktop.DBus.Error.NameHasNoOwner"
            || errorName.hasPrefix("org.freedesktop.DBus.Error.Spawn.")
    }
}
