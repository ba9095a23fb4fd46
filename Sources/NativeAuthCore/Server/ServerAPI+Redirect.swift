// The web fallback (`{"challenge_type":"redirect"}`) as a `browser_required` error whose message says what would
// have let the sign-in continue in the app, when the server's answer tells. Kept apart from ServerAPI.swift, which
// is the place of the other wire names.

/// Where in a native-auth flow a redirect answer came.
enum RedirectSite: Sendable {
    /// A native-auth step where the client's challenge types decide: a start, or the first factor's `/challenge`
    /// (sign-in, sign-up, reset), or the sign-up's `/continue`.
    case nativeStep
    /// `/oauth2/v2.0/token` answering a first-factor grant (password, email code, or the continuation token of a
    /// sign-up, reset or registration): the credentials were right and something after them needs the browser.
    case firstFactorGrant
    /// Anywhere else (MFA and registration steps, a reset's later steps, a refresh, the standard grants).
    case other
}

extension ServerAPI {
    /// The `browser_required` error for a redirect answer at `site`, its `redirect_reason` kept as the server sent it.
    func browserRequired(_ reason: String?, at site: RedirectSite) -> NativeAuthError {
        var error = NativeAuthError.browserRequired(reason)
        if let advice = Self.redirectAdvice(reason, at: site, configuration) {
            error.message = "Native authentication cannot complete this: " + advice
        }
        return error
    }

    /// The capabilities line every hint gives: both, whatever the client sends now — MFA for a user who has no
    /// strong-auth method yet needs registration first.
    private static let capabilitiesLine = #""capabilities":["mfa_required","registration_required"]"#

    /// What the answer and the configuration say about why, or nil when they say nothing useful.
    static func redirectAdvice(_ reason: String?, at site: RedirectSite, _ c: ClientConfiguration) -> String? {
        let named = Self.capabilitiesNamed(in: reason)
        let fallback = "do it in the app, or sign in with the browser (the interactive sign-in)."
        // The service's redirect_reason names the capability it missed ("Client is missing mfa_required
        // capability." — the wording the protocol notes quote; the text itself is UNCONFIRMED, so only the
        // capability names are looked for in it).
        if named.contains(.mfaRequired) {
            return "the tenant asks for multi-factor authentication, which needs the \"mfa_required\" capability. "
                + "Send \(capabilitiesLine) in the configuration to " + fallback
        }
        if named.contains(.registrationRequired) {
            return "the tenant asks this user to register a strong authentication method (for multi-factor "
                + "authentication) first, which needs the \"registration_required\" capability. Send "
                + "\(capabilitiesLine) in the configuration to " + fallback
        }
        let missing = Capability.allCases.filter { !c.capabilities.contains($0) }
        if site == .firstFactorGrant, !missing.isEmpty {
            // The documented redirect answer has no reason at all. After a correct first factor, a client without
            // the capabilities is most likely missing one of them (the service redirects when MFA or registration
            // is needed and not advertised).
            return "the server accepted the first factor and gave no reason; most often the tenant asks for "
                + "multi-factor authentication or strong-auth registration, which this client does not advertise. "
                + "Send \(capabilitiesLine) in the configuration to " + fallback
        }
        if site == .nativeStep, c.challengeTypes.count < ChallengeType.allCases.count {
            let types = ChallengeType.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
            let offered = c.challengeTypes.map { "\"\($0.rawValue)\"" }.joined(separator: ",")
            return "the user flow may need a sign-in method this client does not offer (\"challenge_types\":["
                + offered + "]). Send \"challenge_types\":[" + types + "] in the configuration to continue in the "
                + "app, or sign in with the browser (the interactive sign-in)."
        }
        return nil
    }

    /// The capability names a `redirect_reason` mentions (any case).
    private static func capabilitiesNamed(in reason: String?) -> [Capability] {
        guard let text = reason?.lowercased() else { return [] }
        return Capability.allCases.filter { text.contains($0.rawValue) }
    }
}
