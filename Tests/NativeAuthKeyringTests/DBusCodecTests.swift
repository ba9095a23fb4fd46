import Testing

@testable import NativeAuthKeyring

/// The message bytes of `message` with `serial`.
func encode(_ message: DBusMessage, serial: UInt32 = 7) -> [UInt8] {
    message.encoded(serial: serial).array
}

func decode(_ bytes: [UInt8]) throws(DBusDecodeError) -> DBusMessage {
    let r = bytes.withUnsafeBytes { p in Result { () throws(DBusDecodeError) in try DBusMessage.decode(p) } }
    return try r.get()
}

func frame(_ bytes: [UInt8]) -> DBusMessage.Framing { bytes.withUnsafeBytes { DBusMessage.frame($0) } }

@Suite("D-Bus signatures, messages and addresses")
struct DBusCodecTests {
    @Test(
        "valid signatures parse and print back",
        arguments: ["", "s", "a{sv}", "(oayays)", "a{o(oayays)}", "aay", "ao", "a(yv)", "ybnqiuxtdhsogv", "a{ya{sv}}"]
    )
    func validSignatures(_ s: String) {
        let types = DBusType.parse(s.utf8)
        #expect(types != nil)
        #expect(types?.map(\.signature).joined() == s)
    }

    @Test(
        "invalid signatures are refused",
        arguments: [
            "{ss}", "a{vs}", "a{(s)s}", "()", "a", "(s", "s)", "a{sss}", "a{s}", "z", "a{ss", "(a{ss)}",
            String(repeating: "a", count: 33) + "y",
            String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33),
            String(repeating: "y", count: 256),
        ]
    )
    func invalidSignatures(_ s: String) {
        #expect(DBusType.parse(s.utf8) == nil)
    }

    @Test("a method call with every type survives encoding and decoding")
    func roundTrip() throws {
        let body: [DBusValue] = [
            .byte(0xfe), .boolean(true), .int16(-2), .uint16(65000), .int32(-70000), .uint32(4_000_000_000),
            .int64(-1 << 40), .uint64(1 << 63), .double(2.5), .string("héllo"), .objectPath("/a/b_1"),
            .signature("a{sv}"), .bytes(DBusBytes.copy([1, 2, 3])),
            .stringDictionary([("application", "nativeauth"), ("cache_path", "/x")]),
            .structure([.objectPath("/"), .bytes(DBusBytes.copy([])), .variant(.array(.string, []))]),
            .variant(.variant(.uint32(9))), .objectPaths([]),
        ]
        var call = DBusMessage.call("org.example", "/org/example", "org.example.I", "M", body)
        call.flags = DBusMessage.noReplyExpected
        let bytes = encode(call)
        #expect(bytes.count % 1 == 0 && frame(bytes) == .complete(length: bytes.count))
        let m = try decode(bytes)
        #expect(m.type == DBusMessage.methodCall && m.serial == 7 && m.flags == DBusMessage.noReplyExpected)
        #expect(m.destination == "org.example" && m.path == "/org/example" && m.interface == "org.example.I")
        #expect(m.member == "M")
        #expect(m.signature == body.map(\.type.signature).joined())
        #expect(m.body.map(\.type) == body.map(\.type))
        // Encoding the decoded message again gives the same bytes.
        var again = DBusMessage.call("org.example", "/org/example", "org.example.I", "M", m.body)
        again.flags = m.flags
        #expect(encode(again) == bytes)
        guard case .bytes(let b) = m.body[12], case .string(let s) = m.body[9] else {
            Issue.record("values changed kind")
            return
        }
        #expect(b.array == [1, 2, 3] && s == "héllo")
    }

    @Test("a big-endian message decodes")
    func bigEndian() throws {
        // A method return, serial 2, reply to 1, signature "s", body "ok".
        let start: [UInt8] = [UInt8(ascii: "B"), 2, 0, 1, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, 15]
        let replySerial: [UInt8] = [5, 1, UInt8(ascii: "u"), 0, 0, 0, 0, 1]
        let signature: [UInt8] = [8, 1, UInt8(ascii: "g"), 0, 1, UInt8(ascii: "s"), 0, 0]
        let body: [UInt8] = [0, 0, 0, 2, UInt8(ascii: "o"), UInt8(ascii: "k"), 0]
        let bytes = start + replySerial + signature + body
        let m = try decode(bytes)
        #expect(m.type == DBusMessage.methodReturn && m.serial == 2 && m.replySerial == 1)
        #expect(m.body.first?.stringValue == "ok")
    }

    @Test("framing waits for 16 bytes and the whole message, and refuses messages over 1 MiB from their start")
    func framing() {
        let bytes = encode(.call(nil, "/", nil, "Ping"))
        #expect(frame(Array(bytes.prefix(15))) == .incomplete)
        #expect(frame(Array(bytes.dropLast())) == .incomplete)
        #expect(frame(bytes + [1, 2]) == .complete(length: bytes.count))
        var big = Array(bytes.prefix(16))
        big[4] = 0x01
        big[5] = 0x00
        big[6] = 0x10  // body length 1 MiB + 1
        #expect(frame(big) == .invalid("message larger than 1 MiB"))
        var order = bytes
        order[0] = UInt8(ascii: "x")
        #expect(frame(order) == .invalid("unknown byte order"))
    }

    @Test("malformed messages are refused, never trap")
    func malformed() {
        let good = encode(.call("d", "/p", "i.f", "M", [.string("abc"), .boolean(false)]))
        #expect((try? decode(good)) != nil)
        // Every truncation, and every single-byte change, decodes or is refused.
        for cut in 0..<good.count { #expect(throws: DBusDecodeError.self) { try decode(Array(good.prefix(cut))) } }
        for i in 0..<good.count {
            for v: UInt8 in [0, 1, 0x7f, 0x80, 0xff] {
                var b = good
                b[i] = v
                _ = try? decode(b)
            }
        }
        // A boolean of 2.
        var bad = good
        bad[bad.count - 4] = 2
        #expect(throws: DBusDecodeError("boolean other than 0 or 1")) { try decode(bad) }
        // Method call without a member.
        #expect(throws: DBusDecodeError.self) { try decode(encode(DBusMessage(type: DBusMessage.methodCall))) }
    }

    @Test("nesting past 64 containers is refused")
    func deepNesting() {
        var v = DBusValue.byte(1)
        for _ in 0..<70 { v = .variant(v) }
        let bytes = encode(.call(nil, "/", nil, "M", [v]))
        #expect(throws: DBusDecodeError("nested too deeply")) { try decode(bytes) }
        var ok = DBusValue.byte(1)
        for _ in 0..<60 { ok = .variant(ok) }
        #expect((try? decode(encode(.call(nil, "/", nil, "M", [ok])))) != nil)
    }

    @Test(
        "object paths",
        arguments: [
            ("/", true), ("/a/b", true), ("/a_1/B2", true), ("", false), ("a", false),
            ("/a/", false), ("//", false), ("/a//b", false), ("/a-b", false), ("/é", false),
        ]
    )
    func objectPaths(_ path: String, _ valid: Bool) {
        #expect(DBusReader.isObjectPath(path) == valid)
    }

    @Test("addresses: unix path and abstract, escapes, several entries, unusable ones skipped")
    func addresses() {
        let (e, skipped) = DBusEndpoint.parse(
            "tcp:host=x,port=1;unix:path=/run/user/1000/bus,guid=ab;unix:abstract=/tmp/dbus-%41b;unix:tmpdir=/tmp;"
                + "unix:path=%zz;nocolon"
        )
        #expect(e == [.path(Array("/run/user/1000/bus".utf8)), .abstract(Array("/tmp/dbus-Ab".utf8))])
        #expect(skipped.count == 4)
        #expect(DBusEndpoint.parse("").endpoints.isEmpty)
        #expect(DBusEndpoint.parse("unix:path=/" + String(repeating: "x", count: 107)).endpoints.isEmpty)
        #expect(DBusEndpoint.parse("unix:path=/a%00b").endpoints.isEmpty)
    }
}
