import NativeAuthJSON

/// The discovery documents (`.well-known/openid-configuration`) of the tenant and of the generic provider.
enum Discovery {
    /// The tenant's, under the tenant segment the request used (domain or id).
    static func entra(baseURL: String, tenant: String, issuer: String) -> JSONValue {
        let t = "\(baseURL)/\(tenant)"
        return [
            "issuer": .string(issuer),
            "authorization_endpoint": .string("\(t)/oauth2/v2.0/authorize"),
            "token_endpoint": .string("\(t)/oauth2/v2.0/token"),
            "device_authorization_endpoint": .string("\(t)/oauth2/v2.0/devicecode"),
            "end_session_endpoint": .string("\(t)/oauth2/v2.0/logout"),
            "jwks_uri": .string("\(t)/discovery/v2.0/keys"),
            "response_modes_supported": ["query", "fragment", "form_post"],
            "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
            "grant_types_supported": [
                "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code",
            ],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": [
                "sub", "iss", "aud", "exp", "iat", "nbf", "nonce", "name", "preferred_username", "oid", "tid", "ver",
                "email",
            ],
            "tenant_region_scope": .null,
            "cloud_instance_name": "ciamlogin.com",
        ]
    }

    /// The generic provider's (with `dpop_signing_alg_values_supported` when it does DPoP, RFC 9449 §5.1).
    static func oidc(issuer i: String, _ config: EmulatorConfig) -> JSONValue {
        var doc = oidcDocument(issuer: i, config)
        if config.oidc.dpop, case .object(var o) = doc {
            o["dpop_signing_alg_values_supported"] = ["ES256"]
            doc = .object(o)
        }
        return doc
    }

    private static func oidcDocument(issuer i: String, _ config: EmulatorConfig) -> JSONValue {
        let apiScopes = config.apis.flatMap { $0.permissions.map { JSONValue.string(OIDCScopes.scope($0)) } }
        return [
            "issuer": .string(i),
            "authorization_endpoint": .string("\(i)/authorize"),
            "token_endpoint": .string("\(i)/token"),
            "device_authorization_endpoint": .string("\(i)/device_authorization"),
            "userinfo_endpoint": .string("\(i)/userinfo"),
            "end_session_endpoint": .string("\(i)/logout"),
            "revocation_endpoint": .string("\(i)/revoke"),
            "introspection_endpoint": .string("\(i)/introspect"),
            "jwks_uri": .string("\(i)/jwks"),
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "form_post"],
            "grant_types_supported": [
                "authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code",
            ],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": .array(["openid", "profile", "email", "offline_access"] + apiScopes),
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "code_challenge_methods_supported": ["S256"],
            "prompt_values_supported": ["none", "login", "consent", "select_account", "create"],
            "claims_supported": [
                "iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "name", "email", "email_verified",
                "preferred_username",
            ],
            "authorization_response_iss_parameter_supported": true,
        ]
    }
}
