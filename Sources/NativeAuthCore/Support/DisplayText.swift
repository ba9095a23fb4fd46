/// Text from outside (a server's `error`, `suberror` or attribute names, a redirect's `error`, an ID token's claims, a
/// cache file) made safe to show: it may end up on a terminal through a message or a log line, where an escape
/// sequence could erase lines, fake "signed in", set the window title or write the clipboard (OSC 52).
public enum DisplayText {
    /// The longest piece of outside text a message or a log line repeats (in Unicode scalars).
    public static let limit = 200

    /// Whether `scalar` is removed: C0 controls (newlines and tabs too), DEL, C1 controls, and the bidirectional
    /// formatting characters that reorder what a terminal shows (U+061C, U+200E, U+200F, U+202A–U+202E,
    /// U+2066–U+2069), and the line and paragraph separators.
    @inline(__always)
    static func isUnsafe(_ v: UInt32) -> Bool {
        switch v {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// `text` without the characters `isUnsafe` names, cut to `limit` scalars (with "…" when cut).
    public static func bounded(_ text: some StringProtocol, limit: Int = DisplayText.limit) -> String {
        clean(text, limit: limit)
    }

    /// `text` without the characters `isUnsafe` names, and at most `limit` scalars long (nil: no bound).
    public static func clean(_ text: some StringProtocol, limit: Int? = nil) -> String {
        // The common case: printable ASCII within the bound, returned as it is.
        var plain = true
        var n = 0
        for b in text.utf8 {
            n += 1
            if b < 0x20 || b >= 0x7F {
                plain = false
                break
            }
        }
        if plain, limit.map({ n <= $0 }) ?? true { return String(text) }
        var out = String.UnicodeScalarView()
        var kept = 0
        for scalar in text.unicodeScalars where !isUnsafe(scalar.value) {
            if let limit, kept == limit {
                out.append("…")
                break
            }
            out.append(scalar)
            kept += 1
        }
        return String(out)
    }
}
