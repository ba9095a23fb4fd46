internal import CCurl
internal import Glibc
internal import NativeAuthHTTP

/// libcurl's result of a failed transfer → an `HTTPError` whose message says what failed: the proxy (named by its
/// address, never its credentials) or the server, and, for a certificate no CA vouches for, how to trust a
/// TLS-inspecting proxy's CA.
struct CurlFailure {
    let rc: CURLcode
    let host: String
    /// Whether a byte of the request went out.
    let sent: Bool
    /// The body went over the size limit.
    let overflow: Bool
    let route: ProxyPlan.Route
    /// CURLINFO_HTTP_CONNECTCODE; whether this transfer opened a connection (CURLINFO_NUM_CONNECTS > 0) rather than
    /// reusing one (then the proxy's tunnel was already open).
    let connectCode: Int
    let newConnection: Bool
    /// CURLINFO_SSL_VERIFYRESULT (an X509_V_ERR_* code with OpenSSL).
    let verifyResult: Int
    /// libcurl's error buffer, cleaned: used only for TLS failures (it names the certificate problem).
    let detail: String

    var error: HTTPError {
        let what = ccurl_easy_strerror(rc).map { String(cString: $0) } ?? "libcurl error"
        if case .proxy(let p, let source) = route, atProxy {
            let failure = ProxyFailure(proxy: p, source: source, server: host, connectCode: connectCode)
            if let e = failure.error(rc, what: what, tlsDetail: tlsWhat(what), timedOutBeforeSending: !sent) {
                return e
            }
        }
        switch rc {
        case CURLE_WRITE_ERROR where overflow, CURLE_FILESIZE_EXCEEDED:
            return HTTPError(.responseTooLarge, "the response from \(host) exceeds the size limit")
        case CURLE_OPERATION_TIMEDOUT where !sent:
            return HTTPError(.connectTimeout, "connecting to \(host)\(through) timed out")
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPError(.timeout, "request to \(host)\(through) timed out")
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return HTTPError(.connect, "cannot connect to \(host)\(through): \(what)")
        case CURLE_PEER_FAILED_VERIFICATION where Self.untrustedIssuer.contains(verifyResult):
            return HTTPError(.tls, "TLS with \(host)\(through) failed: \(tlsWhat(what)). " + inspectionHint)
        case CURLE_SSL_CACERT_BADFILE:
            return HTTPError(
                .tls,
                "TLS with \(host) failed: a CA file or directory cannot be used (ca_bundle, SSL_CERT_FILE, "
                    + "SSL_CERT_DIR): \(tlsWhat(what))"
            )
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return HTTPError(.tls, "TLS with \(host)\(through) failed: \(tlsWhat(what))")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return HTTPError(.invalidURL, what)
        case CURLE_OUT_OF_MEMORY, CURLE_FAILED_INIT:
            return HTTPError(.internal, what)
        default:
            return HTTPError(.network, "connection to \(host)\(through) failed: \(what)")
        }
    }

    /// Whether the transfer failed before the proxy's tunnel was open: on a connection of its own (on a reused one
    /// the tunnel was open already), or before any connection was made (libcurl counts only connections made).
    private var atProxy: Bool {
        guard !(200..<300).contains(connectCode) else { return false }
        switch rc {
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_PROXY: return true
        case CURLE_OPERATION_TIMEDOUT where !sent: return true
        default: return newConnection
        }
    }

    /// " through the proxy http://host:port" when the request went through one.
    private var through: String {
        if case .proxy(let p, _) = route { return " through the proxy \(p.display)" }
        return ""
    }

    /// libcurl's words, and its error buffer's when they say more (the certificate problem).
    private func tlsWhat(_ what: String) -> String {
        detail.isEmpty ? what : detail
    }

    /// X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT (2), DEPTH_ZERO_SELF_SIGNED_CERT (18), SELF_SIGNED_CERT_IN_CHAIN (19),
    /// UNABLE_TO_GET_ISSUER_CERT_LOCALLY (20), UNABLE_TO_VERIFY_LEAF_SIGNATURE (21), CERT_UNTRUSTED (27): no CA
    /// this client trusts vouches for the certificate — what a TLS-inspecting proxy's certificates look like.
    static let untrustedIssuer: Set<Int> = [2, 18, 19, 20, 21, 27]

    private var inspectionHint: String {
        let proxy: String
        if case .proxy(let p, _) = route { proxy = " (such as \(p.display))" } else { proxy = "" }
        return "The certificate is not from a CA this client trusts. If a proxy on this network\(proxy) inspects "
            + "TLS, trust its CA: \"ca_bundle\" names a CA file (with \"ca_bundle_system\": true, the system's CAs "
            + "stay trusted too; the command: --ca-bundle), or set SSL_CERT_FILE (a CA file) or SSL_CERT_DIR "
            + "(a hashed CA directory)."
    }

    /// The error buffer's text: printable ASCII, at most 200 characters.
    static func clean(_ buffer: UnsafePointer<CChar>) -> String {
        let bytes = UnsafeRawBufferPointer(start: buffer, count: strnlen(buffer, 256))
        let printable = bytes.prefix(200).map { $0 >= 0x20 && $0 < 0x7f ? $0 : UInt8(ascii: "?") }
        var text = String(decoding: printable, as: UTF8.self)
        while text.last == " " || text.last == "." { text.removeLast() }
        return text
    }
}
