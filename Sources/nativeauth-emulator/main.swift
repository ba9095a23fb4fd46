// nativeauth-emulator — a local Microsoft Entra External ID (native auth + OIDC) for development and tests.
//
//   nativeauth-emulator [--port N|0] [--config FILE] [--ready-file FILE] [--tls] [--tls-dir DIR] [--tls-name NAME]
//                       [--quiet]
//
// When ready it prints one JSON line (base_url, authority, client_id, apis, users, …) to stdout and, with
// --ready-file, writes the same line to FILE. It binds 127.0.0.1 only and stops cleanly on SIGINT/SIGTERM. When its
// stderr is a terminal, it prints there each one-time code it "sends" (channel, masked address, code), --quiet or not.
import Foundation
import NativeAuthEmulator
import NativeAuthJSON

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("nativeauth-emulator: \(message)\n".utf8))
    exit(2)
}

let usage = """
    usage: nativeauth-emulator [--port N|0] [--config FILE] [--ready-file FILE] [--tls] [--tls-dir DIR]
                               [--tls-name NAME] [--quiet]
      --port N         TCP port on 127.0.0.1 (default 0: a free port)
      --config FILE    JSON tenant configuration (default: the built-in demo tenant; docs/emulator.md)
      --ready-file F   also write the ready line to F
      --tls            serve HTTPS with a freshly generated local CA (its path is in the ready line as ca_file)
      --tls-dir DIR    where to write ca.pem / server.pem / server-key.pem (default: a new temp directory)
      --tls-name NAME  the certificate also names NAME (a host name only a proxy resolves, say; then POST
                       /_emulator/settings {"public_base_url":"https://NAME:PORT"} makes the emulator use it)
      --quiet          no per-request log lines on stderr
    When stderr is a terminal, each one-time code it sends is printed there (also with --quiet).
    """

var port: UInt16 = 0
var configPath: String? = nil
var readyFile: String? = nil
var tls = false
var tlsDir: String? = nil
var tlsName: String? = nil
var quiet = false
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--port":
        guard let v = args.popFirst(), let p = UInt16(v) else { fail("--port needs a number 0-65535") }
        port = p
    case "--config":
        guard let v = args.popFirst() else { fail("--config needs a file") }
        configPath = v
    case "--ready-file":
        guard let v = args.popFirst() else { fail("--ready-file needs a file") }
        readyFile = v
    case "--tls": tls = true
    case "--tls-dir":
        guard let v = args.popFirst() else { fail("--tls-dir needs a directory") }
        tlsDir = v
    case "--tls-name":
        guard let v = args.popFirst(), !v.isEmpty, v.utf8.count <= 253,
            v.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
        else { fail("--tls-name needs a host name") }
        tlsName = v
    case "--quiet": quiet = true
    case "-h", "--help":
        print(usage)
        exit(0)
    default: fail("unknown argument \(a)\n\(usage)")
    }
}

var config = EmulatorConfig.demo
if let configPath {
    guard let data = FileManager.default.contents(atPath: configPath) else { fail("cannot read \(configPath)") }
    do {
        config = try EmulatorConfig.load(json: try JSONValue.parse(Array(data)))
    } catch {
        fail("invalid configuration \(configPath): \(error)")
    }
}

signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
signal(SIGPIPE, SIG_IGN)

// SIGINT/SIGTERM stop the emulator cleanly. The sources are installed before anything starts: a signal sent as soon
// as the ready file exists (or earlier) is delivered to the loop at the end, never lost while the default action is
// ignored.
let stop = AsyncStream<Int32> { continuation in
    for sig in [SIGINT, SIGTERM] {
        let source = DispatchSource.makeSignalSource(signal: sig, queue: .main)
        source.setEventHandler { continuation.yield(sig) }
        source.resume()
        nonisolated(unsafe) let keep = source
        continuation.onTermination = { _ in _ = keep }
    }
}

let server: EmulatorServer
do {
    let emulator = try Emulator(config: config)
    // Whoever runs it in a terminal reads the codes it "sends" there; never into a log file or a pipe (CI).
    // (One write(2) a line, its result ignored: a terminal that went away never stops the emulator.)
    if isatty(2) != 0 {
        emulator.announceCodes { line in
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
    }
    server = try await EmulatorServer.start(
        emulator: emulator,
        port: port,
        tls: tls,
        tlsDirectory: tlsDir,
        tlsName: tlsName,
        logRequests: !quiet
    )
} catch {
    fail("cannot start: \(error)")
}

let line = server.readyDocument.serialized() + "\n"
if let readyFile {
    // The ready line holds the control token: it is written 0600 from its first byte into a new file (O_EXCL, never
    // through a symbolic link planted at the temporary name), then renamed into place.
    let tmp = readyFile + ".tmp"
    unlink(tmp)
    let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fail("cannot write \(readyFile)") }
    let bytes = Array(line.utf8)
    let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    guard close(fd) == 0, written == bytes.count, rename(tmp, readyFile) == 0 else {
        unlink(tmp)
        fail("cannot write \(readyFile)")
    }
}
FileHandle.standardOutput.write(Data(line.utf8))

for await sig in stop {
    FileHandle.standardError.write(Data("nativeauth-emulator: signal \(sig), stopping\n".utf8))
    break
}
await server.stop()
exit(0)
