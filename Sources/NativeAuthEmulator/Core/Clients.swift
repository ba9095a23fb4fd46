/// Which application a request's `client_id` names, as each kind of endpoint requires it.
extension EmulatorConfig {
    /// `client_id` must name an application of the tenant. Empty, or not shaped as an application id (a GUID), it
    /// is AADSTS90100 "client_id parameter is empty or not valid" (what the SDKs tell from a bad username by);
    /// a GUID the tenant does not know is `unauthorized_client` AADSTS700016.
    func knownClient(_ form: [String: String]) throws(ServiceError) -> ClientApp {
        guard let id = form["client_id"], !id.isEmpty else { throw .missingParameter("client_id") }
        guard let c = clients.first(where: { $0.clientID == id }) else {
            guard isGUID(id) else { throw .invalidParameter("client_id") }
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

/// 8-4-4-4-12 hexadecimal digits.
func isGUID(_ s: String) -> Bool {
    let groups = s.split(separator: "-", omittingEmptySubsequences: false)
    guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return false }
    return groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
}
