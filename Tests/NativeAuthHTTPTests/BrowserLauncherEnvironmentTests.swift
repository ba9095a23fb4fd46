import Foundation
import NativeAuthCore
import NativeAuthNet
import Testing

/// The browser is a program the host did not write: it gets the host's environment without the NATIVEAUTH_*
/// variables, which may hold secrets (a cache key, a password for the CLI).
@Suite struct BrowserLauncherEnvironmentTests {
    @Test func theBrowserDoesNotInheritNativeAuthVariables() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("na-env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let seen = dir.appendingPathComponent("env.txt").path
        let script = dir.appendingPathComponent("browser.sh").path
        try "#!/bin/sh\nenv > '\(seen)'\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        setenv("NATIVEAUTH_TEST_CACHE_KEY", "c2VjcmV0", 1)
        setenv("NA_TEST_KEPT_VARIABLE", "kept", 1)
        // Run by /bin/sh rather than exec'd: a script written just now may be "text file busy" while a child that
        // another test's thread is spawning still holds the writer's descriptor.
        let launcher = SystemBrowserLauncher(command: "/bin/sh " + script, environment: { _ in nil }, fallback: "false")
        #expect(launcher.open("http://127.0.0.1:1/start"))
        let env = try String(contentsOfFile: seen, encoding: .utf8)
        #expect(!env.contains("NATIVEAUTH_"), "\(env)")
        #expect(env.contains("NA_TEST_KEPT_VARIABLE=kept"))
    }
}
