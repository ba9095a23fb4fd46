import Foundation
import NativeAuthCABI
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthNet
import Synchronization
import Testing

/// A browser as far as the emulator's pages need one: follows redirects, keeps cookies, fills the sign-in form with
/// the user's email and password, and submits `form_post` pages. Driven by the library through the browser callback
/// (each URL on its own thread, as a real browser is its own process) or directly by a test.
final class FakeBrowser: @unchecked Sendable {
    let http: CurlHTTPClient
    let email: String
    let password: String
    private let cookies = Mutex<[String: String]>([:])
    /// Every URL the library asked to open (a loopback listener's one-time start URL).
    let opened = Mutex<[String]>([])
    /// The provider's authorization URL of each visit: where the one-time start URL sent the browser (`Location`),
    /// or the visited URL itself when it was not a listener's.
    let authorizationURLs = Mutex<[String]>([])
    /// What happened to each: the final status the loopback listener (or other last hop) answered.
    let finished = Mutex<[Int]>([])
    /// When set, the browser stops before delivering the redirect and keeps it here instead.
    let captureRedirect: Bool
    let captured = Mutex<String?>(nil)
    /// The answer the callback gives (0 = opened).
    var callbackResult: Int32 = 0
    /// When false, the callback records the URL and answers "opened" without visiting it.
    var opensPages = true

    init(email: String = annEmail, password: String = annPassword, captureRedirect: Bool = false) {
        var o = HTTPClientOptions()
        o.totalTimeoutMs = 20_000
        http = CurlHTTPClient(options: o)
        self.email = email
        self.password = password
        self.captureRedirect = captureRedirect
    }

    /// Installs this browser as the client's browser callback (kept alive by the test).
    func install(on client: ABIClient) {
        let ctx = Unmanaged.passUnretained(self).toOpaque()
        let rc = na_client_set_browser_callback(
            client.handle,
            { url, user in
                guard let url, let user else { return 1 }
                let b = Unmanaged<FakeBrowser>.fromOpaque(user).takeUnretainedValue()
                let u = String(cString: url)
                b.opened.withLock { $0.append(u) }
                if b.callbackResult != 0 || !b.opensPages { return b.callbackResult }
                let t = Thread { b.visit(u) }
                t.start()
                return 0
            },
            ctx
        )
        #expect(rc == 0)
    }

    /// The provider's URL of the first visit.
    var authorizationURL: String? { authorizationURLs.withLock { $0.first } }

    /// One request as this browser sends it (its cookies, no redirect followed); cookies it is given are kept.
    func send(_ method: String, _ url: String, form: [(String, String)]? = nil) throws -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        let jar = cookies.withLock { $0 }
        if !jar.isEmpty { headers.append(("Cookie", jar.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))) }
        var body: [UInt8] = []
        if let form {
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            body = Array(FormEncoding.encode(form).utf8)
        }
        let r = try http.send(HTTPRequest(method: method, url: url, headers: headers, body: body))
        for (name, value) in r.headers where name.lowercased() == "set-cookie" {
            let pair = value.split(separator: ";").first ?? ""
            if let eq = pair.firstIndex(of: "=") {
                let k = String(pair[pair.startIndex..<eq]).trimmingCharacters(in: .whitespaces)
                let v = String(pair[pair.index(after: eq)...])
                cookies.withLock { $0[k] = v }
            }
        }
        return r
    }

    static func isLoopbackListener(_ url: String) -> Bool {
        url.hasPrefix("http://localhost:") || url.hasPrefix("http://127.0.0.1:")
    }

    /// On the account picker: the account to continue as (nil: "use another account").
    var pick: String? = nil
    /// On the consent page: accept (or cancel).
    var consent = true
    /// On the sign-up page: the new user's display name (email and password are `email` and `password`).
    var displayName = "New User"
    /// Reads the one-time code the emulator emailed to an address (email-code, MFA and sign-up pages).
    var codeFor: ((String) -> String?)? = nil
    /// The pages shown, by their `data-page`.
    let pages = Mutex<[String]>([])

    /// Follows `url` through the emulator's pages to the redirect, and delivers it unless capturing.
    func visit(_ url: String) {
        do {
            var current = url
            var response = try send("GET", current)
            // The listener: where the visit started when that was its start page (a 302 elsewhere), else the
            // authorization URL's redirect_uri.
            let listener: String?
            if response.status == 302, let location = response.header("location"),
                Self.origin(location) != Self.origin(url)
            {
                authorizationURLs.withLock { $0.append(location) }
                listener = Self.origin(url)
            } else {
                authorizationURLs.withLock { $0.append(url) }
                listener = queryParameters(url)["redirect_uri"].map(Self.origin)
            }
            for _ in 0..<16 {
                if response.status == 302 || response.status == 303, let location = response.header("location") {
                    let next = location.hasPrefix("/") ? Self.origin(current) + location : location
                    if captureRedirect && !next.hasPrefix("http") {
                        captured.withLock { $0 = next }  // a custom-scheme redirect the app handles itself
                        return
                    }
                    if listener.map({ Self.origin(next) == $0 }) ?? Self.isLoopbackListener(next) {
                        if captureRedirect {
                            captured.withLock { $0 = next }
                            return
                        }
                        let last = try send("GET", next)
                        finished.withLock { $0.append(last.status) }
                        return
                    }
                    current = next
                    response = try send("GET", current)
                    continue
                }
                let html = String(decoding: response.body, as: UTF8.self)
                if html.contains("document.forms[0].submit()"), let action = Self.attribute("action", in: html) {
                    let inputs = Self.hiddenInputs(html)
                    if captureRedirect {
                        captured.withLock { $0 = action + "?" + FormEncoding.encode(inputs) }
                        return
                    }
                    let last = try send("POST", action, form: inputs)
                    finished.withLock { $0.append(last.status) }
                    return
                }
                let page = Self.attribute("data-page", in: html) ?? ""
                pages.withLock { $0.append(page) }
                guard response.status == 200, let request = Self.input("request", in: html) else {
                    finished.withLock { $0.append(-response.status) }
                    return
                }
                var form: [(String, String)] = [("request", request)]
                switch page {
                case "sign_in":
                    form += [("username", email), ("password", password), ("action", "sign_in")]
                case "select_account":
                    form += pick.map { [("account", $0)] } ?? [("action", "use_another_account")]
                case "consent":
                    form.append(("action", consent ? "accept" : "cancel"))
                case "sign_up":
                    form += [
                        ("email", email), ("password", password), ("attr_displayName", displayName),
                        ("action", "sign_up"),
                    ]
                case "email_code", "mfa_code", "verify_email":
                    guard let code = codeFor?(email) else {
                        finished.withLock { $0.append(-3) }
                        return
                    }
                    form += [("code", code), ("action", "verify")]
                default:
                    finished.withLock { $0.append(-4) }
                    return
                }
                let action = Self.attribute("action", in: html).map {
                    $0.hasPrefix("/") ? Self.origin(current) + $0 : $0
                }
                response = try send("POST", action ?? current, form: form)
                if let action { current = action }
            }
            finished.withLock { $0.append(-1) }
        } catch {
            finished.withLock { $0.append(-2) }
        }
    }

    static func origin(_ url: String) -> String {
        guard let r = url.range(of: "://"),
            let end = url[r.upperBound...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" })
        else { return url }
        return String(url[url.startIndex..<end])
    }

    static func input(_ name: String, in html: String) -> String? {
        guard let r = html.range(of: "name=\"\(name)\" value=\"") else { return nil }
        let rest = html[r.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return unescape(String(rest[rest.startIndex..<end]))
    }

    static func attribute(_ name: String, in html: String) -> String? {
        guard let r = html.range(of: "\(name)=\"") else { return nil }
        let rest = html[r.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return unescape(String(rest[rest.startIndex..<end]))
    }

    static func hiddenInputs(_ html: String) -> [(String, String)] {
        var out: [(String, String)] = []
        var rest = html[...]
        while let r = rest.range(of: "<input type=\"hidden\" name=\"") {
            let after = rest[r.upperBound...]
            guard let nameEnd = after.firstIndex(of: "\""),
                let v = after.range(of: "value=\"")
            else { break }
            let name = String(after[after.startIndex..<nameEnd])
            let valueRest = after[v.upperBound...]
            guard let valueEnd = valueRest.firstIndex(of: "\"") else { break }
            out.append((unescape(name), unescape(String(valueRest[valueRest.startIndex..<valueEnd]))))
            rest = valueRest[valueEnd...]
        }
        return out
    }

    static func unescape(_ s: String) -> String {
        s.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&amp;", with: "&")
    }

    /// The provider URLs of the first `n` visits, waiting up to `seconds` for them (a visit records its URL after
    /// the start page answered, on the visit's own thread).
    func waitAuthorizationURLs(_ n: Int, seconds: Double = 10) -> [String] {
        let deadline = Date().addingTimeInterval(seconds)
        while authorizationURLs.withLock({ $0.count }) < n && Date() < deadline { usleep(2000) }
        return authorizationURLs.withLock { $0 }
    }

    /// Waits until the browser finished `n` visits.
    func waitFinished(_ n: Int = 1, seconds: Double = 20) -> [Int] {
        let deadline = Date().addingTimeInterval(seconds)
        while finished.withLock({ $0.count }) < n && Date() < deadline { usleep(5000) }
        return finished.withLock { $0 }
    }
}

/// A browser sign-in started with a browser callback that only records the start page it is given (as a browser
/// that has not loaded it yet): the test plays the browser, and anyone else, itself. The sign-in call runs on
/// another thread.
func signInWithAnUnopenedStartPage(
    _ c: ABIClient,
    _ request: JSONValue = [:]
) throws -> (call: Background, start: String, browser: FakeBrowser) {
    let browser = FakeBrowser()
    browser.opensPages = false
    browser.install(on: c)
    let call = Background { c.call(na_sign_in_interactive, request) }
    let deadline = Date().addingTimeInterval(30)
    while browser.opened.withLock({ $0.isEmpty }) && !call.isDone && Date() < deadline { usleep(2000) }
    guard let start = browser.opened.withLock({ $0.first }) else {
        throw TestFailure("the browser was not opened: \((try? call.answer(seconds: 1))?.doc.serialized() ?? "")")
    }
    return (call, start, browser)
}

/// The query parameters of a URL.
func queryParameters(_ url: String) -> [String: String] {
    guard let q = url.firstIndex(of: "?") else { return [:] }
    var out: [String: String] = [:]
    for (k, v) in FormEncoding.decode(String(url[url.index(after: q)...].prefix { $0 != "#" })) ?? [] { out[k] = v }
    return out
}

/// The local ports in LISTEN state (from /proc/net/tcp).
func listeningPorts() -> Set<Int> {
    // procfs files report size 0: read to the end in a loop (a one-shot read sees only the first page).
    guard let f = fopen("/proc/net/tcp", "r") else { return [] }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, f)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    let text = String(decoding: bytes, as: UTF8.self)
    var ports = Set<Int>()
    for line in text.split(separator: "\n").dropFirst() {
        let f = line.split(separator: " ")
        guard f.count > 3, f[3] == "0A", let colon = f[1].lastIndex(of: ":") else { continue }
        if let p = Int(f[1][f[1].index(after: colon)...], radix: 16) { ports.insert(p) }
    }
    return ports
}

/// The port of a loopback redirect URI.
func redirectPort(_ uri: String) -> Int? {
    guard let r = uri.range(of: "://") else { return nil }
    let hostPort = uri[r.upperBound...].prefix { $0 != "/" && $0 != "?" }
    guard let colon = hostPort.lastIndex(of: ":") else { return nil }
    return Int(hostPort[hostPort.index(after: colon)...])
}
