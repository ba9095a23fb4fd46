/// Which application a request's `client_id` names, as each kind of endpoint requires it.
extension EmulatorConfig {
    /// `client_id` must name an application of the tenant.
    func knownClient(_ form: [String: String]) throws(ServiceError) -> ClientApp {
        guard let id = form["client_id"], !id.isEmpty else { throw .missingParameter("client_id") }
        guard let c = clients.first(where: { $0.clientID == id }) else {
            throw .unknownClient(id, tenant: tenantDomain)
        }
        return c
    }

    /// Native auth: a public client with native auth enabled.
    func nativeClient(_ form: [String: String]) throws(ServiceError) -> ClientApp {
        let c = try knownClient(form)
        guard c.isPublic else { throw .confidentialClientNotSupported }
        guard c.nativeAuthEnabled else { throw .nativeAuthDisabled }
        return c
    }

    /// Standard grants: any public client (they need no native auth).
    func publicClient(_ form: [String: String]) throws(ServiceError) -> ClientApp {
        let c = try knownClient(form)
        guard c.isPublic else { throw .clientCredentialsRequired }
        return c
    }

    /// The generic provider: its one client; anything else is a 401 with an empty body.
    func oidcClient(_ form: [String: String]) throws(OIDCError) -> String {
        guard let id = form["client_id"], id == oidc.clientID else { throw .invalidClient() }
        return id
    }
}
