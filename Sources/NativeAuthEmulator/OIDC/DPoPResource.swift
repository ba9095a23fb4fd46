import Foundation
import NativeAuthJSON

/// The access token a request to a resource presents: `Authorization: Bearer <token>` or `Authorization: DPoP
/// <token>` (RFC 9449 §7.1), the scheme in any case.
struct PresentedToken: Sendable {
    let token: String
    let dpop: Bool

    init(token: String, dpop: Bool) {
        self.token = token
        self.dpop = dpop
    }

    init?(_ req: EmulatorRequest) {
        guard let auth = req.headers["authorization"] else { return nil }
        let lower = auth.lowercased()
        if lower.hasPrefix("bearer ") {
            dpop = false
            token = String(auth.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        } else if lower.hasPrefix("dpop ") {
            dpop = true
            token = String(auth.dropFirst(5)).trimmingCharacters(in: .whitespaces)
        } else {
            return nil
        }
    }

    /// The scheme of a challenge answering this presentation.
    var scheme: String { dpop ? "DPoP" : "Bearer" }
}

extension DPoPVerifier {
    /// A resource's checks of how a generic-provider token is presented: a DPoP-bound token (`jkt`) only with the
    /// DPoP scheme and a valid proof of its key carrying its hash (RFC 9449 §7), a bearer token only as Bearer (a
    /// DPoP-bound token presented as a bearer token is refused, §7.2). Nil when the presentation is right; else the
    /// `401` to answer (`realm` names the resource in its challenge).
    func resourceCheck(
        jkt: String?,
        _ presented: PresentedToken,
        _ req: EmulatorRequest,
        _ ctx: RequestContext,
        _ config: OIDCProviderConfig,
        realm: String
    ) -> EmulatorResponse? {
        switch (jkt, presented.dpop) {
        case (nil, false): return nil
        case (nil, true):
            return Self.refusal(realm, "invalid_token", "The token is not DPoP-bound; present it as a bearer token.")
        case (.some, false):
            return Self.refusal(
                realm,
                "invalid_token",
                "The token is DPoP-bound; present it with the DPoP scheme and a proof.",
                scheme: "Bearer"
            )
        case (let bound?, true):
            guard config.dpop else {
                return Self.refusal(realm, "invalid_token", "DPoP is switched off at this provider.")
            }
            let result = verify(
                req,
                expectedURI: ctx.baseURL + req.path,
                place: .resource,
                accessToken: presented.token,
                nonceMode: DPoPNonceMode(rawValue: config.apiDPoPNonce) ?? .off,
                iatWindow: Double(config.dpopIatWindow),
                now: ctx.now
            )
            switch result {
            case .success(let proof):
                guard proof.jkt == bound else {
                    return Self.refusal(
                        realm,
                        "invalid_dpop_proof",
                        "The proof's key is not the one the token is bound to."
                    )
                }
                return nil
            case .failure(.invalid(let why)): return Self.refusal(realm, "invalid_dpop_proof", why)
            case .failure(.useNonce(let nonce)):
                var r = Self.refusal(realm, "use_dpop_nonce", "Resource server requires nonce in DPoP proof.")
                r.headers.append(("DPoP-Nonce", nonce))
                return r
            }
        }
    }

    /// A `401` with `WWW-Authenticate: DPoP algs="ES256", error=…` (or a Bearer challenge) and the error as JSON.
    static func refusal(_ realm: String, _ error: String, _ why: String, scheme: String = "DPoP") -> EmulatorResponse {
        var r = EmulatorResponse.json(["error": .string(error), "error_description": .string(why)], status: 401)
        let algs = scheme == "DPoP" ? "algs=\"ES256\", " : ""
        r.headers.append(
            (
                "WWW-Authenticate",
                "\(scheme) realm=\"\(realm)\", \(algs)error=\"\(error)\", error_description=\"\(why)\""
            )
        )
        return r
    }

    /// The resource's current nonce for an answer to a DPoP request, when resources demand nonces.
    func resourceNonceHeaders(
        _ presented: PresentedToken?,
        _ config: OIDCProviderConfig,
        now: Double
    )
        -> [(String, String)]
    {
        guard presented?.dpop == true, config.dpop, config.apiDPoPNonce != DPoPNonceMode.off.rawValue else {
            return []
        }
        return [("DPoP-Nonce", nonce(.resource, now: now))]
    }
}

extension OIDCProvider {
    /// The token request's proof, when there is one and the provider does DPoP: its key's thumbprint, the tokens'
    /// binding. A refused proof is `invalid_dpop_proof`, a nonce demand `use_dpop_nonce` with the nonce (RFC 9449
    /// §8); without DPoP, a proof is ignored (RFC 9449 §5: such a provider issues bearer tokens).
    func tokenProof(
        _ req: EmulatorRequest,
        _ ctx: RequestContext,
        _ config: EmulatorConfig
    ) throws(OIDCError)
        -> String?
    {
        guard config.oidc.dpop, req.headers["dpop"] != nil else { return nil }
        let result = dpop.verify(
            req,
            expectedURI: ctx.baseURL + req.path,
            place: .token,
            accessToken: nil,
            nonceMode: DPoPNonceMode(rawValue: config.oidc.dpopNonce) ?? .off,
            iatWindow: Double(config.oidc.dpopIatWindow),
            now: ctx.now
        )
        switch result {
        case .success(let proof): return proof.jkt
        case .failure(.invalid(let why)): throw OIDCError("invalid_dpop_proof", why)
        case .failure(.useNonce(let nonce)):
            var e = OIDCError("use_dpop_nonce", "Authorization server requires nonce in DPoP proof.")
            e.headers.append(("DPoP-Nonce", nonce))
            throw e
        }
    }

    /// The token endpoint's current nonce, on every answer, when it demands nonces (RFC 9449 §8.2).
    func nonceHeaders(_ place: DPoPPlace, _ config: EmulatorConfig, _ ctx: RequestContext) -> [(String, String)] {
        guard config.oidc.dpop, config.oidc.dpopNonce != DPoPNonceMode.off.rawValue else { return [] }
        return [("DPoP-Nonce", dpop.nonce(place, now: ctx.now))]
    }

    /// `POST /oidc/introspect` (RFC 7662, with RFC 9449 §6.2's `cnf`): what an access or refresh token of this
    /// provider is — `active`, `client_id`, `scope`, `sub`, `exp`, `token_type` (`DPoP` or `Bearer`) and, for a
    /// DPoP-bound token, `cnf.jkt`. An unknown, expired or revoked token is `{"active":false}`.
    func introspect(_ form: [String: String], _ ctx: RequestContext) throws(OIDCError) -> EmulatorResponse {
        let client = try directory.config.oidcClient(form)
        guard let token = form["token"], !token.isEmpty else {
            throw OIDCError("invalid_request", "token is required.")
        }
        let found = grants.withLock { g -> (user: String, scopes: [String], exp: Double, jkt: String?)? in
            if let at = g.opaqueAccessTokens[token], at.clientID == client, !g.expiredAccessTokens.contains(at.id) {
                return (at.user, at.scopes, at.expires, at.jkt)
            }
            if let rt = g.refreshTokens[token], rt.idp == .oidc, rt.clientID == client, !rt.used,
                !g.revokedFamilies.contains(rt.family)
            {
                return (rt.user, rt.scopes, rt.expires, rt.jkt)
            }
            return nil
        }
        guard let found, found.exp > ctx.now, let user = directory.user(found.user) else {
            return .json(["active": false])
        }
        var o: [String: JSONValue] = [
            "active": true, "client_id": .string(client), "scope": .string(found.scopes.joined(separator: " ")),
            "sub": .string(minter.oidcSubject(user)), "exp": .int(Int64(found.exp)),
            "token_type": found.jkt == nil ? "Bearer" : "DPoP", "iss": .string(issuer(ctx)),
        ]
        if let jkt = found.jkt { o["cnf"] = ["jkt": .string(jkt)] }
        return .json(.object(o))
    }
}
