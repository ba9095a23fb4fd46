import Foundation
import NativeAuthEmulator
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthNet
import Testing

/// An emulator started in-process on an ephemeral port, and a raw HTTP client speaking the wire protocol.
final class Harness: Sendable {
    let server: EmulatorServer
    let http: CurlHTTPClient
    let base: String
    let authority: String
    /// The ready document's `control_token`: every `/_emulator/*` call sends it as `X-Emulator-Token`.
    let controlToken: String
    let clientID = "00001111-aaaa-2222-bbbb-3333cccc4444"

    static func start(config: EmulatorConfig = .demo, tls: Bool = false) async throws -> Harness {
        let server = try await EmulatorServer.start(emulator: try Emulator(config: config), tls: tls)
        return Harness(server: server)
    }

    private init(server: EmulatorServer) {
        self.server = server
        var o = HTTPClientOptions()
        o.caBundlePath = server.caFile
        o.totalTimeoutMs = 15_000
        o.defaultHeaders = [("x-client-SKU", "emulator-tests"), ("x-client-Ver", "1")]
        http = CurlHTTPClient(options: o)
        base = server.baseURL
        authority = server.baseURL + "/contoso.onmicrosoft.com"
        controlToken = server.readyDocument["control_token"]?.stringValue ?? ""
    }

    func stop() async { await server.stop() }

    struct Reply {
        let status: Int
        let json: JSONValue
        let response: HTTPResponse
        subscript(_ key: String) -> JSONValue? { json[key] }
        var string: [String: String] { (json.objectValue ?? [:]).compactMapValues(\.stringValue) }
        var text: String { String(decoding: response.body, as: UTF8.self) }
    }

    /// POSTs a form to `authority + suffix`; `client_id` is added unless given.
    /// Sends a request on a Dispatch thread: the in-process server runs on Swift concurrency's cooperative pool,
    /// which a blocking libcurl call must never occupy.
    func send(_ request: HTTPRequest, client: CurlHTTPClient? = nil) async throws -> Reply {
        let http = client ?? self.http
        let r: HTTPResponse = try await withCheckedThrowingContinuation { cont in
            // A thread of its own: libdispatch's global queues share their (CPU-count) worker limit with the
            // cooperative pool on Linux, so blocking there can starve the server.
            Thread.detachNewThread {
                do { cont.resume(returning: try http.send(request)) } catch { cont.resume(throwing: error) }
            }
        }
        return Reply(status: r.status, json: (try? JSONValue.parse(r.body)) ?? .null, response: r)
    }

    /// POSTs a form to `authority + suffix`; `client_id` is added unless given.
    func post(
        _ suffix: String,
        _ fields: [String: String],
        addClient: Bool = true,
        headers: [(name: String, value: String)] = []
    ) async throws -> Reply {
        var f = fields.map { ($0.key, $0.value) }.sorted { $0.0 < $1.0 }
        if addClient && fields["client_id"] == nil { f.append(("client_id", clientID)) }
        return try await send(.form(url: authority + suffix, fields: f, headers: headers))
    }

    func get(_ url: String, headers: [(name: String, value: String)] = []) async throws -> Reply {
        try await send(HTTPRequest(url: url.hasPrefix("http") ? url : base + url, headers: headers))
    }

    func control(
        _ method: String,
        _ path: String,
        _ body: JSONValue? = nil,
        token: String? = nil
    ) async throws -> Reply {
        try await send(
            HTTPRequest(
                method: method,
                url: base + "/_emulator/" + path,
                headers: [("Content-Type", "application/json"), ("X-Emulator-Token", token ?? controlToken)],
                body: body?.serializedBytes() ?? []
            )
        )
    }

    /// Polls the counters until `name` reaches `value` (a condition, not a fixed sleep); false after 10 s.
    func waitForCounter(_ name: String, _ value: Int64) async throws -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if try await control("GET", "counters")[name]?.intValue == value { return true }
            await Task.yield()
        }
        return false
    }

    /// The newest code sent to `email`.
    func lastCode(_ email: String) async throws -> String {
        let r = try await control("GET", "outbox?to=" + email)
        guard let code = r["messages"]?.arrayValue?.last?["code"]?.stringValue else {
            throw HarnessError("no code was sent to \(email)")
        }
        return code
    }

    static let types = "oob password redirect"
    static let allCaps = "mfa_required registration_required"

    /// initiate → challenge, for a password user: returns the continuation token for /token.
    func passwordChallenge(_ user: String, caps: String = allCaps) async throws -> String {
        let i = try await post(
            "/oauth2/v2.0/initiate",
            ["username": user, "challenge_type": Self.types, "capabilities": caps]
        )
        try expect(i.status == 200, "initiate: \(i.text)")
        let c = try await post(
            "/oauth2/v2.0/challenge",
            ["continuation_token": i.string["continuation_token"] ?? "", "challenge_type": Self.types]
        )
        try expect(c["challenge_type"] == "password", "challenge: \(c.text)")
        return c.string["continuation_token"] ?? ""
    }

    func passwordSignIn(
        _ user: String,
        _ password: String,
        scope: String = "openid profile offline_access"
    ) async throws -> Reply {
        let ct = try await passwordChallenge(user)
        return try await post(
            "/oauth2/v2.0/token",
            [
                "continuation_token": ct, "grant_type": "password", "password": password,
                "scope": scope, "client_info": "true", "username": user,
            ]
        )
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

func expect(_ cond: Bool, _ what: @autoclosure () -> String) throws {
    if !cond { throw HarnessError(what()) }
}

/// Runs `body` with a fresh emulator and stops it afterwards.
func withEmulator(
    config: EmulatorConfig = .demo,
    tls: Bool = false,
    _ body: (Harness) async throws -> Void
) async throws {
    let h = try await Harness.start(config: config, tls: tls)
    do {
        try await body(h)
    } catch {
        await h.stop()
        throw error
    }
    await h.stop()
}

let ann = ("ann@contoso.com", "Demo-Passw0rd!")
let olivia = "olivia@contoso.com"
let mike = ("mike@contoso.com", "Mfa-Passw0rd!")
let rita = ("rita@contoso.com", "Reg-Passw0rd!")
let todoRead = "api://11112222-bbbb-3333-cccc-4444dddd5555/ToDoList.Read"
let notesRead = "api://22223333-cccc-4444-dddd-5555eeee6666/Notes.Read"
