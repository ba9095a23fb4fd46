import NativeAuthJSON
import Synchronization

/// A one-time code that would have been emailed (or, `channel` "sms", texted to a phone number).
struct OutboxMessage {
    var to: String
    var code: String
    var purpose: String
    var sentAt: Double
    var channel = "email"
    var json: JSONValue {
        [
            "to": .string(to), "code": .string(code), "purpose": .string(purpose), "sent_at": .double(sentAt),
            "channel": .string(channel),
        ]
    }
}

/// The codes the emulator "sends" (`GET /_emulator/outbox`). A leaf lock.
final class Outbox: Sendable {
    private let messages = Mutex<[OutboxMessage]>([])
    private let counters: Counters
    /// Told each message as it is sent (`Emulator.announceCodes`: the foreground emulator's terminal).
    private let announcer = Mutex<(@Sendable (OutboxMessage) -> Void)?>(nil)

    init(counters: Counters) { self.counters = counters }

    /// Sends a fresh one-time code of `length` digits to `address` (over `channel`) and returns it.
    func send(to address: String, purpose: String, length: Int, now: Double, channel: String = "email") -> String {
        let code = Ids.otp(length: length)
        let message = OutboxMessage(
            to: address.lowercased(),
            code: code,
            purpose: purpose,
            sentAt: now,
            channel: channel
        )
        messages.withLock { $0.append(message) }
        counters.add(.codesSent)
        announcer.withLock { $0 }?(message)  // (called outside the lock)
        return code
    }

    func announce(_ announcer: (@Sendable (OutboxMessage) -> Void)?) { self.announcer.withLock { $0 = announcer } }

    /// The messages sent to `to` (every message when nil), oldest first.
    func json(to: String?) -> [JSONValue] { messages.withLock { $0.filter { to == nil || $0.to == to }.map(\.json) } }

    func clear() { messages.withLock { $0.removeAll() } }
}

extension OutboxMessage {
    /// One line for a person at the emulator's terminal: the channel, the address masked (`o***a@contoso.com`,
    /// `+1*******4567`), the code and what it is for. Nothing from the request reaches the terminal raw: a control
    /// or bidirectional character in the address is shown as `?`.
    var announcement: String {
        "nativeauth-emulator: \(channel) to \(Self.printable(Self.masked(to))): code \(code) (\(purpose))"
    }

    static func masked(_ address: String) -> String {
        let characters = Array(address)
        if let at = characters.lastIndex(of: "@") {
            let local = characters[..<at]
            guard local.count > 2, let first = local.first, let last = local.last else {
                return String(local.prefix(1)) + "*" + String(characters[at...])
            }
            return "\(first)***\(last)" + String(characters[at...])
        }
        let kept = min(4, characters.count / 2)
        let hidden = characters.dropLast(kept).map { (c: Character) -> Character in c == "+" ? "+" : "*" }
        return String(hidden) + String(characters.suffix(kept))
    }

    static func printable(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars.prefix(320) {
            let v = scalar.value
            let unsafe =
                v < 0x20 || (0x7F...0x9F).contains(v) || v == 0x061C || (0x200E...0x200F).contains(v)
                || (0x2028...0x202E).contains(v) || (0x2066...0x2069).contains(v)
            out.append(unsafe ? "?" : scalar)
        }
        return String(out)
    }
}
