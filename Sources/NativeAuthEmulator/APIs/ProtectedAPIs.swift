import NativeAuthCrypto
import NativeAuthJSON
import Synchronization

/// The sample protected APIs (`EmulatorConfig.apis`, e.g. `/api/todolist`): resource servers that check bearer tokens
/// of either provider and keep a list of items per user. A leaf lock (its items).
final class ProtectedAPIs: Sendable {
    private let items = Mutex<[String: [JSONValue]]>([:])
    private let challenges = Mutex<[ClaimsChallenge]>([])
    let directory: Directory
    let grants: Grants
    let minter: TokenMinter
    let dpop: DPoPVerifier

    init(directory: Directory, grants: Grants, minter: TokenMinter, dpop: DPoPVerifier) {
        self.directory = directory
        self.grants = grants
        self.minter = minter
        self.dpop = dpop
    }

    func reset() {
        items.withLock { $0 = [:] }
        challenges.withLock { $0 = [] }
    }

    /// A Continuous Access Evaluation event (`POST /_emulator/api_challenges`): the APIs answer the access tokens
    /// that exist now (of `email`, or everyone's) — or, with `always`, every token — with a claims challenge, as
    /// Microsoft Graph does after a revocation or policy event: `401` and `WWW-Authenticate: Bearer realm="",
    /// authorization_uri="…", client_id="<the API's app id>", error="insufficient_claims", claims="<base64 of
    /// {"access_token":{"nbf":{"essential":true,"value":"<the event's time>"}}}>"`. A token issued after the event
    /// (any new one: a refresh with the claims) passes.
    struct ClaimsChallenge {
        let api: String?
        let tokens: Set<String>
        let always: Bool
        let claims: String
        /// "base64" (what Graph sends), "base64url" (no padding) or "json" (the text itself, quoted).
        let encoding: String

        var headerValue: String {
            let bytes = Array(claims.utf8)
            switch encoding {
            case "base64url": return Base64.urlEncode(bytes)
            case "json":
                return claims.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            default: return Base64.encode(bytes)
            }
        }
    }

    /// `POST api_challenges {"api"?, "email"?, "always"?, "claims"?, "encoding"?}`.
    func addChallenge(_ body: JSONValue, now: Double) -> EmulatorResponse {
        let encoding = body["encoding"]?.stringValue ?? "base64"
        guard ["base64", "base64url", "json"].contains(encoding) else {
            return .badControlRequest("encoding must be base64, base64url or json")
        }
        let api = body["api"]?.stringValue
        if let api, !directory.config.apis.contains(where: { $0.name == api }) {
            return .badControlRequest("no API named \(api)")
        }
        let email = body["email"]?.stringValue?.lowercased()
        let tokens = grants.withLock { g in Set(g.accessTokenOwners.filter { email == nil || $0.value == email }.keys) }
        let claims =
            body["claims"]?.stringValue
            ?? #"{"access_token":{"nbf":{"essential":true,"value":"\#(Int64(now))"}}}"#
        let rule = ClaimsChallenge(
            api: api,
            tokens: tokens,
            always: body["always"]?.boolValue ?? false,
            claims: claims,
            encoding: encoding
        )
        challenges.withLock { $0.append(rule) }
        return .json(["ok": true, "tokens": .int(Int64(tokens.count)), "claims": .string(claims)])
    }

    func clearChallenges() { challenges.withLock { $0 = [] } }

    /// The claims challenge for this token at this API, if an event asks for one.
    private func challenge(
        _ api: ProtectedAPIConfig,
        tokenID: String?,
        _ ctx: RequestContext,
        scheme: String
    ) -> EmulatorResponse? {
        let rule = challenges.withLock { rules in
            rules.last { r in
                (r.api == nil || r.api == api.name) && (r.always || tokenID.map(r.tokens.contains) == true)
            }
        }
        guard let rule else { return nil }
        var r = EmulatorResponse.json(
            [
                "error": "insufficient_claims",
                "error_description": "Continuous access evaluation resulted in challenge.",
            ],
            status: 401
        )
        let authorize = "\(ctx.baseURL)/\(minter.tenantID)/oauth2/v2.0/authorize"
        r.headers.append(
            (
                "WWW-Authenticate",
                "\(scheme) realm=\"\", authorization_uri=\"\(authorize)\", client_id=\"\(api.appID)\", "
                    + "error=\"insufficient_claims\", claims=\"\(rule.headerValue)\""
            )
        )
        return r
    }

    /// The API served at `path`, if any.
    func api(at path: String) -> ProtectedAPIConfig? { directory.config.apis.first { $0.path == path } }

    /// Verifies a bearer token — or a DPoP-bound one with its proof (RFC 9449 §7) — as a resource server would
    /// (RFC 6750 errors), then lists (GET) or adds (POST) items. With nonces demanded, every answer to a DPoP request
    /// carries the current one.
    func handle(_ api: ProtectedAPIConfig, _ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        let presented = PresentedToken(req)
        var r = serve(api, presented, req, ctx)
        if !r.headers.contains(where: { $0.0 == "DPoP-Nonce" }) {
            r.headers += dpop.resourceNonceHeaders(presented, directory.config.oidc, now: ctx.now)
        }
        return r
    }

    private func serve(
        _ api: ProtectedAPIConfig,
        _ presented: PresentedToken?,
        _ req: EmulatorRequest,
        _ ctx: RequestContext
    ) -> EmulatorResponse {
        let needed: [String]
        switch req.method {
        case "GET": needed = api.readPermissions
        case "POST": needed = api.writePermissions
        default: return .methodNotAllowed
        }
        guard let presented else { return Self.unauthorized(api, "A bearer token is required.") }
        let bearer: (user: String, scopes: [String], tokenID: String?)
        switch authenticate(presented, api, req, ctx) {
        case .failure(let refusal): return refusal.response
        case .success(let b): bearer = b
        }
        if let challenged = challenge(api, tokenID: bearer.tokenID, ctx, scheme: presented.scheme) {
            return challenged
        }
        guard bearer.scopes.contains(where: needed.contains) else { return Self.insufficientScope(api, needed) }
        let key = api.name + "|" + bearer.user
        if req.method == "POST" {
            let title =
                (try? JSONValue.parse(req.body))?["title"]?.stringValue
                ?? String(decoding: req.body.prefix(200), as: UTF8.self)
            let item: JSONValue = [
                "id": .string(Ids.token("", bytes: 6)), "title": .string(title), "owner": .string(bearer.user),
            ]
            items.withLock { $0[key, default: []].append(item) }
            return .json(["api": .string(api.name), "created": item], status: 201)
        }
        let list = items.withLock { s -> [JSONValue] in
            if s[key] == nil {
                s[key] = [
                    [
                        "id": "1", "title": .string("Welcome to \(api.name), \(bearer.user)"),
                        "owner": .string(bearer.user),
                    ]
                ]
            }
            return s[key] ?? []
        }
        return .json([
            "api": .string(api.name), "user": .string(bearer.user),
            "scopes": .array(bearer.scopes.map { .string($0) }), "items": .array(list),
        ])
    }

    /// A refused token: 401 `invalid_token` with why.
    struct Refusal: Error {
        let response: EmulatorResponse
    }

    /// The user and the API's permissions a bearer token carries: a JWT of the tenant (RS256 with our key, `kid`,
    /// issuer, audience, expiry, not-before), or an opaque access token of the generic provider (looked up, as token
    /// introspection would; its scopes are the permissions in lower case, for any number of APIs).
    private func authenticate(
        _ presented: PresentedToken,
        _ api: ProtectedAPIConfig,
        _ req: EmulatorRequest,
        _ ctx: RequestContext
    ) -> Result<(user: String, scopes: [String], tokenID: String?), Refusal> {
        func refuse(_ why: String) -> Result<(user: String, scopes: [String], tokenID: String?), Refusal> {
            .failure(Refusal(response: Self.unauthorized(api, why, scheme: presented.scheme)))
        }
        let token = presented.token
        if token.split(separator: ".", omittingEmptySubsequences: false).count != 3 {
            guard let (rec, forcedExpiry) = grants.opaqueAccessToken(token) else {
                return refuse("The token is not valid.")
            }
            guard !forcedExpiry, rec.expires > ctx.now else { return refuse("The token is expired.") }
            let oidc = directory.config.oidc
            if let refusal = dpop.resourceCheck(jkt: rec.jkt, presented, req, ctx, oidc, realm: api.name) {
                return .failure(Refusal(response: refusal))
            }
            return .success((rec.user, api.permissions.filter { rec.scopes.contains(OIDCScopes.scope($0)) }, rec.id))
        }
        // The tenant's tokens are bearer tokens (Entra issues no DPoP-bound tokens).
        if presented.dpop {
            return .failure(
                Refusal(response: DPoPVerifier.refusal(api.name, "invalid_token", "The token is not DPoP-bound."))
            )
        }
        guard let jwt = try? JWT(decoding: token) else { return refuse("The token is malformed.") }
        guard minter.entraKey.signed(jwt) else { return refuse("The token signature is invalid.") }
        let c = jwt.claims
        guard c["iss"]?.stringValue == minter.issuer(.entra, baseURL: ctx.baseURL) else {
            return refuse("The token issuer is not trusted.")
        }
        let aud = c["aud"]?.stringValue ?? ""
        guard aud == api.appID || aud == "api://\(api.appID)" else {
            return refuse("The token audience is not this API.")
        }
        guard let exp = c["exp"]?.doubleValue, exp > ctx.now else { return refuse("The token is expired.") }
        if let nbf = c["nbf"]?.doubleValue, nbf > ctx.now + 300 { return refuse("The token is not yet valid.") }
        if grants.isExpired(c["uti"]?.stringValue ?? "") { return refuse("The token is expired.") }
        let scopes = (c["scp"]?.stringValue ?? "").split(separator: " ").map(String.init)
        return .success((c["preferred_username"]?.stringValue ?? "", scopes, c["uti"]?.stringValue))
    }

    private static func unauthorized(
        _ api: ProtectedAPIConfig,
        _ why: String,
        scheme: String = "Bearer"
    )
        -> EmulatorResponse
    {
        var r = EmulatorResponse.json(["error": "invalid_token", "error_description": .string(why)], status: 401)
        r.headers.append(
            (
                "WWW-Authenticate",
                "\(scheme) realm=\"\(api.name)\", error=\"invalid_token\", error_description=\"\(why)\""
            )
        )
        return r
    }

    private static func insufficientScope(_ api: ProtectedAPIConfig, _ needed: [String]) -> EmulatorResponse {
        var r = EmulatorResponse.json(
            [
                "error": "insufficient_scope",
                "error_description": .string("The token lacks one of: \(needed.joined(separator: ", "))."),
            ],
            status: 403
        )
        r.headers.append(
            (
                "WWW-Authenticate",
                "Bearer realm=\"\(api.name)\", error=\"insufficient_scope\", "
                    + "scope=\"\(needed.map { api.scope($0) }.joined(separator: " "))\""
            )
        )
        return r
    }
}
