import NativeAuthJSON
import Synchronization

/// One request as the log keeps it (`GET /_emulator/requests`): form fields and a few headers, secrets masked.
struct LogEntry {
    var seq: Int
    var time: Double
    var method: String
    var path: String
    var status: Int
    var clientRequestID: String?
    var fields: [String: String]
    var headers: [String: String]
    var fault: String?
    /// With a stage-"after" fault: the status the service answered before the fault spoiled it.
    var handledStatus: Int? = nil

    var json: JSONValue {
        var o: [String: JSONValue] = [
            "seq": .int(Int64(seq)), "time": .double(time), "method": .string(method), "path": .string(path),
            "status": .int(Int64(status)),
            "fields": .object(fields.mapValues { .string($0) }), "headers": .object(headers.mapValues { .string($0) }),
            "client_request_id": clientRequestID.map { .string($0) } ?? .null,
        ]
        if let fault { o["fault"] = .string(fault) }
        if let handledStatus { o["handled_status"] = .int(Int64(handledStatus)) }
        return .object(o)
    }
}

/// The request log, the sequence numbers it shares with the authorize and end-session logs, and the secrets the
/// service received (how a test proves a client never presents a secret twice). A leaf lock (it counts after
/// unlocking).
final class RequestLog: Sendable {
    private struct State {
        var entries: [LogEntry] = []
        var seq = 0
        /// Every refresh-token value the token endpoints have received.
        var presentedRefreshTokens: Set<String> = []
    }

    static let capacity = 10_000
    static let secretFields: Set<String> = [
        "password", "new_password", "oob", "continuation_token", "refresh_token", "code", "code_verifier",
        "device_code",
        "client_secret", "client_assertion", "id_token_hint", "assertion", "attributes", "token",
    ]
    static let loggedHeaders = [
        "x-client-sku", "x-client-ver", "x-client-os", "content-type", "return-client-request-id", "user-agent",
        "dpop",
    ]

    private let state = Mutex(State())
    private let counters: Counters

    init(counters: Counters) { self.counters = counters }

    func reset() { state.withLock { $0 = State() } }

    /// The next number of the sequence the three logs share.
    func nextSequence() -> Int {
        state.withLock { s in
            s.seq += 1
            return s.seq
        }
    }

    /// Logs a request answered with `status` (0: dropped), and counts it.
    func record(
        _ req: EmulatorRequest,
        status: Int,
        time: Double,
        fault: String? = nil,
        handledStatus: Int? = nil
    ) {
        var fields: [String: String] = [:]
        if req.method == "POST", req.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") ?? true,
            let form = Form.decode(String(decoding: req.body, as: UTF8.self))
        {
            for (k, v) in form { fields[k] = Self.secretFields.contains(k) ? "***" : v }
        }
        var headers: [String: String] = [:]
        for name in Self.loggedHeaders {
            if let v = req.headers[name] { headers[name] = v }
        }
        // The app's own x- headers (request_headers: fraud and bot protection), as a test checks where they went.
        for (name, v) in req.headers where name.hasPrefix("x-") && name != "x-emulator-token" { headers[name] = v }
        if req.headers["authorization"] != nil { headers["authorization"] = "***" }
        state.withLock { s in
            s.seq += 1
            s.entries.append(
                LogEntry(
                    seq: s.seq,
                    time: time,
                    method: req.method,
                    path: req.path,
                    status: status,
                    clientRequestID: req.headers["client-request-id"],
                    fields: fields,
                    headers: headers,
                    fault: fault,
                    handledStatus: handledStatus
                )
            )
            if s.entries.count > Self.capacity { s.entries.removeFirst(s.entries.count - Self.capacity) }
        }
        // Counted once logged: a test that sees the counter finds the entry.
        counters.add(.requests)
        counters.add(path: req.path)
    }

    /// Counts the passwords and refresh tokens the service receives at `endpoint` (whatever it answers), and
    /// refresh-token values received more than once.
    func countPresentedSecrets(_ endpoint: String, _ form: [String: String]) {
        func present(_ field: String) -> Bool { !(form[field] ?? "").isEmpty }
        let grant = form["grant_type"] ?? ""
        let password: Bool
        switch endpoint {
        case "oauth2/v2.0/token", "oidc/token": password = grant == "password" && present("password")
        case "signup/v1.0/start": password = present("password")
        case "signup/v1.0/continue": password = grant == "password" && present("password")
        case "resetpassword/v1.0/submit": password = present("new_password")
        default: password = false
        }
        let tokenEndpoint = endpoint == "oauth2/v2.0/token" || endpoint == "oidc/token"
        let refreshToken = tokenEndpoint && grant == "refresh_token" ? form["refresh_token"] : nil
        if password { counters.add(.passwordPresentations) }
        guard let refreshToken, !refreshToken.isEmpty else { return }
        counters.add(.refreshTokenPresentations)
        if !state.withLock({ $0.presentedRefreshTokens.insert(refreshToken).inserted }) {
            counters.add(.refreshTokenPresentedTwice)
        }
    }

    /// The entries whose path ends with `suffix` (all when nil), oldest first.
    func json(pathSuffix suffix: String?) -> [JSONValue] {
        state.withLock { s in s.entries.filter { suffix == nil || $0.path.hasSuffix(suffix ?? "") }.map(\.json) }
    }

    func clear() { state.withLock { $0.entries.removeAll() } }
}
