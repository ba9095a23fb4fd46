import Synchronization

/// Opens a URL in the user's browser. The production launcher (the configured command, `$BROWSER`, the desktop's
/// opener: NativeAuthNet's `SystemBrowserLauncher`) is wired in by the composition root; the app's own
/// (`na_client_set_browser_callback`) takes its place while set (see `BrowserSlot`).
public protocol BrowserLauncher: Sendable {
    /// Opens `url`; false when it could not. May wait (a command is given a moment to fail).
    func open(_ url: String) -> Bool
    /// Opens `url` without waiting for a command to finish: a command still running comes back as `.running`,
    /// watched while the page is served (the default: `open`'s answer).
    func launch(_ url: String) -> BrowserLaunch
}

extension BrowserLauncher {
    public func launch(_ url: String) -> BrowserLaunch { open(url) ? .opened : .failed(reason: nil) }
}

/// How opening a browser went.
public enum BrowserLaunch: Sendable {
    /// Asked to show the page (a callback said so, a command exited 0).
    case opened
    /// No browser could be opened; `reason` (when known) says why, in a sentence without the URL.
    case failed(reason: String?)
    /// A command still runs: it may be the browser itself, or an opener that has not answered yet.
    case running(any LaunchedBrowser)
}

/// A browser command that was still running when `launch` returned. Its page is served meanwhile; the command is
/// looked at (`check`, never blocking) until the page was fetched, then let go (`release`).
public protocol LaunchedBrowser: AnyObject, Sendable {
    /// `.running` while the command runs; `.opened` once it exited 0; `.failed` once it and every command after it
    /// failed (a command that fails makes the launcher start the next one: `.running` again).
    func check() -> BrowserLaunchCheck
    /// No longer watched (its page was fetched, or the sign-in ended): the library keeps nothing of it, and it is
    /// not left a zombie. Idempotent.
    func release()
}

/// What `LaunchedBrowser.check` found.
public enum BrowserLaunchCheck: Sendable, Equatable {
    case running
    case opened
    case failed(reason: String?)
}

/// No browser (a client built without NativeAuthNet, as some tests build it): every open fails.
public struct NoBrowser: BrowserLauncher {
    public init() {}
    public func open(_ url: String) -> Bool { false }
}

/// A browser command watched while a listener serves its page: each `tick` (the listener's wait calls it at least
/// every 50 ms) looks at the command until the page is fetched, then lets it go.
final class BrowserWatch: Sendable {
    private let state: Mutex<(process: (any LaunchedBrowser)?, failure: String??)>

    init(_ process: any LaunchedBrowser) { state = Mutex((process, nil)) }

    /// Why the browser failed (the launcher's reason, maybe nil), once it did.
    var failure: String?? { state.withLock { $0.failure } }

    /// True once the command (and every one after it) failed before the page was fetched.
    func tick(pageFetched: Bool) -> Bool {
        let (process, failed) = state.withLock { ($0.process, $0.failure != nil) }
        if failed { return true }
        guard let process else { return false }
        if pageFetched {
            release()
            return false
        }
        switch process.check() {
        case .running: return false
        case .opened:
            release()
            return false
        case .failed(let reason):
            state.withLock {
                $0.failure = .some(reason)
                $0.process = nil
            }
            process.release()
            return true
        }
    }

    func release() {
        let process = state.withLock { s -> (any LaunchedBrowser)? in
            defer { s.process = nil }
            return s.process
        }
        process?.release()
    }

    deinit { state.withLock { $0.process }?.release() }
}
