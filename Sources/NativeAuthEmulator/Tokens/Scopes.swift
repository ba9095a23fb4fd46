import NativeAuthJSON

/// The Microsoft Graph application id: the audience of an access token without an API scope.
let graphAppID = "00000003-0000-0000-c000-000000000000"
let oidcScopes: Set<String> = ["openid", "profile", "offline_access", "email"]

/// What a `scope` parameter asks of the Entra tenant, after validation.
struct ScopeGrant {
    var oidc: [String]
    var api: ProtectedAPIConfig?
    var permissions: [String]

    var hasOfflineAccess: Bool { oidc.contains("offline_access") }
    var hasOpenID: Bool { oidc.contains("openid") }

    /// The response's `scope`: the resource scopes, then the OIDC ones.
    var responseScope: String {
        ((api.map { a in permissions.map { a.scope($0) } } ?? []) + oidc).joined(separator: " ")
    }

    /// Validates `raw` (space- or `+`-separated) for `client`: OIDC scopes and one API's permissions, consented.
    init(_ raw: String?, client: ClientApp, _ config: EmulatorConfig) throws(ServiceError) {
        var seen = Set<String>()
        let requested = (raw ?? "").split(whereSeparator: { $0 == " " || $0 == "+" }).map(String.init).filter {
            seen.insert($0).inserted
        }
        oidc = []
        api = nil
        permissions = []
        for scope in requested {
            if oidcScopes.contains(scope.lowercased()) {
                oidc.append(scope.lowercased())
                continue
            }
            let (api, permission) = try Self.apiPermission(scope, config)
            if let current = self.api, current.appID != api.appID { throw .moreThanOneResource }
            if let consented = client.consentedScopes,
                !consented.contains(where: { $0.lowercased() == api.scope(permission).lowercased() })
            {
                throw .consentRequired(clientID: client.clientID)
            }
            self.api = api
            if !permissions.contains(permission) { permissions.append(permission) }
        }
    }

    /// The API and permission an API scope (`api://<app id>/<permission>`) names.
    private static func apiPermission(
        _ scope: String,
        _ config: EmulatorConfig
    ) throws(ServiceError) -> (ProtectedAPIConfig, String) {
        var resource = ""
        var permission = scope
        if let slash = scope.lastIndex(of: "/") {
            resource = String(scope[..<slash])
            permission = String(scope[scope.index(after: slash)...])
        }
        let appID = resource.hasPrefix("api://") ? String(resource.dropFirst(6)) : resource
        guard let api = config.apis.first(where: { $0.appID.lowercased() == appID.lowercased() }) else {
            throw resource.isEmpty
                ? .invalidScope(scope) : .resourceNotFound(resource, tenant: config.tenantDomain)
        }
        guard let perm = api.permissions.first(where: { $0.lowercased() == permission.lowercased() }) else {
            throw .scopeNotOnResource(scope)
        }
        return (api, perm)
    }
}

/// The generic provider's scopes.
enum OIDCScopes {
    /// The generic provider's scope for an API permission: the permission in lower case ("todolist.read").
    static func scope(_ permission: String) -> String { permission.lowercased() }

    /// The scopes of a `scope` parameter, de-duplicated, in order; unknown ones are `invalid_scope`.
    static func list(_ raw: String?, _ config: EmulatorConfig) throws(OIDCError) -> [String] {
        var seen = Set<String>()
        var out: [String] = []
        for scope in (raw ?? "").split(separator: " ").map(String.init) where seen.insert(scope).inserted {
            let known =
                oidcScopes.contains(scope)
                || config.apis.contains { $0.permissions.contains { Self.scope($0) == scope } }
            guard known else { throw OIDCError("invalid_scope", "The scope '\(scope)' is not supported.") }
            out.append(scope)
        }
        return out
    }
}
