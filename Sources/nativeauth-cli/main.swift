// The nativeauth command. Installed as `nativeauth`, and as `docker-credential-nativeauth` (the same executable: the
// name it was started by picks Docker's credential-helper protocol).
import ArgumentParser
internal import Glibc

let arguments = CommandLine.arguments
let invokedAs = arguments.first.map { String($0.split(separator: "/").last ?? "") } ?? "nativeauth"
if invokedAs.hasPrefix("docker-credential-") {
    exit(DockerCredential.main(Array(arguments.dropFirst())))
}

Interrupts.install()
if let fast = FastInvocation.parse(Array(arguments.dropFirst())) {
    exit(fast.run())
}
if arguments.count < 2 {  // no command: the help, on stderr, as a usage error
    Terminal.write(2, NativeAuthCommand.helpMessage() + "\n")
    exit(ExitCode.usage.rawValue)
}
do {
    var command = try NativeAuthCommand.parseAsRoot(NativeAuthCommand.reordered(Array(arguments.dropFirst())))
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
