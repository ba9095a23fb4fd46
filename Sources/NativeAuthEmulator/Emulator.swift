import Foundation
import NativeAuthCrypto
import NativeAuthJSON
import Synchronization

/// The emulated tenant: its configuration, signing key, clock and state. Thread-safe; `handle` is the whole server
/// logic (the HTTP adapter in `EmulatorServer` only moves bytes and applies injected faults).
public final class Emulator: Sendable {
    let initialConfig: EmulatorConfig
    let signingKey: RSAPrivateKey
    let kid: String
    let jwk: JSONValue
    /// The generic OIDC provider's own signing key (`/oidc/jwks`).
    let oidcSigningKey: RSAPrivateKey
    let oidcKid: String
    let oidcJWK: JSONValue
    let clock = EmulatorClock()
    let store: Mutex<Store>
    let counters = Counters()
    /// The secret every `/_emulator/*` request must carry in `X-Emulator-Token` (32 random bytes, base64url). It is
    /// in the ready document only, so that only whoever started the emulator can drive its controls.
    public let controlToken: String
    private let base = Mutex<String>("http://127.0.0.1")

    public init(config: EmulatorConfig = .demo) throws {
        initialConfig = config
        signingKey = try RSAPrivateKey.generate()
        let (n, e) = try signingKey.publicComponents()
        kid = Ids.token("k", bytes: 6)
        jwk = [
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": .string(kid), "n": .string(Base64.urlEncode(n)),
            "e": .string(Base64.urlEncode(e)),
        ]
        oidcSigningKey = try RSAPrivateKey.generate()
        let (on, oe) = try oidcSigningKey.publicComponents()
        oidcKid = Ids.token("ok", bytes: 6)
        oidcJWK = [
            "kty": "RSA", "use": "sig", "alg": "RS256", "kid": .string(oidcKid), "n": .string(Base64.urlEncode(on)),
            "e": .string(Base64.urlEncode(oe)),
        ]
        store = Mutex(Store(config: config))
        controlToken = Base64.urlEncode(try SecureRandom.bytes(32))
    }

    /// The externally visible base URL ("http://127.0.0.1:PORT" or "https://…"). Set by the server once bound.
    public var baseURL: String {
        get { base.withLock { $0 } }
        set { base.withLock { $0 = newValue } }
    }

    public var config: EmulatorConfig { store.withLock { $0.config } }

    var tenantDomain: String { initialConfig.tenantDomain }
    var tenantID: String { initialConfig.tenantID }
    var issuer: String { "\(baseURL)/\(tenantID)/v2.0" }

    /// Resets users, flows, tokens, outbox, request log, faults and counters to the starting configuration.
    public func reset() {
        store.withLock { s in s = Store(config: initialConfig) }
        counters.reset()
    }

    // MARK: - Dispatch

    /// Handles one request. Never throws, never traps on input.
    public func handle(_ req: EmulatorRequest) -> EmulatorResponse { handle(req, fault: nil) }

    /// Handles one request under an injected fault: a stage-"before" fault with an answer of its own replaces the
    /// service; a stage-"after" one answers over it. The request log says what the fault did.
    func handle(_ req: EmulatorRequest, fault: Fault?) -> EmulatorResponse {
        let ctx = RequestContext(
            correlationID: req.headers["client-request-id"] ?? Ids.uuid(),
            traceID: Ids.uuid(),
            now: clock.now(),
            baseURL: baseURL
        )
        var response: EmulatorResponse
        var handledStatus: Int? = nil
        if let fault, fault.stage == .before, fault.replacesAnswer {
            response = faultAnswer(fault, ctx, handled: nil)
        } else {
            response = serve(req, ctx)
            if let fault, fault.stage == .after, fault.replacesAnswer || fault.drop {
                handledStatus = response.status
                if fault.replacesAnswer { response = faultAnswer(fault, ctx, handled: response) }
            }
        }
        if let fault { response = reshape(response, fault) }
        response.headers.append(("client-request-id", ctx.correlationID))
        response.headers.append(("x-ms-request-id", ctx.traceID))
        if !req.path.hasPrefix("/_emulator") {
            let delivered = fault?.drop == true ? 0 : response.status
            record(req, status: delivered, ctx, fault: fault?.kind, handledStatus: handledStatus)
        }
        return response
    }

    private func serve(_ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        do {
            return try route(req, ctx)
        } catch let e as ServiceError {
            return errorResponse(e, ctx)
        } catch {
            return errorResponse(
                .serverError,
                ctx
            )
        }
    }

    func errorResponse(_ e: ServiceError, _ ctx: RequestContext) -> EmulatorResponse { e.response(ctx) }

    /// The tenant segment must name this tenant (domain or id, case-insensitive).
    func isTenant(_ segment: Substring) -> Bool {
        let s = segment.lowercased()
        return s == tenantDomain.lowercased() || s == tenantID.lowercased()
    }

    private func route(_ req: EmulatorRequest, _ ctx: RequestContext) throws -> EmulatorResponse {
        try makeRouter().handle(Call(request: req, context: ctx))
    }

    // MARK: - Secrets presented

    /// Counts the passwords and refresh tokens the service receives (whatever it answers), and refresh-token values
    /// received more than once: how a test proves a client never presents a secret twice, e.g. after a timeout.
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
        guard password || !(refreshToken ?? "").isEmpty else { return }
        store.withLock { s in
            if password { counters.add(.passwordPresentations) }
            if let rt = refreshToken, !rt.isEmpty {
                counters.add(.refreshTokenPresentations)
                if !s.presentedRefreshTokens.insert(rt).inserted { counters.add(.refreshTokenPresentedTwice) }
            }
        }
    }

    // MARK: - Request log

    static let secretFields: Set<String> = [
        "password", "new_password", "oob", "continuation_token", "refresh_token", "code", "code_verifier",
        "device_code",
        "client_secret", "client_assertion", "id_token_hint", "assertion", "attributes", "token",
    ]

    private func record(
        _ req: EmulatorRequest,
        status: Int,
        _ ctx: RequestContext,
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
        for name in [
            "x-client-sku", "x-client-ver", "x-client-os", "content-type", "return-client-request-id", "user-agent",
        ] {
            if let v = req.headers[name] { headers[name] = v }
        }
        if req.headers["authorization"] != nil { headers["authorization"] = "***" }
        store.withLock { s in
            s.seq += 1
            counters.add(.requests)
            counters.add(path: req.path)
            s.log.append(
                LogEntry(
                    seq: s.seq,
                    time: ctx.now,
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
            if s.log.count > 10_000 { s.log.removeFirst(s.log.count - 10_000) }
        }
    }

    /// Records a request answered by an injected fault (the adapter calls this).
    func recordFault(_ req: EmulatorRequest, status: Int, kind: String) {
        let ctx = RequestContext(
            correlationID: req.headers["client-request-id"] ?? "",
            traceID: "",
            now: clock.now(),
            baseURL: baseURL
        )
        record(req, status: status, ctx, fault: kind)
    }

    /// The next injected fault for `path`, if any (consumes one use).
    func takeFault(for path: String) -> Fault? {
        if path.hasPrefix("/_emulator") { return nil }  // the controls always work
        return store.withLock { s in
            guard let i = s.faults.firstIndex(where: { path.hasSuffix($0.pathSuffix) && $0.remaining > 0 }) else {
                return nil
            }
            s.faults[i].remaining -= 1
            let f = s.faults[i]
            if s.faults[i].remaining == 0 { s.faults.remove(at: i) }
            return f
        }
    }

    func countConnection() { counters.add(.connections) }

    // MARK: - Ready document

    /// What the emulator prints when ready: enough for scripts and tests to need no second source of truth.
    public func readyDocument(caFile: String?) -> JSONValue {
        let c = config
        var users: [JSONValue] = []
        for u in c.users {
            var o: [String: JSONValue] = [
                "email": .string(u.email), "kind": .string(u.kind), "display_name": .string(u.displayName),
            ]
            if let p = u.password { o["password"] = .string(p) }
            if let m = u.mfaEmail { o["mfa_email"] = .string(m) }
            if u.requiresBrowser { o["requires_browser"] = true }
            users.append(.object(o))
        }
        let publicClient = c.clients.first { $0.isPublic && $0.nativeAuthEnabled }
        let confidential = c.clients.first { !$0.isPublic }
        var doc: [String: JSONValue] = [
            "base_url": .string(baseURL),
            "authority": .string("\(baseURL)/\(c.tenantDomain)"),
            "authority_by_id": .string("\(baseURL)/\(c.tenantID)"),
            "oidc_authority": .string("\(baseURL)/\(c.tenantDomain)/v2.0"),
            "tenant_domain": .string(c.tenantDomain),
            "tenant_id": .string(c.tenantID),
            "client_id": publicClient.map { .string($0.clientID) } ?? .null,
            "confidential_client_id": confidential.map { .string($0.clientID) } ?? .null,
            "apis": .array(
                c.apis.map { api in
                    [
                        "name": .string(api.name), "url": .string(baseURL + api.path),
                        "scopes": .array(api.permissions.map { .string(api.scope($0)) }),
                    ]
                }
            ),
            "users": .array(users),
            "device_verification_uri": .string("\(baseURL)/devicelogin"),
            "oidc": oidcReadyDocument(c),
            "controls": .string("\(baseURL)/_emulator"),
            "control_token": .string(controlToken),
            "pid": .int(Int64(ProcessInfo.processInfo.processIdentifier)),
        ]
        if let caFile { doc["ca_file"] = .string(caFile) }
        return .object(doc)
    }
}
