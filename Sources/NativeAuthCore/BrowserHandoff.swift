/// The client's browser launcher: the app's (`na_client_set_browser_callback`), else the system's, looked up when a
/// browser is opened — not when a sign-in starts, so a callback replaced during OIDC discovery is never called.
///
/// It has the log callback's guarantee (`Logger`): the app's launcher runs under a read lock and replacing it takes
/// the write lock, so `replace` waits until invocations already running on other threads have returned — after it
/// returns the old launcher (a C callback and its `user_data`, maybe freed next) is never called again. A launcher
/// that opens a browser through the same client again (it called back into the library) is called directly, without
/// re-locking; one that tries to replace itself gets `false` from `replace` instead of a deadlock. The system
/// launcher (which may wait up to two seconds for a command) runs outside the lock.
final class BrowserSlot: BrowserLauncher, Sendable {
    private let lock = ReadWriteLock()
    private nonisolated(unsafe) var custom: (any BrowserLauncher)?  // guarded by `lock`
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
        lock.withWriteLock { custom = launcher }
        return true
    }

    func open(_ url: String) -> Bool {
        if isRunningOnThisThread {
            // Re-entered from the app's launcher: this thread holds the read lock already.
            return (custom ?? system).open(url)
        }
        let answer: Bool? = lock.withReadLock {
            guard let custom else { return nil }
            let outer = BrowserSlot.running.value
            BrowserSlot.running.value = Unmanaged.passUnretained(self).toOpaque()
            defer { BrowserSlot.running.value = outer }
            return custom.open(url)
        }
        return answer ?? system.open(url)
    }
}
