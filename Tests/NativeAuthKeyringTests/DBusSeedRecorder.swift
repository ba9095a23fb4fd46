import Foundation
import Glibc
import NativeAuthCore
import Testing

@testable import NativeAuthKeyring

/// Records the `dbus` fuzz target's seeds (Tests/Fuzz/corpus/dbus): every message of a store, lookups, a lookup in a
/// locked keyring and a call to a name nobody owns, as `dbus-monitor --binary` sees them on a private bus with
/// gnome-keyring — real replies, in the byte order their senders wrote. Runs only when asked:
///
///     NATIVEAUTH_DBUS_SEEDS=$PWD/Tests/Fuzz/corpus/dbus swift test --filter DBusSeedRecorder
///
/// The key stored is a fixed, made-up one (32 bytes of "K").
@Suite("D-Bus seed recorder")
struct DBusSeedRecorder {
    static let out = ProcessInfo.processInfo.environment["NATIVEAUTH_DBUS_SEEDS"]

    @Test("record the dbus fuzz target's seeds", .enabled(if: out != nil))
    func record() throws {
        guard let out = Self.out else { return }
        let ss = try PrivateSecretService()
        let capture = ss.dir.path + "/monitor.bin"
        guard FileManager.default.createFile(atPath: capture, contents: nil) else { throw TestFailure("capture") }
        let monitor = Process()
        monitor.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        monitor.arguments = ["dbus-monitor", "--address", ss.address, "--binary"]
        monitor.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: capture))
        monitor.standardError = FileHandle.nullDevice
        try runUnblocked(monitor)
        // The monitor's own NameAcquired/NameLost come first: once they are written, it sees everything.
        let ready = Deadline(seconds: 10)
        while (try? FileManager.default.attributesOfItem(atPath: capture)[.size] as? Int) ?? 0 == 0 {
            guard ready.remainingMilliseconds > 0 else { throw TestFailure("dbus-monitor did not start") }
            _ = poll(nil, 0, 10)
        }

        let store = SecretServiceKeyStore(busAddress: ss.address)
        let key = Secret(String(repeating: "K", count: 32))
        let path = "/home/user/.cache/app/nativeauth-cache.json"
        try store.store(key, cachePath: path)
        #expect(try store.lookup(cachePath: path) == key)
        #expect(try store.lookup(cachePath: "/nothing/here.json") == nil)
        try ss.lockDefaultCollection()
        #expect(throws: NativeAuthError.self) { _ = try store.lookup(cachePath: path) }
        #expect(throws: NativeAuthError.self) { try store.store(key, cachePath: path) }
        let bus = try DBusConnection(address: ss.address, deadline: Deadline(seconds: 5))
        #expect(throws: DBusFailure.self) { _ = try bus.call(.call("org.example.Nobody", "/", nil, "Nothing")) }
        bus.close()
        // The last reply reaches the monitor after ours: wait for the error above, the last message sent.
        let done = Deadline(seconds: 10)
        while !(try Data(contentsOf: URL(fileURLWithPath: capture))).contains(Array("org.example.Nobody".utf8)) {
            guard done.remainingMilliseconds > 0 else { throw TestFailure("the monitor missed the last call") }
            _ = poll(nil, 0, 10)
        }
        kill(monitor.processIdentifier, SIGKILL)
        monitor.waitUntilExit()

        // One file per kind of message (the first of each: a call, a return or error named by the call it answers,
        // a signal), and one per distinct conversation a connection received, as its socket delivered it.
        let stream = [UInt8](try Data(contentsOf: URL(fileURLWithPath: capture)))
        var offset = 0
        var calls: [String: String] = [:]  // "sender serial" → member
        var written = Set<String>()
        var received: [(String, [UInt8], String)] = []  // destination, message, name
        while offset < stream.count {
            let rest = Array(stream[offset...])
            guard case .complete(let length) = rest.withUnsafeBytes({ DBusMessage.frame($0) }) else { break }
            let message = Array(rest.prefix(length))
            offset += length
            let m = try message.withUnsafeBytes { p in
                try Result { () throws(DBusDecodeError) in try DBusMessage.decode(p) }.get()
            }
            let name: String
            switch m.type {
            case DBusMessage.methodCall:
                calls["\(m.sender ?? "") \(m.serial)"] = m.member
                name = "call-" + (m.member ?? "")
            case DBusMessage.methodReturn, DBusMessage.errorReply:
                let answered = calls["\(m.destination ?? "") \(m.replySerial ?? 0)"] ?? "unknown"
                let error = m.errorName.map { "-" + ($0.split(separator: ".").last.map(String.init) ?? $0) } ?? ""
                name = (m.type == DBusMessage.errorReply ? "error-" : "return-") + answered + error
            default:
                name = "signal-" + (m.member ?? "")
            }
            if let d = m.destination { received.append((d, message, name)) }
            if written.insert(name).inserted {
                try Data(message).write(to: URL(fileURLWithPath: "\(out)/\(name)"))
            }
        }
        var conversations = Set<[String]>()
        for destination in Set(received.map(\.0)) where destination.hasPrefix(":") {
            let mine = received.filter { $0.0 == destination }
            guard mine.count > 3, conversations.insert(mine.map(\.2)).inserted else { continue }
            let answers = mine.map(\.2).filter { !$0.hasPrefix("signal-") && !$0.hasSuffix("-Hello") }
            let file = "\(out)/stream-" + answers.joined(separator: "+")
            try Data(mine.flatMap(\.1)).write(to: URL(fileURLWithPath: file))
        }
        let n = written.count + conversations.count
        #expect(n > 10)
    }
}
