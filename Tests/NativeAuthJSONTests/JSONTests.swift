import NativeAuthJSON
import Testing

@Suite struct JSONRoundTrip {
    @Test func scalarsAndContainers() throws {
        let doc: JSONValue = [
            "s": "héllo \"wörld\" \n\t✓", "i": 42, "neg": -7, "d": 1.5, "t": true, "f": false, "n": nil,
            "a": [1, "two", [3], ["k": "v"]], "o": ["nested": ["deep": 1]], "empty": [:], "ea": [],
        ]
        let text = doc.serialized()
        let back = try JSONValue.parse(text)
        #expect(back == doc)
        #expect(text.hasPrefix("{\"a\":"))  // sorted keys, compact
        #expect(!text.contains(" : "))
    }

    @Test func int64Limits() throws {
        let doc: JSONValue = ["max": .int(Int64.max), "min": .int(Int64.min)]
        #expect(try JSONValue.parse(doc.serialized()) == doc)
    }

    @Test func embeddedNULInValuesIsPreservedAndInKeysRefused() throws {
        let v = try JSONValue.parse(#"{"ab":"x\u0000y"}"#)
        #expect(v["ab"]?.stringValue == "x\u{0}y")
        #expect(try JSONValue.parse(v.serialized()) == v)
        #expect(throws: JSONParseError.self) { try JSONValue.parse(#"{"a\u0000b":1}"#) }
    }

    @Test func nonFiniteDoublesSerialiseAsNull() {
        #expect(JSONValue.array([.double(.nan), .double(.infinity)]).serialized() == "[null,null]")
    }

    @Test func anyTopLevelValue() throws {
        #expect(try JSONValue.parse("3") == .int(3))
        #expect(try JSONValue.parse("\"x\"") == .string("x"))
        #expect(try JSONValue.parse("null") == .null)
    }

    @Test func unicodeEscapesDecode() throws {
        #expect(try JSONValue.parse(#""\u00e9\ud83d\ude00""#) == .string("é😀"))
    }
}

@Suite struct JSONMalformed {
    func fails(_ bytes: [UInt8]) -> JSONParseError? {
        do {
            _ = try JSONValue.parse(bytes)
            return nil
        } catch { return error }
    }

    @Test(arguments: [
        "", " ", "{", "{\"a\":}", "[1,]", "{'a':1}", "tru", "01", "{\"a\":1}}", "\"unterminated",
        "[1 2]", "{\"a\" 1}", "NaN", "-", "1e", "\"\\x\"",
    ])
    func syntaxErrors(text: String) {
        let e = fails(Array(text.utf8))
        #expect(e != nil)
        #expect(!(e?.reason.isEmpty ?? true))
    }

    @Test func invalidUTF8() {
        #expect(fails([0x22, 0xff, 0xfe, 0x22]) != nil)  // "\xff\xfe"
        #expect(fails([0x22, 0xc3, 0x22]) != nil)  // truncated sequence
        #expect(fails([0x22, 0xed, 0xa0, 0x80, 0x22]) != nil)  // UTF-8-encoded surrogate
        #expect(fails(Array(#""\ud800""#.utf8)) != nil)  // lone surrogate escape
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let e = fails(Array(repeating: UInt8(ascii: "["), count: 100_000))
        #expect(e != nil)
        // Just inside the limit still parses.
        let ok = String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000)
        #expect(fails(Array(ok.utf8)) == nil)
    }

    @Test func hugeNumbers() {
        #expect(fails(Array("123456789012345678901234567890".utf8)) != nil)
        #expect(fails(Array("1e400".utf8)) != nil)
        #expect(fails(Array("-1e400".utf8)) != nil)
    }

    @Test func rawNULByteInsideTheBuffer() {
        #expect(fails([0x7b, 0x00, 0x7d]) != nil)  // "{\0}"
        #expect(fails([0x22, 0x61, 0x00, 0x62, 0x22]) != nil)  // raw NUL inside a string
        // Right after a number or a literal, where jansson 2.14 alone stops reading and accepts.
        for text in [#"{"n":1"#, #"{"n":true"#, #"{"n":null"#, #"[1.5e3"#, "7", "false"] {
            let bytes = Array(text.utf8) + [0x00] + (text.hasPrefix("{") ? [0x7d] : text.hasPrefix("[") ? [0x5d] : [])
            let e = fails(bytes)
            #expect(e?.reason == "NUL byte in the text", "\(text)")
            #expect(e?.position == text.utf8.count + 1 && e?.line == 1 && e?.column == text.utf8.count + 1)
        }
        #expect(fails(Array("{\n\"a\":1".utf8) + [0x00, 0x7d])?.line == 2)
        // Columns count characters, as jansson's do: the NUL after "éé" is the 8th character of `["éé", ` + NUL.
        let accented = fails(Array(#"["éé", "#.utf8) + [0x00, 0x5d])
        #expect(accented?.column == 8 && accented?.position == Array(#"["éé", "#.utf8).count + 1)
        #expect(fails(Array(#"["éé", x]"#.utf8))?.column == 8)  // jansson's own count, for comparison
    }

    @Test func errorReportsPosition() {
        let e = fails(Array("{\n  \"a\": x}".utf8))
        #expect(e?.line == 2)
    }
}

@Suite struct JSONFieldAccess {
    let doc: JSONValue = [
        "name": "ann", "age": 42, "ratio": 0.5, "whole": 3.0, "ok": true, "nothing": nil, "tags": ["a", "b", 3],
        "cache": ["path": 7],
    ]

    @Test func typedAccessors() throws {
        let f = try JSONFields(doc)
        #expect(try f.string("name") == "ann")
        #expect(try f.int("age") == 42)
        #expect(try f.int("whole") == 3)
        #expect(try f.bool("ok"))
        #expect(try f.optionalString("nothing") == nil)  // null is absent
        #expect(try f.optionalString("absent") == nil)
    }

    @Test func errorsNameTheField() throws {
        let f = try JSONFields(doc)
        #expect(throws: JSONFieldError(path: "missing", problem: .missing)) { try f.string("missing") }
        #expect(throws: JSONFieldError(path: "age", problem: .wrongType(expected: "string", found: "integer"))) {
            try f.string("age")
        }
        #expect(throws: JSONFieldError(path: "ratio", problem: .wrongType(expected: "integer", found: "number"))) {
            try f.int("ratio")
        }
        #expect(throws: JSONFieldError(path: "tags[2]", problem: .wrongType(expected: "string", found: "integer"))) {
            try f.stringArray("tags")
        }
        let cache = try f.object("cache")
        #expect(throws: JSONFieldError(path: "cache.path", problem: .wrongType(expected: "string", found: "integer"))) {
            try cache.string("path")
        }
        #expect(throws: JSONFieldError(path: "age", problem: .invalid("must be between 1 and 10"))) {
            try f.optionalInt("age", in: 1...10)
        }
        #expect(throws: JSONFieldError(path: "", problem: .wrongType(expected: "object", found: "array"))) {
            try JSONFields(JSONValue.array([]))
        }
        #expect(
            JSONFieldError(path: "cache.path", problem: .missing).description == "cache.path: required field is missing"
        )
    }

    @Test func depthShapeTellsDeepJSONFromTextThatCannotBeJSON() {
        let deep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        #expect(JSONDepth.shape(Array(deep.utf8)) == .tooDeep)
        #expect(
            JSONDepth.shape(Array((String(repeating: "[", count: 64) + String(repeating: "]", count: 64)).utf8))
                == .fits
        )
        #expect(JSONDepth.shape(Array(#"{"a":"{{{{"}"#.utf8)) == .fits)  // brackets inside strings do not count
        #expect(JSONDepth.shape(Array(("{\"a\":\"x\ny\"," + deep + "}").utf8)) == .malformed)  // control character
        #expect(JSONDepth.shape(Array((deep + "]").utf8)) == .malformed)  // closed more than opened
        #expect(JSONDepth.shape(Array(String(repeating: "{", count: 100).utf8)) == .malformed)  // never closed
        #expect(JSONDepth.shape(Array(#"["abc"#.utf8)) == .malformed)  // the string never ends
        #expect(JSONDepth.exceeds(Array(String(repeating: "{", count: 100).utf8)))  // still refused before parsing
    }
}
