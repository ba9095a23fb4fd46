internal import NativeAuthHTTP

/// `na_dpop_proof`: a proof for a request the app sends itself with a DPoP-bound token.
public struct DPoPProofRequest: Sendable {
    public var method: String
    public var url: String
    /// The access token the request presents (the proof then carries its hash, `ath`).
    public var accessToken: Secret?
    /// The server's latest `DPoP-Nonce`; without it, the last one the library saw from that origin, if any.
    public var nonce: String?
    public var account: AccountSelection

    public init(
        method: String,
        url: String,
        accessToken: Secret?,
        nonce: String?,
        account: String?
    ) throws(NativeAuthError) {
        let parsed: HTTPURL
        do { parsed = try HTTPURL(url) } catch {
            throw .invalidArgument("url: not a valid absolute http(s) URL", field: "url")
        }
        if parsed.scheme == "http" && !parsed.isLoopback {
            throw .invalidArgument(
                "url: tokens are only sent over https (or http to loopback hosts)",
                field: "url"
            )
        }
        guard !method.isEmpty, method.utf8.count <= 16, method.utf8.allSatisfy(APIRequest.isTokenByte) else {
            throw .invalidArgument("method: an HTTP method such as GET or POST", field: "method")
        }
        if let accessToken, accessToken.isEmpty || accessToken.count > 65_536 {
            throw .invalidArgument("access_token: 1 to 65536 bytes", field: "access_token")
        }
        if let nonce, !DPoP.isNonce(nonce) {
            throw .invalidArgument(
                "nonce: a DPoP-Nonce value (printable ASCII without space, \" or \\, at most 1024 bytes)",
                field: "nonce"
            )
        }
        self.method = method
        self.url = url
        self.accessToken = accessToken
        self.nonce = nonce
        self.account = try Validate.account(account)
    }
}

extension NativeAuthClient {
    /// `na_dpop_proof`: a proof (RFC 9449 §4, §7) of the selected account's key for one request. The key never
    /// leaves the library; an account whose tokens are bearer tokens has none (`dpop_unsupported`).
    public func dpopProof(_ request: DPoPProofRequest) throws(NativeAuthError) -> String {
        let id = try tokens.accountID(request.account)
        guard let key = tokens.cache.read({ $0.accounts[id]?.dpopKey }) else {
            throw NativeAuthError(
                .dpopUnsupported,
                "This account's tokens are bearer tokens (it was not signed in with DPoP): there is no key to prove."
            )
        }
        return try context.server.dpopProof(
            key,
            method: request.method,
            url: request.url,
            nonce: request.nonce,
            accessToken: request.accessToken
        )
    }

    /// Sends an API request with a DPoP-bound token: `Authorization: DPoP <token>` and a fresh proof carrying the
    /// token's hash (RFC 9449 §7). A `401` nonce challenge (§9) that brings a nonce is answered by one more send with
    /// it; the nonce any answer brings is kept for the origin's next request.
    func sendDPoP(_ r: APIRequest, _ token: AccessToken, key: DPoPKey) throws(NativeAuthError) -> HTTPResponse {
        let server = context.server
        let target = try DPoPTarget(r.url)
        var retried = false
        while true {
            var request = HTTPRequest(
                method: r.method,
                url: r.url,
                headers: r.headers + [("Authorization", "DPoP " + token.value.unsafeExposed)],
                body: r.body
            )
            defer { request.headers.removeAll() }
            try server.attachProof(DPoPBinding(key: key, accessToken: token.value), target: target, to: &request)
            let response: HTTPResponse
            do { response = try apiTransport.send(request) } catch { throw NativeAuthError(error) }
            logger.log(.verbose, "\(r.method) API (DPoP) -> \(response.status)")
            guard server.wantsNonceRetry(response, origin: target.origin, retried: retried) else { return response }
            retried = true
            logger.log(.info, "the API asked for a DPoP nonce; sending once more with it")
        }
    }
}
