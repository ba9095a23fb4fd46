// Target "dbus": what the Secret Service key store's D-Bus client reads from the session bus's socket. Input: the
// bytes the socket delivers (any number of messages, as the connection reads them: frame the first message from its
// first 16 bytes, decode it, drop it, go on).
//  - framing and decoding never trap (a trap is how a bounds or arithmetic bug shows here), and refuse what is over
//    1 MiB from the first 16 bytes;
//  - every prefix of a complete message is "incomplete" (the connection waits for more, never decodes a part);
//  - a decoded message, encoded again (little-endian), decodes to the same header and body types, and that encoding
//    is a fixed point: encoding what it decodes to gives the same bytes.
@testable import NativeAuthKeyring

func fuzzDBus(_ data: UnsafeRawBufferPointer) {
    var rest = data
    while true {
        let framing = DBusMessage.frame(rest)
        guard case .complete(let length) = framing else { return }
        guard length >= 16, length <= rest.count, length <= DBusMessage.maxSize else {
            finding("a message's length is out of bounds: \(length) of \(rest.count)")
        }
        let step = max(1, length / 16)
        for cut in stride(from: 0, to: length, by: step) {
            guard DBusMessage.frame(UnsafeRawBufferPointer(rebasing: rest[0..<cut])) == .incomplete else {
                finding("a prefix of \(cut) bytes of a \(length)-byte message is not incomplete")
            }
        }
        if let m = try? DBusMessage.decode(UnsafeRawBufferPointer(rebasing: rest[0..<length])) { checkReencoding(m) }
        rest = UnsafeRawBufferPointer(rebasing: rest[length...])
    }
}

private func decodeBytes(_ bytes: [UInt8]) -> DBusMessage? {
    bytes.withUnsafeBytes { try? DBusMessage.decode($0) }
}

private func checkReencoding(_ m: DBusMessage) {
    let first = m.encoded(serial: m.serial).array
    guard let again = decodeBytes(first) else { finding("a decoded message does not decode once encoded again") }
    guard again.type == m.type, again.flags == m.flags, again.serial == m.serial, again.path == m.path,
        again.interface == m.interface, again.member == m.member, again.errorName == m.errorName,
        again.replySerial == m.replySerial, again.destination == m.destination, again.sender == m.sender,
        again.unixFDs == m.unixFDs, again.signature == m.signature, again.body.map(\.type) == m.body.map(\.type)
    else { finding("a message encoded again decodes to another message") }
    guard again.encoded(serial: again.serial).array == first else { finding("encoding is not a fixed point") }
}
