internal import NativeAuthCrypto
import Synchronization

/// What one browser sign-in holds while it waits: the loopback listener and its one-time start page (none for a
/// custom-scheme redirect URI), the `state`, `nonce` and PKCE verifier, and the addresses. Shared by the flow's
/// values; its listener is used by one call at a time (the flow is checked out) and closes when the sign-in ends or
/// the last value goes.
final class AuthorizationSession: Sendable {
    let listener: (any RedirectListener)?
    /// The page on the listener that a browser the library launches is given instead of `authorizationURL` (see
    /// `StartPage`); none with browser none.
    let start: StartPage?
    let responseMode: ResponseMode
    let state: String
    let nonce: String
    let verifier: Secret
    let redirectURI: String
    /// The redirect URI's path ("/" when it has none): the listener answers only there.
    let redirectPath: String
    let authorizationURL: String
    let expiresAt: Double
    let metadata: OIDCMetadata

    init(
        listener: (any RedirectListener)?,
        start: StartPage?,
        responseMode: ResponseMode,
        state: String,
        nonce: String,
        verifier: Secret,
        redirectURI: String,
        redirectPath: String,
        authorizationURL: String,
        expiresAt: Double,
        metadata: OIDCMetadata
    ) {
        self.listener = listener
        self.start = start
        self.responseMode = responseMode
        self.state = state
        self.nonce = nonce
        self.verifier = verifier
        self.redirectURI = redirectURI
        self.redirectPath = redirectPath
        self.authorizationURL = authorizationURL
        self.expiresAt = expiresAt
        self.metadata = metadata
    }

    /// The URL a browser is given and the app is shown: the start page for a browser the library launches, else
    /// the authorization URL itself (browser none: the app shows it, or loads it in its own web view, and captures
    /// the redirect or has its user paste it back).
    var browserURL: String { start?.url ?? authorizationURL }

    /// The browser command the library started, while it is watched (see `BrowserWatch`).
    private let browser = Mutex<BrowserWatch?>(nil)

    func watch(_ process: any LaunchedBrowser) { browser.withLock { $0 = BrowserWatch(process) } }

    /// Called by each wait on the listener (at least every 50 ms): the reason, once the browser the library started
    /// failed before it fetched the start page (`.some(nil)`: no reason known); nil while it runs or has opened.
    func browserFailure() -> String?? {
        guard let watch = browser.withLock({ $0 }) else { return nil }
        return watch.tick(pageFetched: start?.isClaimed ?? true) ? (watch.failure ?? .some(nil)) : nil
    }

    /// The browser command is no longer watched: let go of it (it is not left a zombie).
    func releaseBrowser() {
        browser.withLock { w in
            defer { w = nil }
            return w
        }?.release()
    }

    deinit {
        listener?.shutdown()
        releaseBrowser()
    }
}

/// The random values of one browser sign-in: `state`, `nonce`, the PKCE verifier, and the one-time start page's
/// path and cookie. From the system random generator; tests give fixed ones.
struct AuthorizationSecrets: Sendable {
    var state: String
    var nonce: String
    var verifier: String
    var startPath: String
    var cookieName: String
    var cookieValue: String

    static func generate() throws(NativeAuthError) -> AuthorizationSecrets {
        do {
            return AuthorizationSecrets(
                state: Base64.urlEncode(try SecureRandom.bytes(24)),
                nonce: Base64.urlEncode(try SecureRandom.bytes(24)),
                verifier: try PKCE.makeVerifier(),
                startPath: "/" + Base64.urlEncode(try SecureRandom.bytes(24)),
                cookieName: "na_" + Base64.urlEncode(try SecureRandom.bytes(12)),
                cookieValue: Base64.urlEncode(try SecureRandom.bytes(24))
            )
        } catch {
            throw NativeAuthError(.internal, "The system random generator failed.")
        }
    }
}
