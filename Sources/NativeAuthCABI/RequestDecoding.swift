internal import Glibc
import NativeAuthCore
import NativeAuthHTTP
import NativeAuthJSON

/// Request documents → typed requests. Type errors name the member (`field`); the values are then checked by the
/// typed requests themselves, before any network call.
enum Decode {
    static func signIn(_ f: Fields) throws(NativeAuthError) -> SignInRequest {
        var r = try SignInRequest(
            username: f.checked.optionalString("username"),
            password: f.checked.optionalString("password"),
            scopes: f.checked.optionalStringArray("scopes"),
            claims: claims(f),
            correlationID: correlationID(f)
        )
        r.requestHeaders = try requestHeaders(f)
        return r
    }

    /// A flow's own `request_headers` (checked as the configuration's).
    static func requestHeaders(_ f: Fields) throws(NativeAuthError) -> [RequestHeader] {
        try Validate.requestHeaders(
            stringMap(f.checked.optionalObject("request_headers"), "request_headers"),
            field: "request_headers"
        )
    }

    /// `account`: a `home_account_id` or a username.
    static func account(_ f: Fields) throws(NativeAuthError) -> String? {
        try f.checked.optionalString("account")
    }

    /// `na_get_account`, `na_sign_out`: which account (`.only` without `account`).
    static func accountSelection(_ f: Fields) throws(NativeAuthError) -> AccountSelection {
        try Validate.account(account(f))
    }

    static func signOut(_ f: Fields) throws(NativeAuthError) -> SignOutRequest {
        try SignOutRequest(
            account: account(f),
            all: f.checked.optionalBool("all") ?? false,
            browser: f.checked.optionalString("browser")
        )
    }

    static func interactive(_ f: Fields) throws(NativeAuthError) -> InteractiveRequest {
        func string(_ key: String) throws(NativeAuthError) -> String? {
            try f.checked.optionalString(key)
        }
        var extra: [(String, String)] = []
        if let o = try f.checked.optionalObject("extra_query_parameters") {
            for (name, value) in o.members.sorted(by: { $0.key < $1.key }) {
                guard let v = value.stringValue else {
                    let field = "extra_query_parameters.\(name.prefix(64))"
                    throw .invalidArgument("\(field): must be a string", field: field)
                }
                extra.append((name, v))
            }
        }
        return try InteractiveRequest(
            scopes: f.checked.optionalStringArray("scopes"),
            loginHint: string("login_hint"),
            prompt: string("prompt"),
            domainHint: string("domain_hint"),
            claims: claims(f),
            extraQueryParameters: extra,
            responseMode: string("response_mode"),
            browser: string("browser"),
            timeoutMs: f.checked.optionalInt("timeout_ms", in: 0...86_400_000)
                .map { Int($0) },
            waitMs: f.checked.optionalInt("wait_ms", in: 0...3_600_000).map { Int($0) },
            correlationID: correlationID(f)
        )
    }

    static func deviceCode(_ f: Fields) throws(NativeAuthError) -> DeviceCodeRequest {
        try DeviceCodeRequest(
            scopes: f.checked.optionalStringArray("scopes"),
            correlationID: correlationID(f)
        )
    }

    static func signUp(_ f: Fields) throws(NativeAuthError) -> SignUpRequest {
        var r = try SignUpRequest(
            username: f.checked.optionalString("username"),
            password: f.checked.optionalString("password"),
            attributes: attributes(f, required: false),
            correlationID: correlationID(f)
        )
        r.requestHeaders = try requestHeaders(f)
        return r
    }

    static func resetPassword(_ f: Fields) throws(NativeAuthError) -> ResetPasswordRequest {
        var r = try ResetPasswordRequest(
            username: f.checked.optionalString("username"),
            correlationID: correlationID(f)
        )
        r.requestHeaders = try requestHeaders(f)
        return r
    }

    /// A `na_flow_submit` request: the flow, and the action (`nil` for `cancel`). Arguments are checked before the
    /// flow is touched; an error about them carries the request's flow (`NativeAuthClient.refused` keeps it only
    /// when the flow is open).
    static func flowAction(_ f: Fields) throws(NativeAuthError) -> (FlowID, FlowAction?) {
        guard let id = try f.checked.optionalString("flow"), !id.isEmpty else {
            throw .invalidArgument("flow: required (the \"flow\" of a previous result)", field: "flow")
        }
        let flow = FlowID(id)
        do throws(NativeAuthError) { return try flowAction(f, flow) } catch {
            var e = error
            e.flow = flow
            throw e
        }
    }

    private static func flowAction(_ f: Fields, _ flow: FlowID) throws(NativeAuthError) -> (FlowID, FlowAction?) {
        var name = try f.checked.optionalString("action")
        if name == nil {
            if f.contains("code") {
                name = FlowAction.Kind.submitCode.rawValue
            } else if f.contains("password") {
                name = FlowAction.Kind.submitPassword.rawValue
            } else if f.contains("attributes") {
                name = FlowAction.Kind.submitAttributes.rawValue
            }
        }
        guard let name else {
            let all = FlowAction.Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw .invalidArgument("action: required (\(all))", field: "action")
        }
        guard let kind = FlowAction.Kind(rawValue: name) else {
            throw .invalidArgument("action: unknown action \"\(name.prefix(40))\"", field: "action")
        }
        func string(_ key: String) throws(NativeAuthError) -> String? {
            try f.checked.optionalString(key)
        }
        switch kind {
        case .submitCode:
            return (flow, .submitCode(try Validate.code(string("code"))))
        case .submitPassword:
            guard let password = try Validate.password(string("password"), required: true) else {
                throw NativeAuthError(.invalidPassword, "The password is empty.", field: "password", reason: "empty")
            }
            return (flow, .submitPassword(password))
        case .submitAttributes:
            return (flow, .submitAttributes(try attributes(f, required: true) ?? [:]))
        case .cancel:
            return (flow, nil)
        case .wait:
            let t = try f.checked.optionalInt("timeout_ms", in: 0...3_600_000)
            return (flow, .wait(timeoutMs: t.map { Int($0) }))
        case .submitRedirect:
            guard let url = try string("redirect_url"), !url.isEmpty else {
                throw .invalidArgument("redirect_url: required (the redirect the app received)", field: "redirect_url")
            }
            return (flow, .submitRedirect(url))
        case .resendCode, .requestChallenge, .registerMethod, .signIn:
            break
        }
        let methodID = try string("method_id")
        let contact = try string("contact")
        let scopes =
            f.contains("scopes")
            ? try Validate.scopes(f.checked.optionalStringArray("scopes")) : nil
        let claims = try claims(f)
        switch kind {
        case .requestChallenge: return (flow, .requestChallenge(methodID: methodID))
        case .registerMethod: return (flow, .registerMethod(contact: contact ?? "", methodID: methodID))
        case .signIn: return (flow, .signIn(scopes: scopes, claims: claims))
        default: return (flow, .resendCode)
        }
    }

    /// `na_dpop_proof`: `{"method","url","access_token"?,"nonce"?,"account"?}`.
    static func dpopProof(_ f: Fields) throws(NativeAuthError) -> DPoPProofRequest {
        let m = f.checked
        return try DPoPProofRequest(
            method: m.string("method"),
            url: m.string("url"),
            accessToken: m.optionalString("access_token").map { Secret($0) },
            nonce: m.optionalString("nonce"),
            account: account(f)
        )
    }

    static func token(_ f: Fields) throws(NativeAuthError) -> TokenRequest {
        try TokenRequest(
            scopes: f.checked.optionalStringArray("scopes"),
            forceRefresh: f.checked.optionalBool("force_refresh") ?? false,
            claims: claims(f),
            correlationID: correlationID(f),
            account: account(f)
        )
    }

    /// `correlation_id`: a UUID the app chose for this call's `client-request-id`.
    static func correlationID(_ f: Fields) throws(NativeAuthError) -> String? {
        try f.checked.optionalString("correlation_id")
    }

    static func callAPI(_ f: Fields) throws(NativeAuthError) -> APIRequest {
        let url = try f.checked.string("url")
        let method = try f.checked.optionalString("method")
        let token = try TokenRequest(
            scopes: f.checked.optionalStringArray("scopes"),
            forceRefresh: f.checked.optionalBool("force_refresh") ?? false,
            claims: nil,
            correlationID: correlationID(f),
            account: account(f)
        )
        var headers: [(name: String, value: String)] = []
        if let h = try f.checked.optionalObject("headers") {
            for (name, value) in h.members.sorted(by: { $0.key < $1.key }) {
                guard let v = value.stringValue else {
                    throw .invalidArgument("headers.\(name): must be a string", field: "headers.\(name)")
                }
                headers.append((name, v))
            }
        }
        var body: [UInt8] = []
        switch f.value("body") {
        case nil: break
        case let v? where v.stringValue != nil: body = Array((v.stringValue ?? "").utf8)
        case let v?:
            body = v.value.serializedBytes() ?? []
            if !headers.contains(where: { HeaderName.matches($0.name, "content-type") }) {
                headers.append(("Content-Type", "application/json"))
            }
        }
        return try APIRequest(url: url, method: method, headers: headers, body: body, token: token)
    }

    /// An object of string members (`request_headers`), or nil when absent.
    static func stringMap(_ object: Fields?, _ field: String) throws(NativeAuthError) -> [(String, String)]? {
        guard let object else { return nil }
        var out: [(String, String)] = []
        for (name, value) in object.members.sorted(by: { $0.key < $1.key }) {
            guard let v = value.stringValue else {
                throw .invalidArgument("\(field).\(name): must be a string", field: "\(field).\(name)")
            }
            out.append((name, v))
        }
        return out
    }

    static func includeIDToken(_ f: Fields) throws(NativeAuthError) -> Bool {
        try f.checked.optionalBool("include_id_token") ?? false
    }

    /// `claims`: a JSON object (sent serialised) or a string holding one.
    static func claims(_ f: Fields) throws(NativeAuthError) -> ClaimsRequest? {
        guard let v = f.value("claims") else { return nil }
        if v.isObject { return ClaimsRequest(json: v.value.serialized()) }
        if let s = v.stringValue, (try? JSONValue.parse(s))?.objectValue != nil { return ClaimsRequest(json: s) }
        throw .invalidArgument("claims: must be a JSON object (or a string holding one)", field: "claims")
    }

    /// `na_parse_www_authenticate`'s header: NUL-terminated UTF-8 of at most `WWWAuthenticate.maxBytes`, parsed.
    /// Errors say what was wrong and where, never the header's text.
    static func wwwAuthenticate(_ header: UnsafePointer<CChar>?) throws(NativeAuthError) -> WWWAuthenticate {
        guard let header else { throw .invalidArgument("header is NULL") }
        let n = strnlen(header, WWWAuthenticate.maxBytes + 1)
        guard n <= WWWAuthenticate.maxBytes else {
            throw .invalidArgument("header is larger than \(WWWAuthenticate.maxBytes) bytes")
        }
        let bytes = UnsafeRawBufferPointer(start: header, count: n)
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw .invalidArgument("header is not valid UTF-8")
        }
        do throws(WWWAuthenticate.ParseError) {
            return try WWWAuthenticate.parse(text, isJSONObject: isClaimsObject)
        } catch {
            throw .invalidArgument("header is not a WWW-Authenticate value: \(error.description)")
        }
    }

    /// Whether `text` is a JSON object the library reads — nested at most `JSONDepth.limit` levels, as every
    /// document — so that a claims challenge it reports is one `claims` (above) accepts back.
    static func isClaimsObject(_ text: String) -> Bool { ClaimsRequest.isJSONObject(text) }

    /// Sign-up attributes: an object of strings (numbers and booleans are turned into strings, arrays of strings
    /// joined with commas, as Microsoft's docs describe multi-select values).
    static func attributes(_ f: Fields, required: Bool) throws(NativeAuthError) -> [String: String]? {
        guard let v = f.value("attributes") else {
            if required { throw .invalidArgument("attributes: required (an object)", field: "attributes") }
            return nil
        }
        guard v.isObject else { throw .invalidArgument("attributes: must be an object", field: "attributes") }
        var out: [String: String] = [:]
        for (k, value) in v.members {
            switch value.value {
            case .string(let s): out[k] = s
            case .bool(let b): out[k] = b ? "true" : "false"
            case .int(let i): out[k] = String(i)
            case .double(let d): out[k] = String(d)
            case .array(let items):
                guard items.allSatisfy({ $0.stringValue != nil }) else {
                    throw .invalidArgument("attributes.\(k): arrays must hold strings", field: "attributes.\(k)")
                }
                out[k] = items.compactMap(\.stringValue).joined(separator: ",")
            default:
                throw .invalidArgument(
                    "attributes.\(k): must be a string, number, boolean or array of strings",
                    field: "attributes.\(k)"
                )
            }
        }
        return out
    }
}

extension Decode {
    /// `na_client_new`'s configuration document → a validated `ClientConfiguration`: members read like every
    /// request's (`checked`), values checked by `Validate` in the core. `defaultCachePath` is where a file cache
    /// without a path lives; `environment` looks up `SSL_CERT_FILE`, `CURL_CA_BUNDLE`, `SSL_CERT_DIR` and the proxy
    /// variables (`https_proxy`, …, `no_proxy`).
    static func configuration(
        _ f: Fields,
        environment: (String) -> String?,
        defaultCachePath: () -> String?
    ) throws(NativeAuthError) -> ClientConfiguration {
        let m = f.checked
        let authorityType = try Validate.authorityType(m.optionalString("authority_type"))
        let authority = try Validate.authority(
            m.optionalString("authority"),
            tenantSubdomain: m.optionalString("tenant_subdomain"),
            type: authorityType
        )
        let ca = try Validate.trust(
            caBundle: m.optionalString("ca_bundle"),
            system: m.optionalBool("ca_bundle_system"),
            environment: environment
        )
        let proxy = try Validate.proxy(
            m.optionalString("proxy"),
            noProxy: m.optionalString("no_proxy"),
            environment: environment
        )
        var config = ClientConfiguration(
            authority: authority,
            clientID: try Validate.clientID(m.string("client_id")),
            challengeTypes: try Validate.challengeTypes(m.optionalStringArray("challenge_types")),
            capabilities: try Validate.capabilities(m.optionalStringArray("capabilities")),
            clientCapabilities: try Validate.clientCapabilities(m.optionalStringArray("client_capabilities")),
            requestHeaders: try Validate.requestHeaders(
                stringMap(m.optionalObject("request_headers"), "request_headers"),
                field: "request_headers"
            ),
            redirectURI: try Validate.absoluteURI(m.optionalString("redirect_uri"), field: "redirect_uri"),
            authorityType: authorityType,
            postLogoutRedirectURI: try Validate.absoluteURI(
                m.optionalString("post_logout_redirect_uri"),
                field: "post_logout_redirect_uri"
            ),
            browserCommand: try Validate.commandLine(m.optionalString("browser_command"), field: "browser_command"),
            connectTimeoutMs: Int(try m.optionalInt("connect_timeout_ms", in: 1...600_000) ?? 10_000),
            requestTimeoutMs: Int(try m.optionalInt("request_timeout_ms", in: 1...600_000) ?? 30_000),
            retryAfterMaxSeconds: Double(try m.optionalInt("retry_after_max_s", in: 0...300) ?? 10),
            cache: try cache(m.optionalObject("cache"), defaultPath: defaultCachePath),
            logLevel: try Validate.logLevel(m.optionalString("log_level")),
            caBundle: ca.bundle,
            caBundleSource: ca.source,
            caBundleSystem: ca.system,
            caDirectory: ca.directory,
            trust: ca.store,
            proxy: proxy,
            proxyCABundle: try Validate.proxyCABundle(m.optionalString("proxy_ca_bundle")),
            asyncWorkers: Int(try m.optionalInt("async_workers", in: 1...64) ?? 4),
            appName: try Validate.appIdentity(m.optionalString("app_name"), field: "app_name"),
            appVersion: try Validate.appIdentity(m.optionalString("app_version"), field: "app_version")
        )
        config.dpop = try Validate.dpop(m.optionalBool("dpop"), authorityType: config.authorityType)
        return config
    }

    /// The `cache` member: memory (the default), or a file at `path` (default: `defaultPath`), optionally encrypted.
    private static func cache(
        _ c: Fields?,
        defaultPath: () -> String?
    ) throws(NativeAuthError) -> CacheSetting {
        guard let c else { return .memory }
        let m = c.checked
        switch try m.optionalString("type") ?? (c.contains("path") ? "file" : "memory") {
        case "memory":
            return .memory
        case "file":
            let path = try Validate.cachePath(m.optionalString("path"), default: defaultPath)
            let key = try Validate.encryptionKey(m.optionalString("encryption_key"))
            let keyStore = try Validate.keyStore(
                m.optionalString("key_store"),
                timeoutMs: m.optionalInt("key_store_timeout_ms", in: 1...60_000),
                withKey: key != nil
            )
            let migrate = try m.optionalBool("migrate_plaintext_cache") ?? false
            guard !migrate || key != nil || keyStore != nil else {
                throw .invalidArgument(
                    "cache.migrate_plaintext_cache: only with encryption_key or key_store (a plaintext cache has "
                        + "nothing to migrate to)",
                    field: "cache.migrate_plaintext_cache"
                )
            }
            return .file(path: path, key: key, keyStore: keyStore, migratePlaintext: migrate)
        default:
            throw .invalidArgument("cache.type: must be \"memory\" or \"file\"", field: "cache.type")
        }
    }
}
