import Foundation
import NativeAuthCrypto
import Testing

/// Base64 over every kind of collection the generic entry points take: contiguous ones (arrays, slices that do not
/// start at 0, `Data` slices, a string's UTF-8) and non-contiguous ones (lazy and reversed views), both alphabets,
/// and appended after bytes already in the output (also one with spare capacity), against Foundation.
@Suite struct Base64CollectionTests {
    func foundation(_ bytes: [UInt8]) -> (standard: String, url: String) {
        let s = Data(bytes).base64EncodedString()
        let u = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        return (s, u.replacingOccurrences(of: "=", with: ""))
    }

    func check(_ bytes: some Collection<UInt8>, _ expected: (standard: String, url: String)) {
        #expect(Base64.encode(bytes) == expected.standard)
        #expect(Base64.urlEncode(bytes) == expected.url)
        var out = Array("head.".utf8)
        out.reserveCapacity(4096)
        Base64.urlEncode(bytes, into: &out)
        Base64.urlEncode(bytes, into: &out)
        #expect(out == Array(("head." + expected.url + expected.url).utf8))
    }

    @Test func everyCollectionKindAndLength() {
        var rng = SystemRandomNumberGenerator()
        for n in 0...130 {
            let padded = (0..<(n + 7)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let bytes = Array(padded[3..<(n + 3)])
            let expected = foundation(bytes)
            check(bytes, expected)
            check(padded[3..<(n + 3)], expected)  // a slice starting at 3
            check(Data(padded)[3..<(n + 3)], expected)  // a Data slice starting at 3
            check(bytes.lazy.map { $0 }, expected)  // not contiguous
            check(bytes.reversed().reversed(), expected)  // not contiguous either
            check(AnyCollection(bytes), expected)
        }
        let text = "Zoë ✓ — a string's UTF-8, native and sliced"
        check(text.utf8, foundation(Array(text.utf8)))
        let sub = text.dropFirst(4)
        check(sub.utf8, foundation(Array(sub.utf8)))
    }

    /// All 256 byte values in each of the three positions of a group, and all 64 characters in each position.
    @Test func everyByteInEveryPosition() {
        for position in 0..<3 {
            for value in 0...255 {
                var bytes: [UInt8] = [0x00, 0xff, 0x5a]
                bytes[position] = UInt8(value)
                for n in 1...3 { check(bytes.prefix(n), foundation(Array(bytes.prefix(n)))) }
            }
        }
    }
}
