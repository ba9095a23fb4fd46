/// Opens a URL in the user's browser. Returns false when it could not. The production launcher (the configured
/// command, `$BROWSER`, `xdg-open`: NativeAuthNet's `SystemBrowserLauncher`) is wired in by the composition root; the
/// app's own (`na_client_set_browser_callback`) takes its place while set (see `BrowserSlot`).
public protocol BrowserLauncher: Sendable {
    func open(_ url: String) -> Bool
}

/// No browser (a client built without NativeAuthNet, as some tests build it): every open fails.
public struct NoBrowser: BrowserLauncher {
    public init() {}
    public func open(_ url: String) -> Bool { false }
}
