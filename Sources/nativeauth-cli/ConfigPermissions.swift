internal import Glibc

/// The configuration file chooses the servers the command sends passwords and tokens to, and a command it runs
/// (`browser_command`), so it is read only when no other user could have written it — ssh's rule for ~/.ssh/config
/// (readconf.c, `secure_permissions`): owned by the user or by root, and writable by neither group nor others.
/// Like ssh, the directories above it are not checked: a file another user put there through a writable directory
/// is theirs, and the owner check refuses it. The check is on the file that was opened (fstat), never on a path
/// looked up again; it must be a regular file, opened without blocking (a FIFO put in its place would otherwise
/// block every call of the helpers).
enum ConfigPermissions {
    /// Throws, saying why and how to fix it, when the open file `fd` (the configuration file `path`) is not to be
    /// trusted.
    static func check(_ fd: Int32, _ path: String) throws(CLIError) {
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw CLIError("usage", "cannot check \(path): \(String(cString: strerror(errno)))", .usage)
        }
        // A FIFO (opened without blocking, it would block the first read), a device, /dev/stdin (git's request) or a
        // directory is no configuration file.
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw CLIError(
                "usage",
                "\(path) is not a regular file (a FIFO, a device, a directory, or a link to one): refusing to read it",
                .usage
            )
        }
        if let problem = problem(path, owner: st.st_uid, mode: st.st_mode, user: geteuid()) {
            throw CLIError("usage", problem, .usage)
        }
    }

    /// Why a file of this owner and mode may not be trusted by `user`, or nil when it may.
    static func problem(_ path: String, owner: uid_t, mode: mode_t, user: uid_t) -> String? {
        let risk =
            "so another user could choose the servers nativeauth sends your password and tokens to, or a command "
            + "it runs (browser_command)"
        if owner != user && owner != 0 {
            return "\(path) is owned by uid \(owner), not by you (uid \(user)) or root, \(risk): refusing to read it "
                + "(make it yours: `chown \(user) \(path)`, or remove it)"
        }
        let groupWritable = mode & mode_t(S_IWGRP) != 0
        let othersWritable = mode & mode_t(S_IWOTH) != 0
        guard groupWritable || othersWritable else { return nil }
        let who = groupWritable && othersWritable ? "its group and others" : groupWritable ? "its group" : "others"
        var octal = String(mode & 0o7777, radix: 8)
        while octal.count < 4 { octal = "0" + octal }
        return "\(path) is writable by \(who) (mode \(octal)), \(risk): refusing to read it (fix: `chmod go-w \(path)`)"
    }
}
