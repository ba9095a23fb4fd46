import Foundation
import NativeAuthCABI
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthNet
import Synchronization
import Testing

/// The emulator executable, started for one test on an ephemeral port and stopped after it.
final class EmulatorProcess: @unchecked Sendable {
    let process = Process()
    let ready: JSONValue
    let base: String
    let authority: String
    let clientID: String
    let caFile: String?
    /// The ready document's `control_token`, sent as `X-Emulator-Token` with every control call.
    let controlToken: String
    let http: CurlHTTPClient

    static var binary: String {
        if let p = ProcessInfo.processInfo.environment["NATIVEAUTH_EMULATOR"] { return p }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/nativeauth-emulator").path
    }

    init(tls: Bool = false, config: JSONValue? = nil) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-flow-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let readyFile = dir.appendingPathComponent("ready.json")
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw TestFailure(
                "emulator not built at \(Self.binary): run `swift build --product nativeauth-emulator` (make test does)"
            )
        }
        process.executableURL = URL(fileURLWithPath: Self.binary)
        var args = ["--quiet", "--port", "0", "--ready-file", readyFile.path]
        if tls { args += ["--tls", "--tls-dir", dir.path] }
        if let config {
            let file = dir.appendingPathComponent("config.json")
            try Data(config.serialized().utf8).write(to: file)
            args += ["--config", file.path]
        }
        process.arguments = args
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: readyFile.path) {  // readiness, not a fixed delay
            guard process.isRunning, Date() < deadline else { throw TestFailure("emulator did not start") }
            usleep(10_000)
        }
        ready = try JSONValue.parse(Array(try Data(contentsOf: readyFile)))
        base = ready["base_url"]?.stringValue ?? ""
        authority = ready["authority"]?.stringValue ?? ""
        clientID = ready["client_id"]?.stringValue ?? ""
        caFile = ready["ca_file"]?.stringValue
        controlToken = ready["control_token"]?.stringValue ?? ""
        var o = HTTPClientOptions()
        o.caBundlePath = caFile
        http = CurlHTTPClient(options: o)
    }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    @discardableResult
    func control(_ method: String, _ path: String, _ body: JSONValue? = nil) throws -> JSONValue {
        let r = try http.send(
            HTTPRequest(
                method: method,
                url: base + "/_emulator/" + path,
                headers: [("Content-Type", "application/json"), ("X-Emulator-Token", controlToken)],
                body: body?.serializedBytes() ?? []
            )
        )
        return (try? JSONValue.parse(r.body)) ?? .null
    }

    func lastCode(_ email: String) throws -> String {
        guard let c = try control("GET", "outbox?to=" + email)["messages"]?.arrayValue?.last?["code"]?.stringValue
        else {
            throw TestFailure("no code sent to \(email)")
        }
        return c
    }

    func allCodes() throws -> [String] {
        (try control("GET", "outbox")["messages"]?.arrayValue ?? []).compactMap { $0["code"]?.stringValue }
    }

    /// Requests the emulator logged (controls excluded), optionally only those whose path ends with `suffix`.
    func requests(_ suffix: String? = nil) throws -> [JSONValue] {
        (try control("GET", "requests" + (suffix.map { "?path=" + $0 } ?? ""))["requests"]?.arrayValue) ?? []
    }

    func clearLog() throws { try control("DELETE", "requests") }

    var apiScopes: (todo: String, notes: String) {
        let apis = ready["apis"]?.arrayValue ?? []
        return (
            apis.first?["scopes"]?.arrayValue?.first?.stringValue ?? "",
            apis.last?["scopes"]?.arrayValue?.first?.stringValue ?? ""
        )
    }

    var apiURLs: (todo: String, notes: String) {
        let apis = ready["apis"]?.arrayValue ?? []
        return (apis.first?["url"]?.stringValue ?? "", apis.last?["url"]?.stringValue ?? "")
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// A na_client driven exactly as C drives it: JSON strings in, JSON strings out, every string freed.
final class ABIClient: @unchecked Sendable {
    let handle: OpaquePointer?
    let logs = LogCollector()
    /// Every output document this client produced (for the secrets test).
    let outputs = Mutex<[String]>([])

    convenience init(_ emu: EmulatorProcess, _ extra: [String: JSONValue] = [:]) throws {
        var config: [String: JSONValue] = [
            "v": 1, "authority": .string(emu.authority), "client_id": .string(emu.clientID),
            "capabilities": ["mfa_required", "registration_required"],
        ]
        if let ca = emu.caFile { config["ca_bundle"] = .string(ca) }
        for (k, v) in extra { config[k] = v }
        try self.init(config: config)
    }

    /// A client of another server (a test's own), with the emulator's client id.
    convenience init(authority: String, _ extra: [String: JSONValue] = [:]) throws {
        var config: [String: JSONValue] = ["authority": .string(authority), "client_id": "c1"]
        for (k, v) in extra { config[k] = v }
        try self.init(config: config)
    }

    init(config: [String: JSONValue]) throws {
        var h: OpaquePointer? = nil
        var err: UnsafeMutablePointer<CChar>? = nil
        let rc = na_client_new(JSONValue.object(config).serialized(), &h, &err)
        defer { na_string_free(err) }
        guard rc == 0, let h else {
            throw TestFailure("na_client_new failed: \(err.map { String(cString: $0) } ?? "")")
        }
        handle = h
    }

    deinit { na_client_free(handle) }

    typealias Op = (OpaquePointer?, UnsafePointer<CChar>?, OutString?) -> Int32

    @discardableResult
    func call(_ op: Op, _ request: JSONValue) -> (rc: Int32, doc: JSONValue) {
        var out: UnsafeMutablePointer<CChar>? = nil
        let rc = op(handle, request.serialized(), &out)
        defer { na_string_free(out) }
        let text = out.map { String(cString: $0) } ?? ""
        outputs.withLock { $0.append(text) }
        return (rc, (try? JSONValue.parse(text)) ?? .null)
    }

    func enableLogging() {
        let ctx = Unmanaged.passUnretained(logs).toOpaque()
        _ = na_client_set_log_callback(
            handle,
            4,
            { level, message, correlation, user in
                guard let user, let message else { return }
                Unmanaged<LogCollector>.fromOpaque(user).takeUnretainedValue().add(String(cString: message))
            },
            ctx
        )
    }
}

final class LogCollector: Sendable {
    let lines = Mutex<[String]>([])
    func add(_ s: String) { lines.withLock { $0.append(s) } }
    var all: [String] { lines.withLock { $0 } }
}

let NA_OK: Int32 = 0
let NA_EINVAL: Int32 = -1
let NA_EAUTH: Int32 = -2
let NA_ENOTFOUND: Int32 = -3
let NA_EINTERACTION: Int32 = -4
let NA_ENETWORK: Int32 = -5
let NA_ESERVER: Int32 = -6
let NA_ESTATE: Int32 = -7

extension JSONValue {
    var errorCode: String? { self["error"]?["code"]?.stringValue }
}

let annEmail = "ann@contoso.com"
let annPassword = "Demo-Passw0rd!"
