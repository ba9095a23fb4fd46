import Foundation
import NativeAuthCrypto
import NativeAuthJSON
import Synchronization

/// Identifiers and secrets the emulator hands out.
enum Ids {
    /// A random opaque token (base64url of `bytes` random bytes) with a readable prefix.
    static func token(_ prefix: String, bytes: Int = 24) -> String {
        let b = (try? SecureRandom.bytes(bytes)) ?? Array(UUID().uuidString.utf8)
        return prefix + Base64.urlEncode(b)
    }

    static func uuid() -> String { (try? SecureRandom.uuid()) ?? UUID().uuidString.lowercased() }

    /// A stable GUID-shaped id derived from `seed` (for users created without an object id).
    static func deterministicGUID(_ seed: String) -> String {
        let h = SHA256.hash(seed).prefix(16).map { b -> String in
            let s = String(b, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined()
        let c = Array(h)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-"
            + String(c[20..<32])
    }

    /// A numeric one-time code of `length` digits.
    static func otp(length: Int) -> String {
        let bytes = (try? SecureRandom.bytes(length)) ?? Array(repeating: 7, count: length)
        return String(bytes.map { Character(String($0 % 10)) })
    }

    /// A device-flow user code: 9 characters from an unambiguous alphabet, as Entra shows them.
    static func userCode() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let bytes = (try? SecureRandom.bytes(9)) ?? Array(repeating: 1, count: 9)
        return String(bytes.map { alphabet[Int($0) % alphabet.count] })
    }
}

/// Masks an address the way Entra's `challenge_target_label` does: "c***r@co**o**o.com"-like.
func maskEmail(_ email: String) -> String {
    let parts = email.split(separator: "@", maxSplits: 1)
    guard parts.count == 2 else { return "***" }
    let local = Array(parts[0])
    let maskedLocal = local.count <= 2 ? String(local.prefix(1)) + "***" : "\(local[0])***\(local[local.count - 1])"
    let labels = parts[1].split(separator: ".")
    let masked = labels.enumerated().map { i, label -> String in
        if i == labels.count - 1 { return String(label) }
        let l = Array(label)
        return l.count <= 2 ? String(l.prefix(1)) + "**" : String(l.prefix(2)) + "**" + String(l[l.count - 1])
    }
    return maskedLocal + "@" + masked.joined(separator: ".")
}

/// A simple email syntax check (what the service's 90100 "username parameter is empty or not valid" guards).
func isValidEmail(_ s: String) -> Bool {
    let parts = s.split(separator: "@", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64, parts[1].count <= 255,
        parts[1].contains("."), !parts[1].hasPrefix("."), !parts[1].hasSuffix("."),
        !s.contains(where: { $0.isWhitespace || $0 == "<" || $0 == ">" || $0 == "\"" || $0 == "," })
    else { return false }
    return true
}

/// The emulator's clock: real time plus an offset tests can advance (`POST /_emulator/clock`).
final class EmulatorClock: Sendable {
    private let offset = Mutex<Double>(0)
    func now() -> Double { Date().timeIntervalSince1970 + offset.withLock { $0 } }
    func advance(_ seconds: Double) { offset.withLock { $0 += seconds } }
}

/// `application/x-www-form-urlencoded` decoding (the emulator's own; it shares no protocol code with the library).
enum Form {
    static func decode(_ body: String) -> [String: String]? {
        var out: [String: String] = [:]
        for pair in body.split(separator: "&", omittingEmptySubsequences: true) {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let k = unescape(kv[0]), let v = kv.count > 1 ? unescape(kv[1]) : "" else { return nil }
            out[k] = v
        }
        return out
    }

    static func unescape(_ s: Substring) -> String? {
        let plus = s.replacingOccurrences(of: "+", with: " ")
        return plus.removingPercentEncoding
    }

    static func encode(_ s: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    static func query(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
    }
}

func htmlEscape(_ s: String) -> String {
    var out = ""
    for c in s {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        case "'": out += "&#39;"
        default: out.append(c)
        }
    }
    return out
}

/// "2026-11-22 10:15:00Z", the service's timestamp format.
func serviceTimestamp(_ t: Double) -> String {
    let f = DateFormatter()
    f.locale = Locale(identifier: "en_US_POSIX")
    f.timeZone = TimeZone(identifier: "UTC")
    f.dateFormat = "yyyy-MM-dd HH:mm:ss'Z'"
    return f.string(from: Date(timeIntervalSince1970: t))
}

/// Constant-time string comparison for secrets (NativeAuthCrypto's, the library's own).
func constantTimeStringEquals(_ a: String, _ b: String) -> Bool { constantTimeEquals(a, b) }
