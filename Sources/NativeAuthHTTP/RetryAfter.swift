internal import Glibc

/// The `Retry-After` header (RFC 9110 §10.2.3): a number of seconds, or an HTTP-date.
public enum RetryAfter {
    /// Seconds to wait from `now` (seconds since the epoch), or nil when the value is neither form. Never negative;
    /// absurd values are clamped to a day, so callers can compare them with their own limits without overflow.
    public static func seconds(_ value: String, now: Double) -> Double? {
        let text = value.trimmingSpaces
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Digits only; a long run of them is a long wait, not an overflow.
            guard text.utf8.count <= 6, let n = Int(text) else { return maxWait }
            return min(Double(n), maxWait)
        }
        guard let date = httpDate(text) else { return nil }
        return min(max(0, date - now), maxWait)
    }

    static let maxWait = 86_400.0

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), and the obsolete RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT")
    /// and asctime ("Sun Nov  6 08:49:37 1994") forms, as seconds since the epoch.
    static func httpDate(_ text: String) -> Double? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "-" || $0 == "," }).map { $0.lowercased() }
        var day: Int?
        var month: Int?
        var year: Int?
        var clock: [Int]?
        for p in parts {
            if p.contains(":") {
                let c = p.split(separator: ":").compactMap { Int($0) }
                guard c.count == 3 else { return nil }
                clock = c
            } else if let m = months.firstIndex(of: String(p.prefix(3))), p.count <= 9, !p.allSatisfy(\.isNumber) {
                if p.count == 3 || ["june", "july"].contains(p) || p.hasPrefix(months[m]) { month = m }
            } else if let n = Int(p) {
                if p.count == 4 || n > 31 { year = n } else if day == nil { day = n } else { year = n }
            }
        }
        guard var y = year, let mo = month, let d = day, let c = clock, (1...31).contains(d), (0...23).contains(c[0]),
            (0...59).contains(c[1]), (0...60).contains(c[2])
        else { return nil }
        if y < 100 { y += y < 70 ? 2000 : 1900 }  // RFC 850's two-digit years
        guard (1970...9999).contains(y) else { return nil }
        var tm = Glibc.tm()
        tm.tm_year = Int32(y - 1900)
        tm.tm_mon = Int32(mo)
        tm.tm_mday = Int32(d)
        tm.tm_hour = Int32(c[0])
        tm.tm_min = Int32(c[1])
        tm.tm_sec = Int32(c[2])
        let t = timegm(&tm)
        return t < 0 ? nil : Double(t)
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    public var trimmingSpaces: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
