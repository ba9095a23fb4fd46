import NativeAuthJSON

/// A registered strong-authentication (MFA) method of a user: one-time codes go to an email address or, by SMS, to
/// a phone number. The service lists them at `/oauth2/v2.0/introspect` and sends a code to one at `/challenge`.
struct StrongMethod: Equatable {
    enum Channel: String {
        case email, sms
    }

    let channel: Channel
    /// The address or phone number codes go to (the outbox's `to`).
    let target: String

    /// A stable opaque id (a GUID, as the service's), derived from the method's address.
    var id: String {
        switch channel {
        case .email: return Ids.deterministicGUID("mfa:" + target)
        case .sms: return Ids.deterministicGUID("mfa-sms:" + target)
        }
    }

    /// The masked address: `challenge_target_label` of `/challenge` and `login_hint` of `/introspect`.
    var label: String { channel == .email ? maskEmail(target) : maskPhone(target) }

    /// The method as `/oauth2/v2.0/introspect` lists it.
    var json: JSONValue {
        [
            "id": .string(id), "challenge_type": "oob", "challenge_channel": .string(channel.rawValue),
            "login_hint": .string(label),
        ]
    }
}

extension UserRecord {
    /// The user's registered strong methods: the email one first, then SMS.
    var strongMethods: [StrongMethod] {
        var methods: [StrongMethod] = []
        if let e = mfaEmail { methods.append(StrongMethod(channel: .email, target: e.lowercased())) }
        if let p = mfaPhone { methods.append(StrongMethod(channel: .sms, target: p)) }
        return methods
    }

    /// The method `/oauth2/v2.0/challenge` uses when the request names none: the only one, or the default the user
    /// set (`mfa_default`); nil when the user has several and no default (the service answers
    /// `introspect_required`).
    var defaultStrongMethod: StrongMethod? {
        let methods = strongMethods
        if methods.count == 1 { return methods[0] }
        guard let d = mfaDefault else { return nil }
        return methods.first { $0.channel.rawValue == d }
    }
}

/// Masks a phone number the way the service's SMS labels look ("+3538331***"): the country code and first digits
/// shown, the rest starred.
func maskPhone(_ phone: String) -> String {
    let digits = Array(phone.drop(while: { $0 == "+" }))
    let shown = max(1, min(digits.count - 4, (digits.count + 1) / 2))
    return "+" + String(digits.prefix(shown)) + String(repeating: "*", count: max(0, digits.count - shown))
}

/// An E.164 phone number: `+` and 8 to 15 digits (what the service's AADSTS901001 "The verification contact is
/// invalid" guards for the SMS channel).
func isValidPhone(_ s: String) -> Bool {
    guard s.hasPrefix("+") else { return false }
    let digits = s.dropFirst()
    return (8...15).contains(digits.count) && digits.allSatisfy { $0.isASCII && $0.isNumber } && !digits.hasPrefix("0")
}
