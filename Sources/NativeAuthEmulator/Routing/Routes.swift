import NativeAuthJSON

/// A form-POST endpoint's handler: the form and the request's context.
typealias FormHandler = @Sendable ([String: String], RequestContext) throws -> EmulatorResponse

/// The emulator's route table: every endpoint, in one place.
extension Services {
    func router(controls: ControlPlane) -> Router {
        Router(
            mounts: [
                .prefix("_emulator", controls.routes),
                .lookup { [apis] req in
                    guard let api = apis.api(at: req.path) else { return nil }
                    return { call in apis.handle(api, call.request, call.context) }
                },
                .path("/") { [directory, oidc] call in
                    PageRenderer.index(
                        directory.config,
                        baseURL: call.context.baseURL,
                        oidcIssuer: oidc.issuer(call.context)
                    )
                },
                .path("/devicelogin") { [deviceCodes] call in deviceCodes.page(call) },
                .prefix("oidc", oidcRoutes),
                .segment({ [self] in isTenant($0) }, tenantRoutes),
            ],
            fallback: { _ in .notFound }
        )
    }

    /// `/<tenant>/…`: the tenant's discovery, keys and browser endpoints, then its form-POST endpoints.
    private var tenantRoutes: RouteTable {
        let (browser, minter) = (self.browser, self.minter)
        var routes = [
            Route(["GET"], "v2.0/.well-known/openid-configuration") { call in
                let ctx = call.context
                return .json(
                    Discovery.entra(
                        baseURL: ctx.baseURL,
                        tenant: call.parameters["mount"] ?? "",
                        issuer: minter.issuer(.entra, baseURL: ctx.baseURL)
                    )
                )
            },
            Route(["GET"], "discovery/v2.0/keys") { _ in .json(minter.entraKey.jwks) },
            Route(["GET", "POST"], "oauth2/v2.0/authorize") { call in browser.authorize(call, idp: .entra) },
            Route(["GET", "POST"], "oauth2/v2.0/logout") { call in browser.endSession(call, idp: .entra) },
        ]
        for (endpoint, handler) in formEndpoints {
            routes.append(Route(["POST"], endpoint) { [self] call in try formEndpoint(endpoint, call, handler) })
        }
        return RouteTable(routes: routes) { call in
            // Anything else answers as the service does: GET and friends 405, a POST 900144 or 404.
            guard call.request.method == "POST" else { return .postOnly }
            guard call.request.form != nil else { throw ServiceError.formBodyRequired }
            return .notFound
        }
    }

    /// The tenant's form-POST endpoints: native auth, `/token` and `/devicecode`.
    private var formEndpoints: [(String, FormHandler)] {
        let (n, t) = (nativeAuth, tokens)
        let native: [(NativeEndpoint, FormHandler)] = [
            (.initiate, { try n.initiate($0, $1) }),
            (.challenge, { try n.challenge($0, $1) }),
            (.introspect, { try n.introspect($0, $1) }),
            (.token, { try t.token($0, $1) }),
            (.signUpStart, { try n.signUpStart($0, $1) }),
            (.signUpChallenge, { try n.signUpChallenge($0, $1) }),
            (.signUpContinue, { try n.signUpContinue($0, $1) }),
            (.resetStart, { try n.resetStart($0, $1) }),
            (.resetChallenge, { try n.resetChallenge($0, $1) }),
            (.resetContinue, { try n.resetContinue($0, $1) }),
            (.resetSubmit, { try n.resetSubmit($0, $1) }),
            (.resetPoll, { try n.resetPoll($0, $1) }),
            (.registerIntrospect, { try n.registerIntrospect($0, $1) }),
            (.registerChallenge, { try n.registerChallenge($0, $1) }),
            (.registerContinue, { try n.registerContinue($0, $1) }),
        ]
        let deviceCode: FormHandler = { try t.deviceAuthorization($0, $1) }
        return native.map { ($0.0.rawValue, $0.1) } + [("oauth2/v2.0/devicecode", deviceCode)]
    }

    /// A form-POST endpoint of the tenant: the body must be a form; the secrets it carries are counted; a user who
    /// must use the browser is redirected there before a native-auth endpoint sees the request.
    private func formEndpoint(
        _ endpoint: String,
        _ call: Call,
        _ handler: ([String: String], RequestContext) throws -> EmulatorResponse
    ) throws -> EmulatorResponse {
        guard let form = call.request.form else { throw ServiceError.formBodyRequired }
        requestLog.countPresentedSecrets(endpoint, form)
        if let native = NativeEndpoint(rawValue: endpoint), let reason = nativeAuth.browserRequired(native, form) {
            return NativeAuthService.redirect(reason)
        }
        return try handler(form, call.context)
    }

    /// `/oidc/…`: the generic OpenID Connect provider.
    private var oidcRoutes: RouteTable {
        let (browser, oidc, deviceCodes, minter, requestLog) = (browser, oidc, deviceCodes, minter, requestLog)
        return RouteTable(
            routes: [
                Route(["GET"], ".well-known/openid-configuration") { [directory] call in
                    .json(Discovery.oidc(issuer: oidc.issuer(call.context), directory.config))
                },
                Route(["GET"], "jwks") { _ in .json(minter.oidcKey.jwks) },
                Route(["GET", "POST"], "authorize") { call in browser.authorize(call, idp: .oidc) },
                Route(["GET", "POST"], "logout") { call in browser.endSession(call, idp: .oidc) },
                Route(["GET", "POST"], "device") { call in deviceCodes.page(call) },
                Route(["GET", "POST"], "userinfo") { call in oidc.userinfo(call.request, call.context) },
                Route(["POST"], "token") { call in
                    Self.oidcFormEndpoint(call) { form, ctx throws(OIDCError) in
                        requestLog.countPresentedSecrets("oidc/token", form)
                        return try oidc.token(form, call.request, ctx)
                    }
                },
                Route(["POST"], "introspect") { call in
                    Self.oidcFormEndpoint(call) { form, ctx throws(OIDCError) in try oidc.introspect(form, ctx) }
                },
                Route(["POST"], "device_authorization") { call in
                    Self.oidcFormEndpoint(call) { form, ctx throws(OIDCError) in try oidc.deviceAuthorization(form, ctx)
                    }
                },
                Route(["POST"], "revoke") { call in
                    Self.oidcFormEndpoint(call) { form, ctx throws(OIDCError) in try oidc.revoke(form, ctx) }
                },
            ],
            fallback: { _ in .json(["error": "not_found", "error_description": "No such endpoint."], status: 404) }
        )
    }

    /// A form-POST endpoint of the generic provider: a form body, and its errors in RFC 6749's shape.
    private static func oidcFormEndpoint(
        _ call: Call,
        _ handler: ([String: String], RequestContext) throws(OIDCError) -> EmulatorResponse
    ) -> EmulatorResponse {
        let req = call.request
        guard req.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") ?? true, let form = req.form
        else { return OIDCError("invalid_request", "The body must be application/x-www-form-urlencoded.").response }
        do throws(OIDCError) { return try handler(form, call.context) } catch { return error.response }
    }
}
