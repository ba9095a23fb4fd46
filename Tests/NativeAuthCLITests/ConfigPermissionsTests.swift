internal import Glibc
import Testing

@testable import nativeauth_cli

/// The configuration file's owner and mode, as ssh judges ~/.ssh/config (issue 28; end to end:
/// test_config_permissions.py, which cannot make root-owned files when it does not run as root).
@Suite("Configuration file permissions")
struct ConfigPermissionsTests {
    @Test("owned by the user or root, writable by neither group nor others")
    func rule() {
        let user: uid_t = 1000
        for (owner, mode) in [(user, 0o600), (user, 0o644), (user, 0o400), (0, 0o644), (0, 0o600), (user, 0o4755)] {
            #expect(ConfigPermissions.problem("/c", owner: owner, mode: mode_t(mode), user: user) == nil)
        }
        #expect(ConfigPermissions.problem("/c", owner: 0, mode: 0o644, user: 0) == nil)
        let other = ConfigPermissions.problem("/c", owner: 1001, mode: 0o600, user: user)
        #expect(other?.contains("owned by uid 1001, not by you (uid 1000) or root") == true)
        #expect(other?.contains("chown 1000 /c") == true)
        let cases: [(mode_t, String)] = [
            (0o664, "its group (mode 0664)"), (0o646, "others (mode 0646)"),
            (0o666, "its group and others (mode 0666)"), (0o100620, "its group (mode 0620)"),
            (0o1777, "its group and others (mode 1777)"),
        ]
        for (mode, said) in cases {
            let problem = ConfigPermissions.problem("/c", owner: 0, mode: mode, user: user)
            #expect(problem?.contains("/c is writable by \(said)") == true, "\(String(mode, radix: 8))")
            #expect(problem?.contains("chmod go-w /c") == true)
        }
    }
}
