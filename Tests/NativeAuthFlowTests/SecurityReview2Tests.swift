import Foundation
import NativeAuthCABI
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// Findings of the second security review (issue 18) that need a server: each drives the library through the C ABI
/// against the emulator, made to misbehave.
@Suite struct SecurityReview2Tests {
    /// A character a terminal acts on: C0, DEL, C1, bidi formatting, line separators.
    static func hasUnsafeCharacter(_ s: String) -> Bool {
        s.unicodeScalars.contains {
            let v = $0.value
            return v < 0x20 || (0x7F...0x9F).contains(v) || [0x061C, 0x200E, 0x200F, 0x2028, 0x2029].contains(v)
                || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
        }
    }

    /// Finding 1: server-provided text (an error code, a suberror, attribute names) reaches messages and log lines
    /// without control characters, and bounded.
    @Test func serverTextInMessagesAndLogLinesIsCleaned() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        c.enableLogging()
        let hostile = "\u{1B}]0;pwned\u{07}\u{1B}[2K\u{9B}31m\u{202E}signed in\r\n" + String(repeating: "x", count: 500)
        try emu.control(
            "POST",
            "faults",
            [
                "path": "/oauth2/v2.0/initiate", "status": 400,
                "body": ["error": .string(hostile), "suberror": .string(hostile), "error_codes": [1]],
            ]
        )
        let r = c.call(na_sign_in, ["username": .string(annEmail)])
        #expect(r.rc == NA_ESERVER, "\(r.doc.serialized())")
        let message = try #require(r.doc["error"]?["message"]?.stringValue)
        #expect(!Self.hasUnsafeCharacter(message), "\(message.debugDescription)")
        #expect(message.count < 500, "bounded: \(message.count) characters")
        #expect(message.contains("signed in"), "the printable text stays: \(message)")
        let lines = c.logs.all
        #expect(lines.contains { $0.contains("initiate answered") }, "\(lines)")
        for line in lines { #expect(!Self.hasUnsafeCharacter(line), "\(line.debugDescription)") }
        // The document's own server fields are data: they are the server's, exactly (JSON escapes them).
        #expect(r.doc["error"]?["server"]?["error"]?.stringValue == hostile)
    }

    /// Finding 6: for a generic OpenID Connect provider, a discovered token endpoint on another origin, or plain
    /// http while the authority is https, is refused: no code or refresh token goes there.
    @Test func anOIDCTokenEndpointOnAnotherOriginIsRefused() throws {
        for tls in [false, true] {
            let emu = try EmulatorProcess(tls: tls)
            let oidc = try #require(emu.ready["oidc"])
            let authority = try #require(oidc["authority"]?.stringValue)
            let discovery = try emu.http.send(HTTPRequest(url: authority + "/.well-known/openid-configuration"))
            guard case .object(var doc) = try JSONValue.parse(discovery.body) else { throw TestFailure("discovery") }
            let port = try #require(URLComponents(string: emu.base)?.port)
            // Another origin of the same emulator (localhost instead of 127.0.0.1: the request would get through),
            // or, for the https emulator, the same host over plain http.
            doc["token_endpoint"] = .string(
                tls ? "http://127.0.0.1:\(port)/oidc/token" : "http://localhost:\(port)/oidc/token"
            )
            try emu.control(
                "POST",
                "faults",
                ["path": "/oidc/.well-known/openid-configuration", "status": 200, "body": .object(doc), "count": 10]
            )
            var config: [String: JSONValue] = [
                "authority": .string(authority), "client_id": try #require(oidc["client_id"]),
                "authority_type": "oidc",
            ]
            if let ca = emu.caFile { config["ca_bundle"] = .string(ca) }
            let c = try ABIClient(emu, config)
            try emu.clearLog()
            let r = c.call(na_sign_in_device_code, ["scopes": ["openid"]])
            #expect(r.rc == NA_ESERVER, "\(r.doc.serialized())")
            let message = r.doc["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains("token_endpoint"), "\(message)")
            #expect(try emu.requests("/oidc/token").isEmpty)
            #expect(try emu.requests("/oidc/devicecode").isEmpty)
        }
    }

    /// Finding 9: an ID token naming critical header parameters (`crit`) is refused; `azp`, when present, must be
    /// this client even with one audience.
    @Test func critAndAzpAreChecked() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        try emu.control("POST", "token_answers", ["id_token_header": ["crit": ["exp"], "exp": 1]])
        let crit = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        #expect(crit.rc == NA_ESERVER && crit.doc.errorCode == "id_token_invalid", "\(crit.doc.serialized())")
        let critMessage = crit.doc["error"]?["message"]?.stringValue ?? ""
        #expect(critMessage.contains("crit"), "\(critMessage)")
        try emu.control("POST", "token_answers", ["id_token_claims": ["azp": "another-client"]])
        let azp = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        #expect(azp.rc == NA_ESERVER && azp.doc.errorCode == "id_token_invalid", "\(azp.doc.serialized())")
        let azpMessage = azp.doc["error"]?["message"]?.stringValue ?? ""
        #expect(azpMessage.contains("azp"), "\(azpMessage)")
        #expect(c.call(na_get_account, .object([:])).rc == NA_ENOTFOUND, "nothing was cached")
        // The same client id as azp is fine.
        try emu.control("POST", "token_answers", ["id_token_claims": ["azp": .string(emu.clientID)]])
        let ok = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        #expect(ok.rc == NA_OK, "\(ok.doc.serialized())")
    }

    /// Finding 8: the emulator's ready file (it holds the control token) and its TLS key are 0600 from the start,
    /// created anew: a symbolic link planted at the ready file's temporary name is replaced, not written through.
    @Test func emulatorFilesAreCreatedPrivately() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-emu-files-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let victim = dir.appendingPathComponent("victim.txt")
        try Data("untouched".utf8).write(to: victim)
        let ready = dir.appendingPathComponent("ready.json")
        try FileManager.default.createSymbolicLink(
            atPath: ready.path + ".tmp",
            withDestinationPath: victim.path
        )
        try FileManager.default.createSymbolicLink(
            atPath: dir.appendingPathComponent("server-key.pem").path,
            withDestinationPath: victim.path
        )
        let p = Process()
        p.executableURL = URL(fileURLWithPath: EmulatorProcess.binary)
        p.arguments = ["--quiet", "--port", "0", "--ready-file", ready.path, "--tls", "--tls-dir", dir.path]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        defer {
            p.terminate()
            p.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: ready.path) {
            guard p.isRunning, Date() < deadline else { throw TestFailure("emulator did not start") }
            usleep(10_000)
        }
        func mode(_ path: String) throws -> Int {
            (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
        }
        #expect(try mode(ready.path) == 0o600)
        #expect(try mode(dir.appendingPathComponent("server-key.pem").path) == 0o600)
        #expect(String(decoding: try Data(contentsOf: victim), as: UTF8.self) == "untouched")
        let keyType = try FileManager.default.attributesOfItem(
            atPath: dir.appendingPathComponent("server-key.pem").path
        )
        #expect(keyType[.type] as? FileAttributeType == .typeRegular)
    }
}
