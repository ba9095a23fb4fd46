internal import CCurl
internal import NativeAuthHTTP

/// libcurl's header list for a request, built one line at a time in one reused, NUL-terminated byte buffer (libcurl
/// copies each line): the header-injection guard of every request the library sends.
struct CurlHeaderLines {
    private(set) var list: UnsafeMutablePointer<curl_slist>? = nil
    private var line: [UInt8] = []

    /// Adds `name: value`. The name must be an HTTP token (RFC 9110 §5.6.2 tchar: what na_call_api, `headers` and
    /// `request_headers` already demand), the value free of every control character but HTAB (RFC 9110 §5.5,
    /// `HeaderName.isValueByte`, what na_call_api and `request_headers` demand): this is also the check of the values
    /// the library builds from what a server sent (an access token in `Authorization`), which a hostile server could
    /// fill with ESC, DEL or VT. An empty value is sent as an empty header: libcurl reads `Name:` as "remove this
    /// header", so it gets libcurl's `Name;` form (a token holds no `;`). So is a value of blanks only, which libcurl
    /// drops as well (and RFC 9110 §5.5 strips: it is an empty value).
    mutating func add(_ name: String, _ value: String) throws(HTTPError) {
        line.removeAll(keepingCapacity: true)
        line.append(contentsOf: name.utf8)
        let nameEnd = line.count
        if value.utf8.allSatisfy(Self.isCurlBlank) {
            line.append(UInt8(ascii: ";"))
        } else {
            line.append(UInt8(ascii: ":"))
            line.append(UInt8(ascii: " "))
            line.append(contentsOf: value.utf8)
        }
        guard nameEnd > 0, line[..<nameEnd].allSatisfy(HeaderName.isTokenByte) else {
            // Not quoted back: a name that is not a token may be a whole pasted line, with a secret in it.
            throw HTTPError(.invalidURL, "a header name is not an HTTP token")
        }
        guard line[nameEnd...].allSatisfy(HeaderName.isValueByte) else {
            // Not quoted back: the value may be a secret (a token).
            throw HTTPError(.invalidURL, "header \(name.prefix(64)) has control characters")
        }
        try append()
    }

    /// Removes a header libcurl would add itself (`Name:`), such as `Expect`.
    mutating func remove(_ name: StaticString) throws(HTTPError) {
        line.removeAll(keepingCapacity: true)
        name.withUTF8Buffer { line.append(contentsOf: $0) }
        line.append(UInt8(ascii: ":"))
        try append()
    }

    /// Frees the list (after the transfer, or when a header was refused).
    mutating func free() {
        ccurl_slist_free_all(list)
        list = nil
    }

    private mutating func append() throws(HTTPError) {
        line.append(0)
        let current = list
        let appended = line.withUnsafeBufferPointer { b in
            b.withMemoryRebound(to: CChar.self) { ccurl_slist_append(current, $0.baseAddress) }
        }
        guard let appended else { throw HTTPError(.internal, "out of memory") }
        list = appended
    }

    /// What libcurl skips after a header's colon (its ISSPACE without CR and LF) that a value may hold: SP and HTAB
    /// (VT and FF, which libcurl skips too, are refused as control characters).
    private static func isCurlBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }
}
