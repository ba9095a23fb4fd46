import Foundation
import NativeAuthCrypto
import NativeAuthJSON

extension Emulator {
    // MARK: - Sample protected APIs

    /// Verifies a bearer token as a resource server would: RS256 signature with our key, `kid`, issuer, audience,
    /// expiry and not-before, then the permission the method needs (RFC 6750 errors).
    func protectedAPI(_ api: ProtectedAPIConfig, _ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        func unauthorized(_ why: String) -> EmulatorResponse {
            var r = EmulatorResponse.json(["error": "invalid_token", "error_description": .string(why)], status: 401)
            r.headers.append(
                (
                    "WWW-Authenticate",
                    "Bearer realm=\"\(api.name)\", error=\"invalid_token\", error_description=\"\(why)\""
                )
            )
            return r
        }
        let needed: [String]
        switch req.method {
        case "GET": needed = api.readPermissions
        case "POST": needed = api.writePermissions
        default: return .json(["error": "method_not_allowed"], status: 405)
        }
        guard let auth = req.headers["authorization"], auth.lowercased().hasPrefix("bearer ") else {
            return unauthorized("A bearer token is required.")
        }
        let token = String(auth.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        let user: String
        let scopes: [String]
        if token.split(separator: ".", omittingEmptySubsequences: false).count != 3 {
            // Not a JWT: an opaque access token of the generic OIDC provider, looked up (as token introspection
            // would). Its scopes are the permissions in lower case, for any number of APIs.
            let found = store.withLock { s in
                s.opaqueAccessTokens[token].map { ($0, s.expiredAccessTokens.contains($0.id)) }
            }
            guard let (rec, forcedExpiry) = found else { return unauthorized("The token is not valid.") }
            guard !forcedExpiry, rec.expires > ctx.now else { return unauthorized("The token is expired.") }
            user = rec.user
            scopes = api.permissions.filter { rec.scopes.contains(oidcScope($0)) }
        } else {
            guard let jwt = try? JWT(decoding: token) else { return unauthorized("The token is malformed.") }
            guard jwt.header["kid"]?.stringValue == kid, let pub = try? signingKey.publicKey(), jwt.verify(with: pub)
            else { return unauthorized("The token signature is invalid.") }
            let c = jwt.claims
            guard c["iss"]?.stringValue == "\(ctx.baseURL)/\(tenantID)/v2.0" else {
                return unauthorized("The token issuer is not trusted.")
            }
            let aud = c["aud"]?.stringValue ?? ""
            guard aud == api.appID || aud == "api://\(api.appID)" else {
                return unauthorized("The token audience is not this API.")
            }
            guard let exp = c["exp"]?.doubleValue, exp > ctx.now else { return unauthorized("The token is expired.") }
            if let nbf = c["nbf"]?.doubleValue, nbf > ctx.now + 300 {
                return unauthorized("The token is not yet valid.")
            }
            let uti = c["uti"]?.stringValue ?? ""
            if store.withLock({ $0.expiredAccessTokens.contains(uti) }) { return unauthorized("The token is expired.") }
            user = c["preferred_username"]?.stringValue ?? ""
            scopes = (c["scp"]?.stringValue ?? "").split(separator: " ").map(String.init)
        }
        guard scopes.contains(where: needed.contains) else {
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
        let key = api.name + "|" + user
        if req.method == "POST" {
            let title =
                (try? JSONValue.parse(req.body))?["title"]?.stringValue
                ?? String(decoding: req.body.prefix(200), as: UTF8.self)
            let item: JSONValue = [
                "id": .string(Ids.token("", bytes: 6)), "title": .string(title), "owner": .string(user),
            ]
            store.withLock { $0.apiItems[key, default: []].append(item) }
            return .json(["api": .string(api.name), "created": item], status: 201)
        }
        let items = store.withLock { s -> [JSONValue] in
            if s.apiItems[key] == nil {
                s.apiItems[key] = [
                    ["id": "1", "title": .string("Welcome to \(api.name), \(user)"), "owner": .string(user)]
                ]
            }
            return s.apiItems[key] ?? []
        }
        return .json([
            "api": .string(api.name), "user": .string(user), "scopes": .array(scopes.map { .string($0) }),
            "items": .array(items),
        ])
    }
}
