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

    init(counters: Counters) { self.counters = counters }

    /// Sends a fresh one-time code of `length` digits to `address` (over `channel`) and returns it.
    func send(to address: String, purpose: String, length: Int, now: Double, channel: String = "email") -> String {
        let code = Ids.otp(length: length)
        messages.withLock {
            $0.append(
                OutboxMessage(to: address.lowercased(), code: code, purpose: purpose, sentAt: now, channel: channel)
            )
        }
        counters.add(.codesSent)
        return code
    }

    /// The messages sent to `to` (every message when nil), oldest first.
    func json(to: String?) -> [JSONValue] { messages.withLock { $0.filter { to == nil || $0.to == to }.map(\.json) } }

    func clear() { messages.withLock { $0.removeAll() } }
}
