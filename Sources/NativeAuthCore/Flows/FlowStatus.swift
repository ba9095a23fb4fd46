/// A one-time code the server sent.
public struct CodeChallenge: Sendable, Equatable {
    /// The masked address the code went to ("o***a@co**o.com").
    public var sentTo: String
    public var channel: String
    public var codeLength: Int64
    /// Seconds before a resend is allowed, when the server says.
    public var resendInterval: Int64?
}

/// A strong-authentication method (MFA, or one to register).
public struct AuthMethod: Sendable, Equatable {
    public var id: String
    public var challengeType: String?
    public var channel: String?
    public var loginHint: String?
}

/// A sign-up attribute the server asks for.
public struct RequiredAttribute: Sendable, Equatable {
    public var name: String
    public var type: String
    public var required: Bool
    public var regex: String?
}

/// Where a flow stands after a call.
public enum FlowStatus: Sendable {
    case signedIn(Account, AccessToken)
    case codeRequired(CodeChallenge)
    case passwordRequired
    case attributesRequired([RequiredAttribute])
    case mfaRequired([AuthMethod])
    case registrationRequired([AuthMethod])
    case signUpCompleted
    case passwordResetCompleted
    /// A browser sign-in waits for its redirect (`"browser":"none"`).
    case browserPending(BrowserPending)
    /// A device-code sign-in waits for the user to enter the code.
    case deviceCodeRequired(DeviceCodeInfo)

    /// The status's name as result documents spell it (their `"status"`; also in traces): the one spelling.
    public var name: String {
        switch self {
        case .signedIn: return "signed_in"
        case .codeRequired: return "code_required"
        case .passwordRequired: return "password_required"
        case .attributesRequired: return "attributes_required"
        case .mfaRequired: return "mfa_required"
        case .registrationRequired: return "registration_required"
        case .signUpCompleted: return "sign_up_completed"
        case .passwordResetCompleted: return "password_reset_completed"
        case .browserPending: return "browser_pending"
        case .deviceCodeRequired: return "device_code_required"
        }
    }
}

/// A browser sign-in waiting for its redirect.
public struct BrowserPending: Sendable, Equatable {
    public var authorizationURL: String
    public var redirectURI: String
    /// Seconds until the sign-in expires.
    public var expiresIn: Int64
}

/// What a device-code sign-in shows the user.
public struct DeviceCodeInfo: Sendable, Equatable {
    public var userCode: String
    public var verificationURI: String
    public var verificationURIComplete: String?
    /// Seconds until the code expires.
    public var expiresIn: Int64
    /// Seconds between polls.
    public var interval: Int64
    /// The server's instructions, or the library's when it sent none.
    public var message: String
}
