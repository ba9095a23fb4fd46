// The nativeauth command. Installed as `nativeauth`, and as `docker-credential-nativeauth` (the same executable: the
// name it was started by picks Docker's credential-helper protocol).
import ArgumentParser
internal import Glibc

let arguments = CommandLine.arguments
let invokedAs = arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? "nativeauth"
if invokedAs.hasPrefix("docker-credential-") {
    exit(DockerCredential.main(Array(arguments.dropFirst())))
}

/// The global options given before the command's name, moved after it (ArgumentParser reads a command's options
/// after its name; `nativeauth -v login` and `nativeauth login -v` mean the same).
func reordered(_ args: [String]) -> [String] {
    let commands = Set(NativeAuthCommand.configuration.subcommands.compactMap { $0.configuration.commandName })
    guard let at = args.firstIndex(where: { commands.contains($0) }), at > 0 else { return args }
    var moved: [String] = []
    var kept: [String] = []
    var i = 0
    while i < at {
        let a = args[i]
        let name = String(a.split(separator: "=", maxSplits: 1).first ?? "")
        if NativeAuthCommand.globalFlags.contains(a) {
            moved.append(a)
        } else if NativeAuthCommand.globalOptions.contains(name) {
            moved.append(a)
            if !a.contains("="), i + 1 < at {
                moved.append(args[i + 1])
                i += 1
            }
        } else {
            kept.append(a)
        }
        i += 1
    }
    return kept + [args[at]] + moved + args[(at + 1)...]
}

Interrupts.install()
if arguments.count < 2 {  // no command: the help, on stderr, as a usage error
    Terminal.write(2, NativeAuthCommand.helpMessage() + "\n")
    exit(ExitCode.usage.rawValue)
}
do {
    var command = try NativeAuthCommand.parseAsRoot(reordered(Array(arguments.dropFirst())))
    try command.run()
    exit(0)
} catch let carrier as ExitCodeCarrier {
    exit(carrier.code)
} catch {
    if NativeAuthCommand.exitCode(for: error) == .success {  // --help, --version
        Terminal.write(1, NativeAuthCommand.fullMessage(for: error) + "\n")
        exit(0)
    }
    Terminal.write(2, "nativeauth: usage: \(Terminal.lines(NativeAuthCommand.message(for: error)))\n")
    exit(ExitCode.usage.rawValue)
}
