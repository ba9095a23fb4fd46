internal import Glibc

/// What the library tells the authority about the machine, as MSAL does in `x-client-OS` and `x-client-CPU`: the
/// operating system's version and the processor architecture — from uname(2), read once per process. The version is
/// the kernel release ("6.8.0-45-generic"): every Linux system has one (a container too, where /etc/os-release
/// describes the image rather than the system, and may be missing), and it is what identifies "the OS version" on
/// Linux as MSAL iOS's value does on iOS. Neither identifies the user.
enum HostIdentity {
    private static let uname: (release: String, machine: String) = {
        var u = utsname()
        guard Glibc.uname(&u) == 0 else { return ("unknown", "unknown") }
        let release = withUnsafeBytes(of: &u.release) { text($0) }
        let machine = withUnsafeBytes(of: &u.machine) { text($0) }
        return (release ?? "unknown", machine ?? "unknown")
    }()

    static var osVersion: String { uname.release }
    static var cpu: String { uname.machine }

    /// A NUL-terminated field as at most 64 printable ASCII characters (others become `_`); nil when empty.
    private static func text(_ raw: UnsafeRawBufferPointer) -> String? {
        var out = ""
        for b in raw.prefix(while: { $0 != 0 }).prefix(64) {
            out.unicodeScalars.append(Unicode.Scalar(b > 0x20 && b < 0x7f ? b : UInt8(ascii: "_")))
        }
        return out.isEmpty ? nil : out
    }
}
