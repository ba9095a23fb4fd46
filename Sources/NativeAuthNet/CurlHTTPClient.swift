internal import CCurl
internal import Glibc
internal import NativeAuthCore
internal import NativeAuthCrypto
public import NativeAuthHTTP
import Synchronization

/// One CURL easy handle and the multi handle it is driven by. The multi handle keeps the connection cache, so
/// reusing the pair reuses connections; driving the transfer ourselves (rather than curl_easy_perform) lets a cancel
/// from another thread interrupt the wait at once (curl_multi_wakeup).
private final class EasyHandle {
    let pointer: UnsafeMutableRawPointer
    let multi: UnsafeMutableRawPointer
    /// CURLOPT_ERRORBUFFER (CURL_ERROR_SIZE bytes): libcurl's words about the last failure.
    let errorBuffer: UnsafeMutablePointer<CChar>
    init?() {
        guard let h = ccurl_easy_init() else { return nil }
        guard let m = ccurl_multi_init() else {
            ccurl_easy_cleanup(h)
            return nil
        }
        pointer = h
        multi = m
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }
    deinit {
        ccurl_multi_cleanup(multi)
        ccurl_easy_cleanup(pointer)
        errorBuffer.deallocate()
    }

    /// Runs the configured transfer to its end, or until the started call running on this thread is cancelled
    /// (then nothing is sent, or the transfer is abandoned: `cancelled`).
    func transfer() -> CURLcode? {
        let call = CallCancellation.current
        if call?.isCancelled == true { return nil }
        guard ccurl_multi_add_handle(multi, pointer) == CURLM_OK else { return CURLE_FAILED_INIT }
        defer { _ = ccurl_multi_remove_handle(multi, pointer) }
        let m = UInt(bitPattern: multi)
        let waker = call?.addWaker {
            if let p = UnsafeMutableRawPointer(bitPattern: m) { _ = ccurl_multi_wakeup(p) }
        }
        // Removed before the multi handle can go away: a waker never runs after removeWaker returned.
        defer { if let call, let waker { call.removeWaker(waker) } }
        while true {
            var running: Int32 = 0
            guard ccurl_multi_perform(multi, &running) == CURLM_OK else { return CURLE_FAILED_INIT }
            if running == 0 { break }
            if call?.isCancelled == true { return nil }
            guard ccurl_multi_poll(multi, 1000) == CURLM_OK else { return CURLE_FAILED_INIT }
            if call?.isCancelled == true { return nil }
        }
        var result = CURLE_OK
        return ccurl_multi_result(multi, pointer, &result) == 1 ? result : CURLE_FAILED_INIT
    }
}

/// Collects one response; the C callbacks reach it through an unretained pointer during `curl_easy_perform`.
private final class ResponseSink {
    let limit: Int
    var body: [UInt8] = []
    var headers: [(name: String, value: String)] = []
    var overflow = false

    init(limit: Int) { self.limit = limit }

    func appendBody(_ p: UnsafeRawBufferPointer) -> Bool {
        if body.count + p.count > limit {
            overflow = true
            return false
        }
        body.append(contentsOf: p)
        return true
    }

    func appendHeaderLine(_ p: UnsafeRawBufferPointer) {
        // Work on bytes: "\r\n" is one Character in Swift, so character-wise trimming would miss it.
        var bytes = p[...]
        while let l = bytes.last, l == 0x0d || l == 0x0a || l == 0x20 || l == 0x09 { bytes = bytes.dropLast() }
        if bytes.starts(with: Array("HTTP/".utf8)) {
            headers.removeAll()  // a new response (after 1xx): start over
            return
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return }
        var value = bytes[(colon + 1)...]
        while let f = value.first, f == 0x20 || f == 0x09 { value = value.dropFirst() }
        let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<colon]), as: UTF8.self).lowercased()
        headers.append((name, String(decoding: UnsafeRawBufferPointer(rebasing: value), as: UTF8.self)))
    }
}

/// Feeds a request body to libcurl through its read callback. A body given this way cannot be rewound, so libcurl
/// never sends it a second time on its own (it would otherwise resend a request on a fresh connection when a reused
/// one turns out dead after the request went out — and a password, code or refresh token must never be presented
/// twice: servers with reuse detection revoke the whole token family).
private final class BodySource {
    let body: UnsafeRawBufferPointer
    var offset = 0
    init(_ body: UnsafeRawBufferPointer) { self.body = body }
}

private let readCallback: ccurl_data_cb = { buffer, size, nitems, userdata in
    guard let userdata, let buffer else { return 0 }
    let source = Unmanaged<BodySource>.fromOpaque(userdata).takeUnretainedValue()
    let room = size &* nitems
    let n = min(room, source.body.count - source.offset)
    if n > 0, let base = source.body.baseAddress {
        memcpy(buffer, base + source.offset, n)
        source.offset += n
    }
    return n
}

private let writeCallback: ccurl_data_cb = { ptr, size, nmemb, userdata in
    guard let userdata else { return 0 }
    let sink = Unmanaged<ResponseSink>.fromOpaque(userdata).takeUnretainedValue()
    let n = size &* nmemb
    guard let ptr else { return n }
    return sink.appendBody(UnsafeRawBufferPointer(start: ptr, count: n)) ? n : 0
}

private let headerCallback: ccurl_data_cb = { ptr, size, nmemb, userdata in
    guard let userdata else { return 0 }
    let sink = Unmanaged<ResponseSink>.fromOpaque(userdata).takeUnretainedValue()
    let n = size &* nmemb
    if let ptr, n <= 16_384 { sink.appendHeaderLine(UnsafeRawBufferPointer(start: ptr, count: n)) }
    return n
}

/// HTTP over libcurl's easy API.
///
/// - TLS: peer and host verification always on, TLS ≥ 1.2; only `https`, and `http` to loopback hosts, are allowed.
/// - Redirects are never followed. Proxies: the plan made when the client was made (`HTTPClientOptions.proxy`, else
///   the environment's), never for loopback hosts; libcurl never reads the proxy environment itself.
/// - Trust: `caBundlePath` alone, else `trust`, else the system's store (with a fallback bundle when libcurl's
///   built-in one does not exist on this machine: `SystemTrust`).
/// - Connections are reused: idle easy handles (each with its connection cache) are pooled, so a sequence of
///   requests from one thread rides one TCP connection per host. Concurrent requests use separate handles.
/// - Thread-safe: `send` may be called from many threads at once.
public final class CurlHTTPClient: Sendable {
    public let options: HTTPClientOptions
    /// Where requests go (the options' plan, or the process's environment when the client was made).
    public let proxyPlan: ProxyPlan
    private let idle = Mutex<[EasyHandleBox]>([])
    /// The trust stores as libcurl takes them, made at the first request (libcurl loaded, files read once).
    private let trust = Mutex<(server: CurlTrust, proxy: CurlTrust)?>(nil)

    public init(options: HTTPClientOptions = HTTPClientOptions()) {
        self.options = options
        self.proxyPlan = options.proxy ?? ProxyPlan.environment(Self.processEnvironment)
    }

    static let processEnvironment: @Sendable (String) -> String? = { getenv($0).map { String(cString: $0) } }

    /// What verifies servers, as `options` say.
    public var trustStore: TrustStore {
        options.caBundlePath.map(TrustStore.only) ?? options.trust ?? .system
    }

    private func curlTrust() throws(HTTPError) -> (server: CurlTrust, proxy: CurlTrust) {
        if let t = trust.withLock({ $0 }) { return t }
        options.beforeFirstRequest?()
        let server = try CurlTrust(trustStore, defaults: SystemTrust.current)
        let proxy =
            try options.proxyCABundlePath.map { p throws(HTTPError) in
                try CurlTrust(.only(p), defaults: SystemTrust.current)
            } ?? server
        trust.withLock { $0 = (server, proxy) }
        return (server, proxy)
    }

    /// Sends `request` and waits for the whole response (bounded by the timeouts and the size cap).
    public func send(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        let url: HTTPURL
        do { url = try HTTPURL(request.url) } catch { throw HTTPError(.invalidURL, "invalid URL (\(error))") }
        if url.scheme == "http" && !url.isLoopback {
            throw HTTPError(.invalidURL, "plain http is allowed only to loopback hosts, not \(url.host)")
        }
        if ccurl_load() != 0 {
            // A machine without libcurl.so.4: every request fails the same way, saying so (never a crash at load).
            throw HTTPError(.network, ccurl_load_error().map { String(cString: $0) } ?? "libcurl could not be loaded")
        }
        let route = proxyPlan.route(for: url)
        if case .invalid(let e, let source) = route { throw CurlProxy.invalid(e, source: source) }
        let trust = try curlTrust()
        guard let handle = checkout() else { throw HTTPError(.internal, "cannot create a libcurl handle") }
        // On failure the handle is not returned to the pool: a timed-out or broken transfer may leave a
        // half-read connection behind, and a fresh handle costs one new connection at most.
        let response = try perform(request, url: url, route: route, trust: trust, on: handle.handle)
        checkin(handle)
        return response
    }

    private func checkout() -> EasyHandleBox? {
        if let h = idle.withLock({ $0.popLast() }) { return h }
        guard let h = EasyHandle() else { return nil }
        return EasyHandleBox(h)
    }

    private func checkin(_ h: EasyHandleBox) {
        let max = options.maxIdleHandles
        idle.withLock { pool in
            if pool.count < max { pool.append(h) }
        }
    }

    /// The request's headers as libcurl's list (the caller frees it). A default header the request names itself (in
    /// any case) is left out: the request's replaces it (na_call_api's `User-Agent`), rather than going out twice — a
    /// field that is not a list may not (RFC 9110 §5.3).
    private func headerList(_ request: HTTPRequest) throws(HTTPError) -> UnsafeMutablePointer<curl_slist>? {
        var headers = options.defaultHeaders.filter { d in
            let lower = d.name.lowercased()
            return !request.headers.contains { HeaderName.matches($0.name, lower) }
        }
        headers += request.headers
        if options.addClientRequestID,
            !headers.contains(where: { HeaderName.matches($0.name, "client-request-id") }),
            let id = try? SecureRandom.uuid()
        {
            headers.append(("client-request-id", id))
        }
        var lines = CurlHeaderLines()
        do throws(HTTPError) {
            for (name, value) in headers { try lines.add(name, value) }
            try lines.remove("Expect")  // no 100-continue round trip
        } catch {
            lines.free()
            throw error
        }
        return lines.list
    }

    private func perform(
        _ request: HTTPRequest,
        url: HTTPURL,
        route: ProxyPlan.Route,
        trust: (server: CurlTrust, proxy: CurlTrust),
        on easy: EasyHandle
    ) throws(HTTPError) -> HTTPResponse {
        let h = easy.pointer
        ccurl_easy_reset(h)  // keeps the connection cache
        let sink = ResponseSink(limit: max(0, options.maxResponseBytes))
        let headerList = try headerList(request)
        defer { ccurl_slist_free_all(headerList) }

        let sinkPtr = Unmanaged.passUnretained(sink).toOpaque()
        var ok = try configure(request, route: route, trust: trust, on: easy, headers: headerList, sink: sinkPtr)
        func set(_ rc: CURLcode) { if rc != CURLE_OK { ok = false } }

        let method = request.method.uppercased()
        guard !method.isEmpty, method.utf8.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            throw HTTPError(.invalidURL, "invalid HTTP method")
        }
        let rc: CURLcode? = withExtendedLifetime(sink) {
            request.body.withUnsafeBytes { body -> CURLcode? in
                let source = BodySource(body)
                return withExtendedLifetime(source) { () -> CURLcode? in
                    switch method {
                    case "GET" where body.isEmpty:
                        set(ccurl_setopt_long(h, CURLOPT_HTTPGET, 1))
                    case "HEAD":
                        set(ccurl_setopt_long(h, CURLOPT_NOBODY, 1))
                    default:
                        if method != "POST" { set(ccurl_setopt_str(h, CURLOPT_CUSTOMREQUEST, method)) }
                        if !body.isEmpty || method == "POST" || method == "PUT" || method == "PATCH" {
                            set(ccurl_setopt_long(h, CURLOPT_POST, 1))
                            set(ccurl_setopt_off(h, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)))
                            set(ccurl_setopt_datacb(h, CURLOPT_READFUNCTION, readCallback))
                            set(ccurl_setopt_ptr(h, CURLOPT_READDATA, Unmanaged.passUnretained(source).toOpaque()))
                        }
                    }
                    guard ok else { return CURLE_FAILED_INIT }
                    return easy.transfer()
                }
            }
        }
        // Detach everything that pointed at this call's memory before the handle goes back to the pool.
        _ = ccurl_setopt_slist(h, CURLOPT_HTTPHEADER, nil)
        _ = ccurl_setopt_ptr(h, CURLOPT_WRITEDATA, nil)
        _ = ccurl_setopt_ptr(h, CURLOPT_HEADERDATA, nil)
        _ = ccurl_setopt_ptr(h, CURLOPT_READDATA, nil)
        _ = ccurl_setopt_ptr(h, CURLOPT_ERRORBUFFER, nil)
        if case .proxy = route { CurlProxy.clear(h) }

        guard let rc else { throw HTTPError(.cancelled, "the request to \(url.host) was cancelled") }
        guard rc == CURLE_OK else {
            // host:port (the scheme's default when the URL names none): a refused connection to the wrong port
            // says which one.
            let port = url.port ?? (url.scheme == "https" ? 443 : 80)
            throw failure(rc, easy: easy, host: "\(url.host):\(port)", route: route, overflow: sink.overflow).error
        }
        var status = 0
        var code = 0
        if ccurl_getinfo_long(h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK { status = code }
        return HTTPResponse(status: status, headers: sink.headers, body: sink.body)
    }

    /// Sets the transfer's options: the URL and protocols, TLS and timeouts, the route, the trust, the headers and the
    /// callbacks writing into `sink`; false when libcurl refused one.
    private func configure(
        _ request: HTTPRequest,
        route: ProxyPlan.Route,
        trust: (server: CurlTrust, proxy: CurlTrust),
        on easy: EasyHandle,
        headers headerList: UnsafeMutablePointer<curl_slist>?,
        sink sinkPtr: UnsafeMutableRawPointer
    ) throws(HTTPError) -> Bool {
        let h = easy.pointer
        var ok = true
        func set(_ rc: CURLcode) { if rc != CURLE_OK { ok = false } }
        set(ccurl_setopt_str(h, CURLOPT_URL, request.url))
        set(ccurl_setopt_str(h, CURLOPT_PROTOCOLS_STR, "http,https"))
        set(ccurl_setopt_long(h, CURLOPT_FOLLOWLOCATION, 0))
        set(ccurl_setopt_long(h, CURLOPT_NOSIGNAL, 1))
        set(ccurl_setopt_long(h, CURLOPT_SSL_VERIFYPEER, 1))
        set(ccurl_setopt_long(h, CURLOPT_SSL_VERIFYHOST, 2))
        set(ccurl_setopt_long(h, CURLOPT_SSLVERSION, Int(CURL_SSLVERSION_TLSv1_2)))
        set(ccurl_setopt_long(h, CURLOPT_CONNECTTIMEOUT_MS, max(1, options.connectTimeoutMs)))
        set(ccurl_setopt_long(h, CURLOPT_TIMEOUT_MS, max(1, options.totalTimeoutMs)))
        set(ccurl_setopt_off(h, CURLOPT_MAXFILESIZE_LARGE, curl_off_t(max(0, options.maxResponseBytes))))
        // The route: loopback hosts (whose traffic may be plain http) never go through a proxy.
        if !CurlProxy.apply(route, to: h) { ok = false }
        set(ccurl_setopt_str(h, CURLOPT_ACCEPT_ENCODING, ""))
        guard trust.server.apply(to: h, proxy: false) else { throw Self.trustRefused }
        if case .proxy(let p, _) = route, p.scheme == .https {
            guard trust.proxy.apply(to: h, proxy: true) else { throw Self.trustRefused }
        }
        easy.errorBuffer[0] = 0
        set(ccurl_setopt_ptr(h, CURLOPT_ERRORBUFFER, UnsafeMutableRawPointer(easy.errorBuffer)))
        set(ccurl_setopt_slist(h, CURLOPT_HTTPHEADER, headerList))
        set(ccurl_setopt_datacb(h, CURLOPT_WRITEFUNCTION, writeCallback))
        set(ccurl_setopt_ptr(h, CURLOPT_WRITEDATA, sinkPtr))
        set(ccurl_setopt_datacb(h, CURLOPT_HEADERFUNCTION, headerCallback))
        set(ccurl_setopt_ptr(h, CURLOPT_HEADERDATA, sinkPtr))
        return ok
    }

    /// What libcurl says about a failed transfer on `easy`.
    private func failure(
        _ rc: CURLcode,
        easy: EasyHandle,
        host: String,
        route: ProxyPlan.Route,
        overflow: Bool
    ) -> CurlFailure {
        let h = easy.pointer
        // Whether any byte of the request went out (on a reused connection there is no connect time to go by).
        var requestBytes = 0
        var connectCode = 0
        var connects = 0
        var verify = 0
        _ = ccurl_getinfo_long(h, CURLINFO_REQUEST_SIZE, &requestBytes)
        _ = ccurl_getinfo_long(h, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        _ = ccurl_getinfo_long(h, CURLINFO_NUM_CONNECTS, &connects)
        _ = ccurl_getinfo_long(h, CURLINFO_SSL_VERIFYRESULT, &verify)
        return CurlFailure(
            rc: rc,
            host: host,
            sent: requestBytes > 0,
            overflow: overflow,
            route: route,
            connectCode: connectCode,
            newConnection: connects > 0,
            verifyResult: verify,
            detail: CurlFailure.clean(easy.errorBuffer)
        )
    }

    private static let trustRefused = HTTPError(
        .tls,
        "this libcurl's TLS library cannot take several CA files at once (ca_bundle with ca_bundle_system); "
            + "give one CA file that holds them all"
    )
}

/// Moves an easy handle between threads through the pool. A handle is only ever used by one thread at a time:
/// it is either in the pool (under the mutex) or checked out by exactly one `send`.
private final class EasyHandleBox: @unchecked Sendable {
    let handle: EasyHandle
    init(_ h: EasyHandle) { handle = h }
}
