// Target "wwwauth": WWW-Authenticate headers, as a host that calls APIs itself hands them to na_parse_www_authenticate.
// Input: any bytes.
//  - through the C ABI (up to the first NUL, as C passes them): an answer every export must give (checkAnswer); more
//    than 64 KiB or invalid UTF-8 is invalid_argument; otherwise the answer is NativeAuthHTTP's parse, encoded;
//  - the parser never traps; its errors name a byte of the header and never quote it; a header it parses, written
//    back (WWWAuthenticateWriter: never longer than the header), parses to the same challenges and claims — a fixed
//    point — and is written back to the same text;
//  - every challenge's claims, and the header's, are JSON objects the library takes back as a claims request;
//  - the DPoP reading of the same bytes (DPoPAnswerChecks.swift).
import NativeAuthCore
import NativeAuthHTTP
import NativeAuthJSON

@testable import NativeAuthCABI

private let parseExport: Export = { _, header, out in na_parse_www_authenticate(header, out) }

func fuzzWWWAuthenticate(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    fuzzDPoPAnswer(bytes)
    let cString = Array(bytes.prefix { $0 != 0 })
    let answer = call(parseExport, nil, cString)
    let text = String(validating: cString, as: UTF8.self)
    if cString.count > WWWAuthenticate.maxBytes || text == nil {
        guard answer.errorCode == "invalid_argument" else {
            finding("a header over 64 KiB or not UTF-8 was not refused", answer.text)
        }
    }
    if let text, cString.count <= WWWAuthenticate.maxBytes {
        let parsed = try? WWWAuthenticate.parse(text, isJSONObject: Decode.isClaimsObject)
        let expected = parsed.map(Encode.wwwAuthenticate)
        if let expected, answer.doc != expected {
            finding("na_parse_www_authenticate answers other than the parser", answer.text)
        }
        if expected == nil, answer.errorCode != "invalid_argument" {
            finding("a header the parser refuses was not invalid_argument", answer.text)
        }
    }

    // The parser itself, on the input as Swift text (invalid UTF-8 replaced, NULs kept).
    let header = String(decoding: bytes, as: UTF8.self)
    let parsed: WWWAuthenticate
    do { parsed = try WWWAuthenticate.parse(header, isJSONObject: Decode.isClaimsObject) } catch {
        // Its message is one of the parser's fixed reasons and a byte: nothing of the header.
        guard parseErrorReasons.contains(error.reason), error.position >= 0, error.position <= header.utf8.count,
            error.description == "\(error.reason) at byte \(error.position)"
        else { finding("a parse error that is not a fixed reason at a byte of the header", error.description) }
        return
    }
    for claims in parsed.challenges.compactMap(\.claims) + (parsed.claims.map { [$0] } ?? []) {
        guard Decode.isClaimsObject(claims), takenBack(claims)?.json == claims else {
            finding("claims the library would not take back as a claims request", claims)
        }
    }
    let written = WWWAuthenticateWriter.header(parsed)
    guard written.utf8.count <= header.utf8.count else {
        finding("a header written back is longer than the header", written)
    }
    let again: WWWAuthenticate
    do { again = try WWWAuthenticate.parse(written, isJSONObject: Decode.isClaimsObject) } catch {
        finding("a parsed header written back does not parse: \(error)", written)
    }
    guard again == parsed else { finding("a parsed header written back parses differently", written) }
    guard WWWAuthenticateWriter.header(again) == written else {
        finding("a parsed header written back is not written back the same", written)
    }
}

/// Every reason `WWWAuthenticate.ParseError` gives (fixed text: an error never quotes the header).
private let parseErrorReasons: Set<String> = [
    "the header is larger than 65536 bytes", "a parameter without a name", "expected an auth-scheme",
    "a parameter before any auth-scheme", "a parameter after a token68", "expected a space after the auth-scheme",
    "expected a parameter", "expected '=' after a parameter's name", "expected a token or a quoted string",
    "expected a comma", "an unterminated quoted string", "a control character escaped",
    "a control character in a quoted string",
]

/// `claims` as a request's "claims" string, read the way every request's is.
private func takenBack(_ claims: String) -> ClaimsRequest? {
    let request = (JSONValue.object(["claims": .string(claims)]).serializedBytes() ?? []) + [0]
    return request.withUnsafeBufferPointer { p in
        p.withMemoryRebound(to: CChar.self) { c in
            try? Decode.claims(decodeDocument(c.baseAddress, name: "request_json", nullIsEmpty: false))
        }
    }
}

/// Writes challenges as the shortest header the parser reads back to them: `scheme`, then one space and the token68
/// or the parameters, `name=value` joined by commas (names sorted; a value that is a token as it is, any other
/// quoted, `"` and `\` escaped); challenges joined by commas.
enum WWWAuthenticateWriter {
    static func header(_ w: WWWAuthenticate) -> String {
        w.challenges.map(challenge).joined(separator: ",")
    }

    private static func challenge(_ c: WWWAuthenticate.Challenge) -> String {
        if let t = c.token68 { return c.scheme + " " + t }
        guard !c.params.isEmpty else { return c.scheme }
        return c.scheme + " "
            + c.params.sorted { $0.key < $1.key }.map { $0.key + "=" + value($0.value) }
            .joined(separator: ",")
    }

    private static let tchar = Set(Array("!#$%&'*+-.^_`|~".utf8))

    private static func value(_ v: String) -> String {
        let isToken =
            !v.isEmpty
            && v.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || tchar.contains(c)
            }
        if isToken { return v }
        var out = "\""
        for ch in v.unicodeScalars {
            if ch == "\"" || ch == "\\" { out += "\\" }
            out.unicodeScalars.append(ch)
        }
        return out + "\""
    }
}
