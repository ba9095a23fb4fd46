import Foundation
import NativeAuthCABI
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// What the DPoP tests use of the emulator's generic provider and of the library (through the C ABI).
struct DPoPHarness {
    let emu: EmulatorProcess
    let oidc: JSONValue
    let todo: String
    let todoURL: String

    init(_ emu: EmulatorProcess) throws {
        self.emu = emu
        oidc = try #require(emu.ready["oidc"])
        todo = try #require(oidc["apis"]?.arrayValue?.first?["scopes"]?.arrayValue?.first?.stringValue)
        todoURL = try #require(oidc["apis"]?.arrayValue?.first?["url"]?.stringValue)
    }

    /// A client of the generic provider, with `"dpop": true` unless `extra` says otherwise.
    func client(_ extra: [String: JSONValue] = [:]) throws -> ABIClient {
        var config: [String: JSONValue] = [
            "authority": try #require(oidc["authority"]), "client_id": try #require(oidc["client_id"]),
            "authority_type": "oidc", "dpop": true,
        ]
        for (k, v) in extra { config[k] = v }
        return try ABIClient(emu, config)
    }

    /// Signs Ann in with a device code (the emulator approves it): the `signed_in` document.
    @discardableResult
    func signIn(_ c: ABIClient, email: String = annEmail) throws -> JSONValue {
        let start = c.call(na_sign_in_device_code, ["scopes": [.string(todo)]])
        let code = try #require(start.doc["user_code"]?.stringValue, "\(start.doc)")
        try emu.control("POST", "device/approve", ["user_code": .string(code), "email": .string(email)])
        let done = c.call(na_flow_submit, ["flow": .string(start.doc["flow"]?.stringValue ?? ""), "action": "wait"])
        #expect(done.doc["status"] == "signed_in", "\(done.doc)")
        return done.doc
    }

    /// The proofs the emulator received (`GET /_emulator/dpop`), oldest first: place and outcome.
    func proofs() throws -> [JSONValue] { try emu.control("GET", "dpop")["proofs"]?.arrayValue ?? [] }

    func outcomes(_ place: String) throws -> [String] {
        try proofs().filter { $0["place"]?.stringValue == place }.compactMap { $0["outcome"]?.stringValue }
    }

    /// RFC 7662 introspection of a token of the provider (its `cnf.jkt` says what it is bound to).
    func introspect(_ token: String) throws -> JSONValue {
        let issuer = try #require(oidc["issuer"]?.stringValue)
        let body = FormEncoding.encode([("token", token), ("client_id", oidc["client_id"]?.stringValue ?? "")])
        let r = try emu.http.send(
            HTTPRequest(
                method: "POST",
                url: issuer + "/introspect",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Array(body.utf8)
            )
        )
        return try JSONValue.parse(r.body)
    }

    /// The RFC 7638 thumbprint of the key in a proof's header (computed here, from the proof itself).
    static func thumbprint(ofProof proof: String) throws -> String {
        let jwt = try JWT(decoding: proof)
        let x = try #require(jwt.header["jwk"]?["x"]?.stringValue.flatMap(Base64.decode))
        let y = try #require(jwt.header["jwk"]?["y"]?.stringValue.flatMap(Base64.decode))
        let key = try P256PublicKey(x: x, y: y)
        #expect(key.verify(signature: jwt.signature, message: jwt.signingInput), "the proof verifies with its jwk")
        #expect(jwt.header["typ"] == "dpop+jwt" && jwt.header["alg"] == "ES256" && jwt.header["jwk"]?["d"] == nil)
        return key.thumbprint
    }

    /// The thumbprint of the key of the client's (only) account, from a proof na_dpop_proof makes.
    func accountThumbprint(_ c: ABIClient) throws -> String {
        let r = c.call(na_dpop_proof, ["method": "GET", "url": .string(todoURL)])
        return try Self.thumbprint(ofProof: try #require(r.doc["proof"]?.stringValue, "\(r.doc)"))
    }

    /// A plaintext cache file, read.
    static func cacheFile(_ path: String) throws -> JSONValue {
        try JSONValue.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    static func writeCacheFile(_ path: String, _ doc: JSONValue) throws {
        try Data(doc.serialized().utf8).write(to: URL(fileURLWithPath: path))
    }

    static func tempPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("na-dpop-\(UUID().uuidString)")
            .appendingPathComponent("cache.json").path
    }
}

extension JSONValue {
    /// The entries of a section of a cache document.
    func entries(_ section: String) -> [(key: String, value: JSONValue)] {
        guard case .object(let members)? = self[section] else { return [] }
        return members.map { ($0.key, $0.value) }.sorted { $0.key < $1.key }
    }
}
