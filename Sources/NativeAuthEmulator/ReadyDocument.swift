import Foundation
import NativeAuthJSON

/// What the emulator prints when ready (and `GET /_emulator/info` answers): enough for scripts and tests to need no
/// second source of truth.
extension Services {
    func readyDocument(controlToken: String, caFile: String?) -> JSONValue {
        let c = directory.config
        let baseURL = address.baseURL
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
            "users": .array(c.users.map(Self.readyUser)),
            "device_verification_uri": .string("\(baseURL)/devicelogin"),
            "oidc": oidcReadyDocument(c, baseURL: baseURL),
            "controls": .string("\(baseURL)/_emulator"),
            "control_token": .string(controlToken),
            "pid": .int(Int64(ProcessInfo.processInfo.processIdentifier)),
        ]
        if let caFile { doc["ca_file"] = .string(caFile) }
        return .object(doc)
    }

    private static func readyUser(_ u: UserRecord) -> JSONValue {
        var o: [String: JSONValue] = [
            "email": .string(u.email), "kind": .string(u.kind), "display_name": .string(u.displayName),
        ]
        if let p = u.password { o["password"] = .string(p) }
        if let m = u.mfaEmail { o["mfa_email"] = .string(m) }
        if let m = u.mfaPhone { o["mfa_phone"] = .string(m) }
        if u.requiresBrowser { o["requires_browser"] = true }
        return .object(o)
    }

    /// The ready document's `oidc` member.
    private func oidcReadyDocument(_ c: EmulatorConfig, baseURL: String) -> JSONValue {
        let i = "\(baseURL)/oidc"
        let users: [JSONValue] = c.users.map { u in
            [
                "email": .string(u.email), "sub": .string(minter.oidcSubject(u)),
                "preferred_username": minter.oidcPreferredUsername(u).map { .string($0) } ?? .null,
            ]
        }
        return [
            "issuer": .string(i), "authority": .string(i),
            "discovery_url": .string("\(i)/.well-known/openid-configuration"), "client_id": .string(c.oidc.clientID),
            "device_verification_uri": .string("\(i)/device"),
            "apis": .array(
                c.apis.map { api in
                    [
                        "name": .string(api.name), "url": .string(baseURL + api.path),
                        "scopes": .array(api.permissions.map { .string(OIDCScopes.scope($0)) }),
                    ]
                }
            ),
            "users": .array(users),
        ]
    }
}
