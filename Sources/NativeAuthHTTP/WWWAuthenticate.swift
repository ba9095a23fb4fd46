/// The `WWW-Authenticate` header (RFC 9110 §11.6.1): its challenges, and the claims challenge an API protected by
/// Microsoft Entra sends when a token no longer satisfies its policies (Conditional Access, Continuous Access
/// Evaluation):
///
///     Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize",
///         error="insufficient_claims", claims="eyJhY2Nlc3NfdG9rZW4iOnsibmJmIjp7ImVzc2VudGlhbCI6dHJ1ZX19fQ=="
///
/// Syntax (RFC 9110 §11.6.1, §5.6):
///
///     WWW-Authenticate = #challenge
///     challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
///     auth-param = token BWS "=" BWS ( token / quoted-string )
///
/// A comma separates both the parameters of a challenge and the challenges: after a comma, a token followed by `=`
/// is another parameter, and any other token starts a new challenge. Empty list elements (`, ,`) are allowed, as the
/// RFC asks of recipients. Lenient where nothing is ambiguous: tabs count as spaces, and a parameter after
/// `Bearer,` belongs to Bearer. Everything else that is not the grammar — an unterminated quoted string, a control
/// character, a byte outside ASCII outside a quoted string, `=` without a name, a parameter after a token68 — makes
/// the whole header unparseable: a `ParseError` that names the byte, never the text (a header may carry anything).
///
/// A pure value-level parser: no I/O, no recursion, linear in the input, which is at most `maxBytes`.
public struct WWWAuthenticate: Sendable, Equatable {
    /// Largest header accepted, in bytes of UTF-8.
    public static let maxBytes = 65_536

    /// The challenges, in the header's order.
    public let challenges: [Challenge]

    /// The claims of the first `Bearer` (or `DPoP`, RFC 9449 §7.1: the scheme of DPoP-bound tokens) challenge whose
    /// `error` is `insufficient_claims` (compared in any case, as MSAL.NET's `GetClaimChallengeFromResponseHeaders`
    /// does) and that has `claims` (see `Challenge.claims`).
    public var claims: String? {
        challenges.first { c in
            (c.isScheme("Bearer") || c.isScheme("DPoP"))
                && c.params["error"].map { lowercased($0) == "insufficient_claims" } == true && c.claims != nil
        }?.claims
    }

    public init(challenges: [Challenge]) { self.challenges = challenges }

    /// One challenge.
    public struct Challenge: Sendable, Equatable {
        /// The auth-scheme as sent ("Bearer", "bearer"); schemes are case-insensitive: compare with `isScheme`.
        public let scheme: String
        /// The token68 form of the challenge (`Negotiate abc==`), as sent; nil for the parameter form.
        public let token68: String?
        /// The auth-params: names in lower case, values without their quotes and with quoted-pairs unescaped. A name
        /// sent twice in one challenge (RFC 9110 forbids it) keeps its first value; later ones are ignored.
        public let params: [String: String]
        /// The `claims` parameter decoded to JSON text (`decodeClaims`), when it is a JSON object; nil otherwise
        /// (the raw value is still in `params`).
        public let claims: String?

        public init(scheme: String, token68: String? = nil, params: [String: String] = [:], claims: String? = nil) {
            self.scheme = scheme
            self.token68 = token68
            self.params = params
            self.claims = claims
        }

        /// Whether the scheme is `name`, compared in any case (ASCII).
        public func isScheme(_ name: String) -> Bool { lowercased(scheme) == lowercased(name) }
    }

    /// Why a header could not be parsed: what was expected, and the 0-based byte where it was not found. Never the
    /// header's text.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let reason: String
        public let position: Int

        public init(_ reason: String, at position: Int) {
            self.reason = reason
            self.position = position
        }

        public var description: String { "\(reason) at byte \(position)" }
    }

    /// Parses a header value (without the field name). `isJSONObject` says whether a text is a JSON object the
    /// caller accepts (this module has no JSON parser): it decides which `claims` are kept.
    public static func parse(
        _ header: String,
        isJSONObject: (String) -> Bool
    ) throws(ParseError) -> WWWAuthenticate {
        guard header.utf8.count <= maxBytes else {
            throw ParseError("the header is larger than \(maxBytes) bytes", at: maxBytes)
        }
        var parser = Parser(Array(header.utf8))
        let raw = try parser.challenges()
        return WWWAuthenticate(
            challenges: raw.map { r in
                Challenge(
                    scheme: r.scheme,
                    token68: r.token68,
                    params: r.params,
                    claims: r.params["claims"].flatMap { decodeClaims($0, isJSONObject: isJSONObject) }
                )
            }
        )
    }

    /// A `claims` parameter as JSON text, or nil. The value is, in the forms Microsoft's libraries accept:
    /// - base64 of the JSON text's UTF-8, standard or URL alphabet, padded or not. MSAL.NET
    ///   (`WwwAuthenticateParameters.GetJsonFragment`) decodes standard padded base64 (`Convert.FromBase64String`,
    ///   length a multiple of 4, no whitespace); azure-mgmt-core for Python (`_parse_claims_challenge`) pads the value
    ///   with `=` and decodes it with `urlsafe_b64decode`, which takes either alphabet, then decodes UTF-8. Both forms
    ///   are accepted here; whitespace, other characters, misplaced padding or an impossible length are not;
    /// - the JSON text itself (a value starting with `{`): MSAL.NET returns a value it cannot decode as it is.
    /// Unlike both, the text must also be a JSON object (`isJSONObject`): whatever is returned can be sent as a
    /// claims request as it is.
    public static func decodeClaims(_ value: String, isJSONObject: (String) -> Bool) -> String? {
        let bytes = Array(value.utf8)
        if let first = bytes.first(where: { $0 != 0x20 && $0 != 0x09 }), first == UInt8(ascii: "{") {
            return isJSONObject(value) ? value : nil
        }
        guard let decoded = base64(bytes), let text = String(validating: decoded, as: UTF8.self),
            text.utf8.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }) == UInt8(ascii: "{"),
            isJSONObject(text)
        else { return nil }
        return text
    }

    /// Base64 in either alphabet (RFC 4648 §4, §5), padding optional but, when present, complete; nil for anything
    /// else (whitespace included).
    static func base64(_ text: [UInt8]) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.count)
        var padding = 0
        for c in text {
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0 else { return nil }  // data after padding
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"), UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "/"), UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        guard !values.isEmpty, padding <= 2, values.count % 4 != 1,
            padding == 0 || (values.count + padding) % 4 == 0
        else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count / 4 * 3 + 2)
        var bits: UInt32 = 0
        var count = 0
        for v in values {
            bits = bits << 6 | UInt32(v)
            count += 6
            if count >= 8 {
                count -= 8
                out.append(UInt8(truncatingIfNeeded: bits >> UInt32(count)))
            }
        }
        return out
    }
}

/// ASCII lower case (schemes, parameter names and `insufficient_claims` are ASCII tokens; nothing else changes).
private func lowercased(_ s: String) -> String {
    String(decoding: s.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
}

/// A challenge as read, before its claims are decoded.
private struct RawChallenge {
    let scheme: String
    var token68: String? = nil
    var params: [String: String] = [:]
}

/// The grammar over the header's bytes. Every loop advances `i`; nothing recurses.
private struct Parser {
    let b: [UInt8]
    var i = 0

    init(_ bytes: [UInt8]) { b = bytes }

    private var atEnd: Bool { i >= b.count }
    private var current: UInt8? { i < b.count ? b[i] : nil }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }

    /// tchar (RFC 9110 §5.6.2).
    private static func isTchar(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return tcharSymbols.contains(c)
        }
    }

    private static let tcharSymbols: [UInt8] = Array("!#$%&'*+-.^_`|~".utf8)
    private static let token68Symbols: [UInt8] = Array("-._~+/".utf8)

    /// The characters of token68 before its `=` padding (RFC 9110 §11.2).
    private static func isToken68(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default: return token68Symbols.contains(c)
        }
    }

    private mutating func skipSpaces() {
        while let c = current, Parser.isSpace(c) { i += 1 }
    }

    private func text(_ from: Int, _ to: Int) -> String { String(decoding: b[from..<to], as: UTF8.self) }

    /// A token at `i` (possibly empty).
    private mutating func token() -> String {
        let start = i
        while let c = current, Parser.isTchar(c) { i += 1 }
        return text(start, i)
    }

    /// The whole header: `#challenge`.
    mutating func challenges() throws(WWWAuthenticate.ParseError) -> [RawChallenge] {
        var out: [RawChallenge] = []
        while true {
            skipSpaces()
            guard let c = current else { return out }
            if c == UInt8(ascii: ",") {  // an empty list element
                i += 1
                continue
            }
            let start = i
            let name = token()
            guard !name.isEmpty else {
                throw .init(
                    c == UInt8(ascii: "=") ? "a parameter without a name" : "expected an auth-scheme",
                    at: start
                )
            }
            var j = i
            while j < b.count, Parser.isSpace(b[j]) { j += 1 }
            if j < b.count, b[j] == UInt8(ascii: "=") {
                // Another parameter of the challenge before the comma.
                guard let last = out.indices.last else { throw .init("a parameter before any auth-scheme", at: start) }
                guard out[last].token68 == nil else { throw .init("a parameter after a token68", at: start) }
                i = start
                try param(into: &out[last])
                try endOfElement()
                continue
            }
            out.append(try challenge(scheme: name))
        }
    }

    /// After an auth-scheme: nothing, a token68, or the first auth-param (the rest come after commas).
    private mutating func challenge(scheme: String) throws(WWWAuthenticate.ParseError) -> RawChallenge {
        var c = RawChallenge(scheme: scheme)
        guard let next = current, next != UInt8(ascii: ",") else { return c }
        guard Parser.isSpace(next) else { throw .init("expected a space after the auth-scheme", at: i) }
        skipSpaces()
        guard let first = current, first != UInt8(ascii: ",") else { return c }
        // token68, when what follows its run of characters and padding is the end of the element.
        let start = i
        var j = i
        while j < b.count, Parser.isToken68(b[j]) { j += 1 }
        if j > start {
            while j < b.count, b[j] == UInt8(ascii: "=") { j += 1 }
            let end = j
            while j < b.count, Parser.isSpace(b[j]) { j += 1 }
            if j == b.count || b[j] == UInt8(ascii: ",") {
                c.token68 = text(start, end)
                i = j
                return c
            }
        }
        try param(into: &c)
        try endOfElement()
        return c
    }

    /// `token BWS "=" BWS ( token / quoted-string )` at `i`; a name already present keeps its first value.
    private mutating func param(into c: inout RawChallenge) throws(WWWAuthenticate.ParseError) {
        let name = token()
        guard !name.isEmpty else {
            throw .init(current == UInt8(ascii: "=") ? "a parameter without a name" : "expected a parameter", at: i)
        }
        skipSpaces()
        guard current == UInt8(ascii: "=") else { throw .init("expected '=' after a parameter's name", at: i) }
        i += 1
        skipSpaces()
        let value: String
        if current == UInt8(ascii: "\"") {
            value = try quotedString()
        } else {
            value = token()
            guard !value.isEmpty else { throw .init("expected a token or a quoted string", at: i) }
        }
        let key = lowercased(name)
        if c.params[key] == nil { c.params[key] = value }
    }

    /// After a parameter or a token68: spaces, then the end or a comma.
    private mutating func endOfElement() throws(WWWAuthenticate.ParseError) {
        skipSpaces()
        guard let c = current else { return }
        guard c == UInt8(ascii: ",") else { throw .init("expected a comma", at: i) }
    }

    /// A quoted-string at `i` (its opening quote), unescaped: qdtext is HTAB, SP, VCHAR but `"` and `\`, and
    /// obs-text (bytes 0x80-0xFF); a quoted-pair is `\` and HTAB, SP, VCHAR or obs-text.
    private mutating func quotedString() throws(WWWAuthenticate.ParseError) -> String {
        let open = i
        i += 1
        var out: [UInt8] = []
        while let c = current {
            i += 1
            switch c {
            case UInt8(ascii: "\""):
                // Removing ASCII backslashes from UTF-8 leaves UTF-8.
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let e = current, e == 0x09 || e >= 0x20 && e != 0x7F else {
                    throw .init(atEnd ? "an unterminated quoted string" : "a control character escaped", at: i)
                }
                out.append(e)
                i += 1
            case 0x09, 0x20...0x7E, 0x80...0xFF:
                out.append(c)
            default:
                throw .init("a control character in a quoted string", at: i - 1)
            }
        }
        throw .init("an unterminated quoted string", at: open)
    }
}
