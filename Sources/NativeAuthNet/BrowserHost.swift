internal import Glibc
internal import NativeAuthCore

/// What this machine offers for showing a browser, as far as the default opener is concerned: a display, an SSH
/// session, a container, Windows Subsystem for Linux. Read from the environment the launcher is given and from two
/// or three files; the files' paths are parameters only tests set (no variable redirects these reads).
struct BrowserHost: Sendable, Equatable {
    /// `DISPLAY` or `WAYLAND_DISPLAY` is set (not empty).
    var display: Bool
    /// The variable that shows an SSH session (`SSH_CONNECTION`, `SSH_TTY`), if any.
    var ssh: String?
    /// What shows a container (`/.dockerenv`, `/run/.containerenv`, `container=`), if anything.
    var container: String?
    /// Windows Subsystem for Linux (`WSL_DISTRO_NAME`, or "Microsoft"/"WSL" in /proc/version).
    var wsl: Bool

    /// The files the probe reads (tests give others).
    struct Files: Sendable {
        var procVersion = "/proc/version"
        var containerMarkers = ["/.dockerenv", "/run/.containerenv"]
    }

    static func probe(environment: (String) -> String?, files: Files = Files()) -> BrowserHost {
        func set(_ name: String) -> Bool { !(environment(name) ?? "").isEmpty }
        var container: String? = files.containerMarkers.first { access($0, F_OK) == 0 }
        if container == nil, set("container") {
            container = "container=\(DisplayText.bounded(environment("container") ?? "", limit: 40))"
        }
        let version = (readSmallFile(files.procVersion) ?? "").lowercased()
        return BrowserHost(
            display: set("DISPLAY") || set("WAYLAND_DISPLAY"),
            ssh: ["SSH_CONNECTION", "SSH_TTY"].first { set($0) },
            container: container,
            wsl: set("WSL_DISTRO_NAME") || version.contains("microsoft") || version.contains("wsl")
        )
    }

    /// The commands that open a URL when none is configured, and why there are none (or fewer than a desktop's).
    /// Over SSH the browser would open on the far machine, if anywhere: none (an explicit `$BROWSER` still runs —
    /// a remote editor's helper, for one). Under WSL the Windows browser (`wslview`, else `explorer.exe`, whose
    /// exit status is 1 when it opened the page). Without a display (a server, most containers): none. A
    /// container with a display (toolbox, distrobox, an X socket passed in) is a desktop.
    func defaultOpeners() -> (commands: [BrowserCommand], skipped: String?) {
        if let ssh {
            return ([], "the default browser was not tried: this is an SSH session (\(ssh) is set)")
        }
        if wsl {
            var commands = [
                BrowserCommand(words: ["wslview"]), BrowserCommand(words: ["explorer.exe"], opened: [0, 1]),
            ]
            if display { commands.append(BrowserCommand(words: ["xdg-open"])) }
            return (commands, nil)
        }
        guard display else {
            let place = container.map { "this is a container (\($0)) without a display" } ?? "there is no display"
            return ([], "the default browser was not tried: \(place) (neither DISPLAY nor WAYLAND_DISPLAY is set)")
        }
        return ([BrowserCommand(words: ["xdg-open"])], nil)
    }

    /// The first 4 KiB of a file (/proc/version), if it can be read.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while total < bytes.count {
            let n = bytes[total...].withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            total += n
        }
        return String(decoding: bytes[0..<total], as: UTF8.self)
    }
}

/// One command that may open a URL: its words (the URL is added as the last argument, or replaces `%s`), and the
/// exit statuses that mean it did (`explorer.exe` exits 1 when it opened the page).
struct BrowserCommand: Sendable, Equatable {
    var words: [String]
    var opened: Set<Int32> = [0]
    /// Where it came from, for messages: `browser_command`, `$BROWSER`, or nil for a default opener.
    var source: String? = nil
    /// The program as found on PATH (nil: not found).
    var path: String? = nil

    /// argv with the URL in place (the program as found).
    func argv(for url: String) -> [String] {
        var argv = words
        if let path { argv[0] = path }
        if argv.contains(where: { $0.contains("%s") }) { return argv.map { $0.replacing("%s", with: url) } }
        return argv + [url]
    }

    /// The command's name for messages (never its arguments, which hold the URL; from the environment or the
    /// configuration: without controls, bounded).
    var name: String {
        let program = DisplayText.bounded(words.first ?? "", limit: 100)
        return source.map { "\($0) (\(program))" } ?? program
    }

    /// A command line as `browser_command` or one entry of `$BROWSER` spells it: words split at spaces and tabs.
    static func parse(_ line: String, source: String?) -> BrowserCommand? {
        let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard !words.isEmpty else { return nil }
        return BrowserCommand(words: words, source: source)
    }
}
