public import NativeAuthJSON
internal import NativeAuthHTTP
internal import NativeAuthCrypto

/// Tokens, calling APIs, the account and sign-out.
extension NativeAuthClient {
    /// `na_get_access_token`: `{"scopes":[…], "force_refresh"?: bool, "claims"?}` →
    /// `{"access_token","token_type","scopes","expires_on","from_cache"}`.
    public func getAccessToken(_ request: JSONValue) throws(NativeAuthError) -> JSONValue {
        let f = try Validate.fields(request)
        let scopes = try Validate.scopes(f, required: true)
        let force = try Validate.wrap { () throws(JSONFieldError) in try f.optionalBool("force_refresh") } ?? false
        let claims = try Validate.claims(f)
        let (token, fromCache) = try tokens.accessToken(scopes: scopes, forceRefresh: force, claims: claims)
        var doc = tokens.tokenJSON(token, fromCache: fromCache).objectValue ?? [:]
        doc["v"] = 1
        return .object(doc)
    }

    /// `na_get_account`: `{"include_id_token"?: bool}` → `{"account":{…, "claims":{…}, "id_token"?}}`.
    public func getAccount(_ request: JSONValue) throws(NativeAuthError) -> JSONValue {
        let f = try Validate.fields(request)
        let include = try Validate.wrap { () throws(JSONFieldError) in try f.optionalBool("include_id_token") } ?? false
        guard let account = cache.read({ $0.account }) else { throw NativeAuthError(.noAccount, "No user is signed in.") }
        return ["v": 1, "account": tokens.accountJSON(account, includeIDToken: include)]
    }

    /// `na_sign_out`: forgets the account, its tokens and any open flows. Local only, as MSAL's native sign-out.
    public func signOut(_ request: JSONValue) throws(NativeAuthError) -> JSONValue {
        _ = try Validate.fields(request)
        let had = cache.update { d -> Bool in
            let had = d.account != nil
            d = CacheData()
            return had
        }
        flows.removeAll()
        logger.log(.info, had ? "signed out" : "sign-out: no account was signed in")
        return ["v": 1, "status": "signed_out", "was_signed_in": .bool(had)]
    }

    /// `na_call_api`: `{"url","method"?,"headers"?,"body"?,"scopes","force_refresh"?}` → `{"status","headers","body"}`.
    /// Gets the token (cache first), sends it as `Authorization: Bearer`, and on a 401 `invalid_token` refreshes once
    /// and retries once. An HTTP error status from the API is a result, not a library error.
    public func callAPI(_ request: JSONValue) throws(NativeAuthError) -> JSONValue {
        let f = try Validate.fields(request)
        let url = try Validate.wrap { () throws(JSONFieldError) in try f.string("url") }
        do {
            let u = try HTTPURL(url)
            if u.scheme == "http" && !u.isLoopback {
                throw NativeAuthError(.invalidArgument, "url: bearer tokens are only sent over https (or http to loopback hosts)", extra: ["field": "url"])
            }
        } catch let e as NativeAuthError {
            throw e
        } catch {
            throw NativeAuthError(.invalidArgument, "url: not a valid absolute http(s) URL", extra: ["field": "url"])
        }
        let method = (try Validate.wrap { () throws(JSONFieldError) in try f.optionalString("method") } ?? "GET").uppercased()
        guard !method.isEmpty, method.count <= 16, method.allSatisfy({ $0 >= "A" && $0 <= "Z" }) else {
            throw NativeAuthError(.invalidArgument, "method: an HTTP method such as GET or POST", extra: ["field": "method"])
        }
        let scopes = try Validate.scopes(f, required: true)
        let force = try Validate.wrap { () throws(JSONFieldError) in try f.optionalBool("force_refresh") } ?? false
        var headers: [(name: String, value: String)] = []
        if let h = try Validate.wrap({ () throws(JSONFieldError) in try f.optionalObject("headers") }) {
            for (name, value) in h.members.sorted(by: { $0.key < $1.key }) {
                guard let v = value.stringValue else {
                    throw NativeAuthError(.invalidArgument, "headers.\(name): must be a string", extra: ["field": .string("headers.\(name)")])
                }
                guard name.lowercased() != "authorization" else {
                    throw NativeAuthError(.invalidArgument, "headers.Authorization: the library sets it", extra: ["field": "headers.Authorization"])
                }
                headers.append((name, v))
            }
        }
        var body: [UInt8] = []
        switch f.value("body") {
        case nil: break
        case .string(let s)?: body = Array(s.utf8)
        case let v?:
            body = v.serializedBytes() ?? []
            if !headers.contains(where: { $0.name.lowercased() == "content-type" }) { headers.append(("Content-Type", "application/json")) }
        }
        var (token, _) = try tokens.accessToken(scopes: scopes, forceRefresh: force, claims: nil)
        var response = try send(method, url, headers, body, token.secret)
        if response.status == 401, (response.header("www-authenticate") ?? "").contains("invalid_token") {
            logger.log(.info, "API answered 401 invalid_token; refreshing once")
            (token, _) = try tokens.accessToken(scopes: scopes, forceRefresh: true, claims: nil)
            response = try send(method, url, headers, body, token.secret)
        }
        var out: [String: JSONValue] = ["v": 1, "status": .int(Int64(response.status))]
        var h: [String: JSONValue] = [:]
        for (name, value) in response.headers { h[name] = h[name].map { .string(($0.stringValue ?? "") + ", " + value) } ?? .string(value) }
        out["headers"] = .object(h)
        let isJSON = (response.header("content-type") ?? "").lowercased().contains("json")
        if isJSON, let parsed = try? JSONValue.parse(response.body) {
            out["body"] = parsed
        } else if let text = String(validating: response.body, as: UTF8.self) {
            out["body"] = .string(text)
        } else {
            out["body_base64"] = .string(Base64.encode(response.body))
        }
        return .object(out)
    }

    private func send(_ method: String, _ url: String, _ headers: [(name: String, value: String)], _ body: [UInt8],
                      _ token: String) throws(NativeAuthError) -> HTTPResponse {
        let request = HTTPRequest(method: method, url: url, headers: headers + [("Authorization", "Bearer " + token)], body: body)
        do {
            let r = try apiTransport.send(request)
            logger.log(.verbose, "\(method) API -> \(r.status)")
            return r
        } catch {
            throw NativeAuthError(error)
        }
    }
}
