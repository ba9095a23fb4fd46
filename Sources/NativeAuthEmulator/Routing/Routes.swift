import NativeAuthJSON

/// The emulator's route table: every endpoint, in one place.
extension Emulator {
    func makeRouter() -> Router {
        Router(
            mounts: [
                .prefix("_emulator", controlRoutes()),
                .lookup { [unowned self] req in
                    guard let api = config.apis.first(where: { $0.path == req.path }) else { return nil }
                    return { [unowned self] call in protectedAPI(api, call.request, call.context) }
                },
                .path("/") { [unowned self] call in indexPage(call.context) },
                .path("/devicelogin") { [unowned self] call in devicePage(call.request, call.context, idp: .entra) },
                .prefix("oidc", oidcRoutes()),
                .segment({ [unowned self] in isTenant($0) }, tenantRoutes()),
            ],
            fallback: { _ in .notFound }
        )
    }

    /// `/<tenant>/…`: the tenant's discovery, keys and browser endpoints, then its form-POST endpoints.
    private func tenantRoutes() -> RouteTable {
        let get: Set<String> = ["GET"]
        let browser: Set<String> = ["GET", "POST"]
        var routes = [
            Route(get, "v2.0/.well-known/openid-configuration") { [unowned self] call in
                .json(discovery(call.context, tenant: call.parameters["mount"]))
            },
            Route(get, "discovery/v2.0/keys") { [unowned self] _ in .json(["keys": [jwk]]) },
            Route(browser, "oauth2/v2.0/authorize") { [unowned self] call in
                authorize(call.request, call.context, idp: .entra)
            },
            Route(browser, "oauth2/v2.0/logout") { [unowned self] call in
                endSession(call.request, call.context, idp: .entra)
            },
        ]
        let post: [(String, @Sendable ([String: String], RequestContext) throws -> EmulatorResponse)] = [
            ("oauth2/v2.0/initiate", { [unowned self] in try signInInitiate($0, $1) }),
            ("oauth2/v2.0/challenge", { [unowned self] in try signInChallenge($0, $1) }),
            ("oauth2/v2.0/introspect", { [unowned self] in try signInIntrospect($0, $1) }),
            ("oauth2/v2.0/token", { [unowned self] in try token($0, $1) }),
            ("oauth2/v2.0/devicecode", { [unowned self] in try deviceCode($0, $1) }),
            ("signup/v1.0/start", { [unowned self] in try signUpStart($0, $1) }),
            ("signup/v1.0/challenge", { [unowned self] in try signUpChallenge($0, $1) }),
            ("signup/v1.0/continue", { [unowned self] in try signUpContinue($0, $1) }),
            ("resetpassword/v1.0/start", { [unowned self] in try resetStart($0, $1) }),
            ("resetpassword/v1.0/challenge", { [unowned self] in try resetChallenge($0, $1) }),
            ("resetpassword/v1.0/continue", { [unowned self] in try resetContinue($0, $1) }),
            ("resetpassword/v1.0/submit", { [unowned self] in try resetSubmit($0, $1) }),
            ("resetpassword/v1.0/poll_completion", { [unowned self] in try resetPoll($0, $1) }),
            ("register/v1.0/introspect", { [unowned self] in try registerIntrospect($0, $1) }),
            ("register/v1.0/challenge", { [unowned self] in try registerChallenge($0, $1) }),
            ("register/v1.0/continue", { [unowned self] in try registerContinue($0, $1) }),
        ]
        for (path, handler) in post {
            routes.append(Route(["POST"], path) { [unowned self] call in try formEndpoint(path, call, handler) })
        }
        return RouteTable(routes: routes) { call in
            // Anything else answers as the service does: GET and friends 405, a POST 900144 or 404.
            guard call.request.method == "POST" else { return .postOnly }
            guard call.request.form != nil else { throw ServiceError.formBodyRequired }
            return .notFound
        }
    }

    /// A form-POST endpoint of the tenant: the body must be a form; the secrets it carries are counted; a user who
    /// must use the browser is redirected there before the endpoint sees the request.
    private func formEndpoint(
        _ endpoint: String,
        _ call: Call,
        _ handler: ([String: String], RequestContext) throws -> EmulatorResponse
    ) throws -> EmulatorResponse {
        guard let form = call.request.form else { throw ServiceError.formBodyRequired }
        countPresentedSecrets(endpoint, form)
        if let reason = browserRequired(endpoint, form) { return redirect(reason) }
        return try handler(form, call.context)
    }

    /// `/oidc/…`: the generic OpenID Connect provider.
    private func oidcRoutes() -> RouteTable {
        let get: Set<String> = ["GET"]
        let both: Set<String> = ["GET", "POST"]
        let post: Set<String> = ["POST"]
        return RouteTable(
            routes: [
                Route(get, ".well-known/openid-configuration") { [unowned self] call in
                    .json(oidcDiscovery(call.context))
                },
                Route(get, "jwks") { [unowned self] _ in .json(["keys": [oidcJWK]]) },
                Route(both, "authorize") { [unowned self] call in authorize(call.request, call.context, idp: .oidc) },
                Route(both, "logout") { [unowned self] call in endSession(call.request, call.context, idp: .oidc) },
                Route(both, "device") { [unowned self] call in devicePage(call.request, call.context, idp: .oidc) },
                Route(both, "userinfo") { [unowned self] call in userinfo(call.request, call.context) },
                Route(post, "token") { [unowned self] call in
                    oidcFormEndpoint(call) { form, ctx throws(OIDCError) in
                        countPresentedSecrets("oidc/token", form)
                        return try oidcToken(form, ctx)
                    }
                },
                Route(post, "device_authorization") { [unowned self] call in
                    oidcFormEndpoint(call) { form, ctx throws(OIDCError) in try oidcDeviceAuthorization(form, ctx) }
                },
                Route(post, "revoke") { [unowned self] call in
                    oidcFormEndpoint(call) { form, ctx throws(OIDCError) in try oidcRevoke(form, ctx) }
                },
            ],
            fallback: { _ in .json(["error": "not_found", "error_description": "No such endpoint."], status: 404) }
        )
    }

    /// A form-POST endpoint of the generic provider: a form body, and its errors in RFC 6749's shape.
    private func oidcFormEndpoint(
        _ call: Call,
        _ handler: ([String: String], RequestContext) throws(OIDCError) -> EmulatorResponse
    ) -> EmulatorResponse {
        let req = call.request
        guard req.headers["content-type"]?.hasPrefix("application/x-www-form-urlencoded") ?? true, let form = req.form
        else { return OIDCError("invalid_request", "The body must be application/x-www-form-urlencoded.").response }
        do throws(OIDCError) { return try handler(form, call.context) } catch { return error.response }
    }
}
