/// What the browser side holds: authorization requests in progress, browser sessions, and the authorize and
/// end-session logs.
struct BrowserState {
    static let logCapacity = 10_000

    var pending: [String: PendingAuthorization] = [:]
    /// Browser sessions by cookie value.
    var sessions: [String: BrowserSession] = [:]
    var authorizeLog: [AuthorizeLogEntry] = []
    var endSessionLog: [EndSessionLogEntry] = []

    /// Signs `user` out of every browser session (of `idp`, or of both); returns how many sessions held them.
    mutating func endSessions(of user: String, idp: IdP?) -> Int {
        var n = 0
        for (sid, var session) in sessions where idp == nil || session.idp == idp {
            guard session.users.contains(user) else { continue }
            n += 1
            session.users.removeAll { $0 == user }
            session.authTimes.removeValue(forKey: user)
            sessions[sid] = session.users.isEmpty ? nil : session
        }
        return n
    }

    /// The accounts of browser session `sid` with `idp` that still exist in `directory`.
    func sessionUsers(_ sid: String?, idp: IdP, _ directory: Directory) -> [String] {
        guard let sid, let session = sessions[sid], session.idp == idp else { return [] }
        return session.users.filter { directory.user($0) != nil }
    }

    /// Records `user` as signed in to browser session `sid` (a new one when nil or gone); returns its id and whether
    /// the session is new.
    mutating func signIn(
        toSession sid: String?,
        idp: IdP,
        user: String,
        authTime: Double
    ) -> (id: String, started: Bool) {
        var id: String
        var session: BrowserSession
        var started = false
        if let sid, let existing = sessions[sid], existing.idp == idp {
            id = sid
            session = existing
        } else {
            id = Ids.token("S.", bytes: 18)
            session = BrowserSession(idp: idp, users: [], authTimes: [:])
            started = true
        }
        session.users.removeAll { $0 == user }
        session.users.insert(user, at: 0)
        session.authTimes[user] = authTime
        sessions[id] = session
        return (id, started)
    }

    mutating func log(_ entry: AuthorizeLogEntry) {
        authorizeLog.append(entry)
        if authorizeLog.count > Self.logCapacity { authorizeLog.removeFirst(authorizeLog.count - Self.logCapacity) }
    }

    mutating func log(_ entry: EndSessionLogEntry) {
        endSessionLog.append(entry)
        if endSessionLog.count > Self.logCapacity {
            endSessionLog.removeFirst(endSessionLog.count - Self.logCapacity)
        }
    }

    mutating func updateAuthorizeLog(_ seq: Int, _ change: (inout AuthorizeLogEntry) -> Void) {
        guard let i = authorizeLog.lastIndex(where: { $0.seq == seq }) else { return }
        change(&authorizeLog[i])
    }
}
