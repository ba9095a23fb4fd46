import Synchronization

/// The tenant's configuration (changed at run time by `POST /_emulator/settings`) and its user accounts, keyed by
/// lower-case email. A leaf lock: nothing else is locked while it is held.
final class Directory: Sendable {
    private struct State {
        var config: EmulatorConfig
        var users: [String: UserRecord]

        init(_ config: EmulatorConfig) {
            self.config = config
            users = [:]
            for u in config.users { users[u.email.lowercased()] = u }
        }
    }

    private let state: Mutex<State>

    init(config: EmulatorConfig) { state = Mutex(State(config)) }

    /// Back to `config` and its users.
    func reset(to config: EmulatorConfig) { state.withLock { $0 = State(config) } }

    /// The configuration now (a copy: a request works with the settings it started with).
    var config: EmulatorConfig { state.withLock { $0.config } }

    /// Changes the configuration; when `change` throws, nothing changes.
    func updateConfig<E: Error>(_ change: (inout EmulatorConfig) throws(E) -> Void) throws(E) {
        try state.withLock { s throws(E) in
            var config = s.config
            try change(&config)
            s.config = config
        }
    }

    /// The application registration `id` names.
    func client(_ id: String) -> ClientApp? { config.clients.first { $0.clientID == id } }

    /// The account stored under `email` (already lower-case).
    func user(_ email: String) -> UserRecord? { state.withLock { $0.users[email] } }

    /// Every account (no order).
    var users: [UserRecord] { state.withLock { Array($0.users.values) } }

    /// Stores `user` under `email` (already lower-case), replacing any account there.
    func setUser(_ user: UserRecord, for email: String) { state.withLock { $0.users[email] = user } }

    /// Stores `user` under `email` unless an account is there already; true when stored.
    func addUser(_ user: UserRecord, for email: String) -> Bool {
        state.withLock { s in
            guard s.users[email] == nil else { return false }
            s.users[email] = user
            return true
        }
    }

    /// Changes the account under `email` in place (`nil`: none yet; set it to nil to remove the account).
    func updateUser<T: Sendable, E: Error>(
        _ email: String,
        _ change: (inout UserRecord?) throws(E) -> T
    ) throws(E) -> T {
        try state.withLock { s throws(E) -> T in
            var user = s.users[email]
            let result = try change(&user)
            s.users[email] = user
            return result
        }
    }

    /// Removes the account under `email`; true when there was one.
    func removeUser(_ email: String) -> Bool { state.withLock { $0.users.removeValue(forKey: email) != nil } }
}
