internal import CCurl
internal import Glibc
internal import NativeAuthHTTP

/// Setting one request's route on an easy handle. libcurl is always told (CURLOPT_PROXY and CURLOPT_NOPROXY are both
/// set), so it never reads the proxy environment itself: the plan made when the client was made is the only one.
enum CurlProxy {
    /// Sets `route` on `h`. The proxy's address goes without credentials; the user and password go in their own
    /// options (never in a URL libcurl might repeat in a message).
    static func apply(_ route: ProxyPlan.Route, to h: UnsafeMutableRawPointer) -> Bool {
        var ok = true
        switch route {
        case .direct, .invalid:
            // A libcurl built without proxy support refuses both options: it goes directly anyway.
            _ = ccurl_setopt_str(h, CURLOPT_NOPROXY, "")
            _ = ccurl_setopt_str(h, CURLOPT_PROXY, "")
        case .proxy(let p, _):
            ok = ccurl_setopt_str(h, CURLOPT_NOPROXY, "") == CURLE_OK
            ok = ccurl_setopt_str(h, CURLOPT_PROXY, p.display) == CURLE_OK && ok
            if let user = p.username {
                ok = ccurl_setopt_str(h, CURLOPT_PROXYUSERNAME, user) == CURLE_OK && ok
                ok = ccurl_setopt_str(h, CURLOPT_PROXYPASSWORD, p.password ?? "") == CURLE_OK && ok
                ok = ccurl_setopt_proxyauth_any(h) == CURLE_OK && ok
            }
            if p.scheme == .https {
                ok = ccurl_setopt_long(h, CURLOPT_PROXY_SSL_VERIFYPEER, 1) == CURLE_OK && ok
                ok = ccurl_setopt_long(h, CURLOPT_PROXY_SSL_VERIFYHOST, 2) == CURLE_OK && ok
                ok = ccurl_setopt_long(h, CURLOPT_PROXY_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2)) == CURLE_OK && ok
            }
        }
        return ok
    }

    /// Detaches the credentials from a handle going back to the pool (curl_easy_reset clears them too; this is
    /// so that no copy of the password outlives the request in libcurl's memory longer than needed).
    static func clear(_ h: UnsafeMutableRawPointer) {
        _ = ccurl_setopt_str(h, CURLOPT_PROXYUSERNAME, nil)
        _ = ccurl_setopt_str(h, CURLOPT_PROXYPASSWORD, nil)
    }

    /// The error of a request whose route names an environment variable that is not a proxy address (the value
    /// is not repeated: it may hold a password).
    static func invalid(_ error: ProxyURL.ParseError, source: String) -> HTTPError {
        HTTPError(
            .invalidURL,
            "the \(source) environment variable is not a proxy address ([scheme://][user:password@]host[:port]): "
                + "\(error); correct it, or give \"proxy\" in the configuration"
        )
    }
}

/// What went wrong with a transfer through a proxy, in words that say whether it was the proxy or the server.
struct ProxyFailure {
    let proxy: ProxyURL
    let source: String
    let server: String
    /// The proxy's answer to CONNECT (CURLINFO_HTTP_CONNECTCODE): 0 when none came.
    let connectCode: Int

    var name: String { "the proxy \(proxy.display) (\(source == "config" ? "configured" : "from \(source)"))" }

    /// The error for libcurl's `rc` (`what`: libcurl's words for it; `tlsDetail`: its error buffer's, which name
    /// a certificate problem), or nil when the failure is the server's (the tunnel was open).
    func error(_ rc: CURLcode, what: String, tlsDetail: String, timedOutBeforeSending: Bool) -> HTTPError? {
        switch connectCode {
        case 407:
            let how =
                proxy.hasCredentials
                ? "refused the proxy credentials (407 Proxy Authentication Required)"
                : "requires authentication (407): give the user and password in the proxy's address "
                    + "(http://user:password@host:port)"
            return HTTPError(.connect, "\(name) \(how)")
        case 200..<300:
            return nil
        case 0:
            break
        default:
            let reason =
                [502, 503, 504].contains(connectCode)
                ? "could not reach \(server) (its answer to CONNECT: HTTP \(connectCode))"
                : "refused to connect to \(server) (its answer to CONNECT: HTTP \(connectCode))"
            return HTTPError(.connect, "\(name) \(reason)")
        }
        switch rc {
        case CURLE_COULDNT_RESOLVE_PROXY:
            return HTTPError(.connect, "cannot resolve the name of \(name)")
        case CURLE_COULDNT_CONNECT:
            return HTTPError(.connect, "cannot connect to \(name): \(what)")
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPError(
                timedOutBeforeSending ? .connectTimeout : .timeout,
                "\(name) did not open a connection to \(server) in time"
            )
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ISSUER_ERROR:
            guard proxy.scheme == .https else { return nil }
            return HTTPError(
                .tls,
                "TLS with \(name) failed: \(tlsDetail) (an https proxy's certificate is verified with "
                    + "\"proxy_ca_bundle\", else as servers' are)"
            )
        default:
            return HTTPError(
                .network,
                "\(name) answered something that is not an HTTP proxy's answer, or closed the connection, before "
                    + "connecting to \(server): \(what)"
            )
        }
    }
}
