internal import NativeAuthCrypto
internal import NativeAuthHTTP
import Synchronization

/// The client's browser launcher: the app's (`na_client_set_browser_callback`), else the system's, looked up when a
/// browser is opened — not when a sign-in starts, so a callback replaced during OIDC discovery is never called.
///
/// It has the log callback's guarantee (`Logger`, `CallbackSlot`): `replace` waits until invocations of the old
/// launcher already running on other threads have returned — after it returns the old launcher (a C callback and its
/// `user_data`, maybe freed next) is never called again — and opening a browser never waits for a replacement. A
/// launcher that opens a browser through the same client again (it called back into the library) is called like
/// any; one that tries to replace itself gets `false` from `replace` instead of a deadlock. The system launcher
/// (which may wait up to two seconds for a command) is not counted as an invocation.
final class BrowserSlot: BrowserLauncher, Sendable {
    private let custom = CallbackSlot<any BrowserLauncher>()
    private let system: any BrowserLauncher
    /// The slot whose launcher the current thread is running, if any.
    private static let running = ThreadLocal()

    init(system: any BrowserLauncher) { self.system = system }

    private var isRunningOnThisThread: Bool {
        BrowserSlot.running.value == Unmanaged.passUnretained(self).toOpaque()
    }

    /// Replaces the app's launcher (nil: the system's). Returns false, changing nothing, when called from inside the
    /// app's launcher on this slot.
    func replace(_ launcher: (any BrowserLauncher)?) -> Bool {
        guard !isRunningOnThisThread else { return false }
        custom.replace(launcher)
        return true
    }

    func open(_ url: String) -> Bool {
        let answer: Bool? = custom.invoke { custom in
            guard let custom else { return nil }
            let outer = BrowserSlot.running.value
            BrowserSlot.running.value = Unmanaged.passUnretained(self).toOpaque()
            defer { BrowserSlot.running.value = outer }
            return custom.open(url)
        }
        return answer ?? system.open(url)
    }

    func launch(_ url: String) -> BrowserLaunch {
        let answer: BrowserLaunch? = custom.invoke { custom in
            guard let custom else { return nil }
            let outer = BrowserSlot.running.value
            BrowserSlot.running.value = Unmanaged.passUnretained(self).toOpaque()
            defer { BrowserSlot.running.value = outer }
            return custom.launch(url)
        }
        return answer ?? system.launch(url)
    }
}

/// A one-time start page on a loopback listener: the URL a browser is given instead of a URL with secrets in it.
///
/// A browser is started with its URL on the command line, which every local user can read (`/proc/<pid>/cmdline`).
/// The authorization URL carries `state`, `nonce`, the PKCE challenge and the login hint; with the first two a local
/// attacker could forge a redirect. So the browser gets `http://<host>:<port>/<192 random bits>` instead, and the
/// listener answers its first fetch with a 302 to the real URL (`Cache-Control: no-store`, `Referrer-Policy:
/// no-referrer`) and, for a sign-in, a cookie the redirect must bring back. A second fetch means someone else knew
/// the address: the sign-in stops.
final class StartPage: Sendable {
    /// `/` and 32 base64url characters (24 random bytes).
    let path: String
    let url: String
    /// A random name and value per sign-in.
    let cookieName: String
    let cookieValue: String
    private let used = Atomic<Bool>(false)

    convenience init(host: String, port: UInt16) throws(NativeAuthError) {
        let secrets = try AuthorizationSecrets.generate()
        self.init(host: host, port: port, secrets: secrets)
    }

    /// The page of a sign-in whose random values are `secrets`.
    init(host: String, port: UInt16, secrets: AuthorizationSecrets) {
        path = secrets.startPath
        cookieName = secrets.cookieName
        cookieValue = secrets.cookieValue
        url = "http://\(host):\(port)\(path)"
    }

    /// True for the first fetch only.
    func claim() -> Bool {
        !used.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// Whether the page was fetched.
    var isClaimed: Bool { used.load(ordering: .acquiring) }

    /// True when `cookies` hold this page's cookie.
    func isCarried(by cookies: [String: String]) -> Bool {
        guard let value = cookies[cookieName] else { return false }
        return constantTimeEquals(value, cookieValue)
    }

    /// The answer to the first fetch: on to `destination`; with `cookieLifetime` (seconds), the cookie too.
    func forward(to destination: String, cookieLifetime: Int64?, ending: RedirectReply.Ending) -> RedirectReply {
        var headers: [(name: String, value: String)] = [("Location", destination)]
        if let cookieLifetime {
            headers.append(
                (
                    "Set-Cookie",
                    "\(cookieName)=\(cookieValue); Path=/; HttpOnly; SameSite=Lax; Max-Age=\(max(1, cookieLifetime))"
                )
            )
        }
        return RedirectReply(
            status: 302,
            html: StartPage.html("Continuing to the sign-in page."),
            headers: headers,
            ending: ending
        )
    }

    static func html(_ text: String) -> String {
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Sign-in</title></head><body><p>\(text)</p>"
            + "</body></html>"
    }

    /// True when `url` can be sent as a `Location` header (no space or control character).
    static func isHeaderSafe(_ url: String) -> Bool {
        !url.utf8.contains { $0 <= 0x20 || $0 == 0x7f }
    }
}

/// Sign-out's browser step: the provider's end-session URL carries `id_token_hint`, so the browser is given a
/// one-time URL on a short-lived listener on 127.0.0.1 instead, which answers its one fetch with a 302 there.
///
/// The listener is served on the calling thread for at most `fetchTimeout` after the launcher returned: a browser
/// that is running fetches the page within a second, one that must start first within a few. A background thread
/// could wait longer without blocking the caller, but it would outlive the call (and maybe the client, or the
/// library itself if the host unloads it); a bounded wait in the call keeps the library free of threads of its own
/// and lets `browser_opened` say what happened: true only when the browser fetched the page.
enum EndSessionHandoff {
    static let fetchTimeout = 10.0

    static func open(
        _ url: String,
        with launcher: any BrowserLauncher,
        listeners: any RedirectListeners,
        now: () -> Double,
        logger: Logger
    ) -> Bool {
        guard StartPage.isHeaderSafe(url), let listener = listeners.listen(host: .ipv4, port: 0) else {
            logger.log(
                .warning,
                "sign-out: cannot listen on 127.0.0.1 for the browser; the end-session page was not opened"
            )
            return false
        }
        defer { listener.shutdown() }
        guard let start = try? StartPage(host: "127.0.0.1", port: listener.port) else { return false }
        var watch: BrowserWatch? = nil
        switch launcher.launch(start.url) {
        case .failed: return false
        case .opened: break
        case .running(let process): watch = BrowserWatch(process)
        }
        defer { watch?.release() }
        let outcome = listener.wait(
            deadline: now() + fetchTimeout,
            now: now,
            isCancelled: { watch?.tick(pageFetched: start.isClaimed) ?? false },
            decide: { request in
                guard request.path == start.path, start.claim() else {
                    return RedirectReply(status: 404, html: StartPage.html("Not found."))
                }
                return start.forward(to: url, cookieLifetime: nil, ending: .accepted)
            }
        )
        guard case .accepted = outcome else {
            logger.log(.warning, "sign-out: the browser did not open the end-session page in time")
            return false
        }
        return true
    }
}
