import NativeAuthJSON
import Synchronization

/// A native-auth request that got past the client check: its form, context, client and the settings it runs with.
struct NativeRequest {
    let form: [String: String]
    let ctx: RequestContext
    let client: ClientApp
    let config: EmulatorConfig

    var now: Double { ctx.now }
    subscript(_ field: String) -> String? { form[field] }
}

/// Native authentication (`Sources/NativeAuthEmulator/NativeAuth`): sign-in, sign-up, password reset, MFA and
/// strong-auth registration. Owns the flows in progress; the endpoints allowed at each stage are the transition table
/// (`Transitions.swift`).
///
/// Locking: each endpoint holds the flows lock for its whole answer (a continuation token is used at most once). Lock
/// order: flows, then the browser sessions (a password reset ends them), then grants, then the leaves (directory,
/// outbox, counters).
final class NativeAuthService: Sendable {
    private let flows = Mutex(FlowTable())
    let directory: Directory
    let outbox: Outbox
    let grants: Grants
    let minter: TokenMinter
    let counters: Counters
    let revocation: Revocation

    init(
        directory: Directory,
        outbox: Outbox,
        grants: Grants,
        minter: TokenMinter,
        counters: Counters,
        revocation: Revocation
    ) {
        self.directory = directory
        self.outbox = outbox
        self.grants = grants
        self.minter = minter
        self.counters = counters
        self.revocation = revocation
    }

    func reset() { flows.withLock { $0 = FlowTable() } }

    /// Answers a native-auth request: checks its client (a public client with native auth enabled), then runs `body`
    /// holding the flows lock.
    func transaction(
        _ form: [String: String],
        _ ctx: RequestContext,
        _ body: (inout FlowTable, NativeRequest) throws(ServiceError) -> EmulatorResponse
    ) throws(ServiceError) -> EmulatorResponse {
        let config = directory.config
        return try flows.withLock { table throws(ServiceError) -> EmulatorResponse in
            let client = try config.nativeClient(form)
            return try body(&table, NativeRequest(form: form, ctx: ctx, client: client, config: config))
        }
    }

    // MARK: - Shared checks

    /// The checks every start endpoint makes after the client's: challenge types, username syntax. Returns the types
    /// and the username in lower case.
    func startRequest(_ r: NativeRequest) throws(ServiceError) -> (Set<String>, String) {
        let types = try challengeTypes(r.form) ?? []
        guard let raw = r["username"], isValidEmail(raw) else { throw .invalidUsername() }
        return (types, raw.lowercased())
    }

    /// Parses `challenge_type`: known values only, `redirect` mandatory.
    func challengeTypes(_ form: [String: String], required: Bool = true) throws(ServiceError) -> Set<String>? {
        guard let raw = form["challenge_type"], !raw.trimmingCharacters(in: .whitespaces).isEmpty else {
            if required { throw .missingParameter("challenge_type") }
            return nil
        }
        let types = Set(raw.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init))
        for t in types where !["oob", "password", "redirect"].contains(t) { throw .unsupportedChallengeType }
        guard types.contains("redirect") else { throw .challengeTypeWithoutRedirect }
        return types
    }

    /// `capabilities` (SDKs) or `capability` (docs), space- or comma-separated.
    func capabilities(_ form: [String: String]) -> Set<String> {
        let raw = (form["capabilities"] ?? "") + " " + (form["capability"] ?? "")
        return Set(raw.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init))
    }

    /// A new flow of `kind` at `stage` for the request's client and `username`.
    func newFlow(
        _ kind: Flow.Kind,
        _ stage: Flow.Stage,
        username: String,
        types: Set<String>,
        _ r: NativeRequest
    ) -> Flow {
        Flow(
            kind: kind,
            stage: stage,
            clientID: r.client.clientID,
            username: username,
            challengeTypes: types,
            capabilities: capabilities(r.form)
        )
    }

    /// The account a flow is for.
    func user(_ f: Flow) throws(ServiceError) -> UserRecord {
        guard let user = directory.user(f.username) else { throw .userNotFound }
        return user
    }

    // MARK: - Browser required

    /// The `redirect_reason` when a native-auth request concerns a user who must use the browser (`requires_browser`):
    /// by `username` at the start endpoints, by the flow behind `continuation_token` afterwards. Standard grants at
    /// /token (refresh token, authorization code, device code) are not native auth and go on.
    func browserRequired(_ endpoint: NativeEndpoint, _ form: [String: String]) -> String? {
        if endpoint == .token, !NativeEndpoint.nativeGrants.contains(form["grant_type"] ?? "") { return nil }
        guard (try? directory.config.nativeClient(form)) != nil else { return nil }  // client errors come first
        var email = form["username"]?.lowercased()
        if let ct = form["continuation_token"], let f = flows.withLock({ $0.flows[ct] }) { email = f.username }
        guard let email, let user = directory.user(email), user.requiresBrowser else { return nil }
        counters.add(.browserRequired)
        return user.redirectReason ?? "This account must sign in through the browser."
    }

    /// The answer that sends the client to the browser.
    static func redirect(_ reason: String) -> EmulatorResponse {
        .json(["challenge_type": "redirect", "redirect_reason": .string(reason)])
    }

    // MARK: - One-time codes

    /// Sends a fresh one-time code for `f` (the previous one stops working), moves `f` to `stage` under a new
    /// continuation token and answers with the oob challenge.
    func codeChallenge(
        _ flow: Flow,
        _ step: NativeStep,
        stage: Flow.Stage,
        to target: String,
        purpose: String,
        from token: String,
        _ table: inout FlowTable,
        _ r: NativeRequest,
        labelKey: String = "challenge_target_label",
        channel: StrongMethod.Channel = .email,
        interval: Int? = nil
    ) -> EmulatorResponse {
        var f = flow
        f.stage = stage
        f.code = outbox.send(
            to: target,
            purpose: purpose,
            length: r.config.otpLength,
            now: r.now,
            channel: channel.rawValue
        )
        f.codeExpires = r.now + Double(r.config.lifetimes.otp)
        let next = table.advance(f, by: step, from: token, r)
        let label = labelKey == "challenge_target" ? target : StrongMethod(channel: channel, target: target).label
        var o: [String: JSONValue] = [
            "continuation_token": .string(next), "challenge_type": "oob", "binding_method": "prompt",
            "challenge_channel": .string(channel.rawValue), labelKey: .string(label),
            "code_length": .int(Int64(r.config.otpLength)),
        ]
        if let interval { o["interval"] = .int(Int64(interval)) }
        return .json(.object(o))
    }

    /// Checks a one-time code; a wrong or expired code keeps the flow usable (spec: retry allowed).
    func checkCode(_ f: Flow, _ r: NativeRequest) throws(ServiceError) {
        guard let oob = r["oob"], !oob.isEmpty else { throw .missingParameter("oob") }
        guard let code = f.code, f.codeExpires > r.now, constantTimeStringEquals(code, oob) else { throw .invalidOOB }
    }
}
