import NativeAuthJSON

/// An application registration in the emulated tenant.
public struct ClientApp: Sendable, Equatable {
    public var clientID: String
    public var name: String
    /// Public client (no secret). Native auth refuses confidential clients.
    public var isPublic: Bool
    /// "Enable native authentication" on the registration.
    public var nativeAuthEnabled: Bool
    /// Exact redirect URIs besides loopback ones (loopback `http://127.0.0.1|localhost[:port][/path]` always allowed,
    /// as RFC 8252 §7.3 asks).
    public var redirectURIs: [String]
    /// Scopes this client may get tokens for (consent). nil = every scope of every API.
    public var consentedScopes: [String]?
}

/// A user account.
public struct UserRecord: Sendable, Equatable {
    public var email: String
    /// nil for email-OTP-only users.
    public var password: String?
    public var displayName: String
    public var givenName: String?
    public var surname: String?
    public var attributes: [String: String]
    public var objectID: String
    /// A registered strong-auth (MFA) method: an email address codes are sent to. nil = none registered.
    public var mfaEmail: String?
    /// MFA is enforced for this user (needs a registered method — `mfaEmail` or `mfaPhone` — or registration first).
    public var mfaRequired: Bool
    /// A registered SMS method: the phone number (E.164) codes are texted to. nil = none registered.
    public var mfaPhone: String? = nil
    /// The user's default method when several are registered ("email" or "sms"); without one, `/challenge` without
    /// a method `id` answers `introspect_required`.
    public var mfaDefault: String? = nil
    /// Passwords used before (for `password_recently_used`).
    public var previousPasswords: [String] = []
    /// Native auth answers `redirect` at every endpoint for this user; the browser page still signs them in.
    public var requiresBrowser = false
    /// The `redirect_reason` then (a default when nil).
    public var redirectReason: String? = nil
    /// Access tokens minted for this user live this many seconds (nil: the tenant's lifetime).
    public var accessTokenLifetime: Int? = nil
    /// The generic OIDC provider gives this user a `preferred_username` (the email's local part); when false its
    /// tokens and userinfo carry only `email`.
    public var oidcPreferredUsername = true

    public var kind: String {
        if mfaRequired && mfaEmail == nil && mfaPhone == nil { return "password+registration_required" }
        if mfaRequired { return password == nil ? "otp+mfa" : "password+mfa" }
        return password == nil ? "otp" : "password"
    }
}

/// A sign-up attribute of the user flow.
public struct AttributeDefinition: Sendable, Equatable {
    public var name: String
    /// "string", "boolean" or "int".
    public var type: String
    public var required: Bool
    public var regex: String?
}

/// A sample protected API served by the emulator.
public struct ProtectedAPIConfig: Sendable, Equatable {
    public var name: String
    /// The API's application id: the access token's `aud`; scopes are `api://<appID>/<permission>`.
    public var appID: String
    /// URL path, e.g. "/api/todolist".
    public var path: String
    /// Permissions, e.g. ["ToDoList.Read", "ToDoList.ReadWrite"].
    public var permissions: [String]
    /// Any of these allows GET; any of `writePermissions` allows POST.
    public var readPermissions: [String]
    public var writePermissions: [String]

    public func scope(_ permission: String) -> String { "api://\(appID)/\(permission)" }
}

/// The generic OpenID Connect provider served under `<base>/oidc` (same users, its own issuer, key, client and rules).
public struct OIDCProviderConfig: Sendable, Equatable {
    /// Its one (public) client.
    public var clientID = "nativeauth-oidc-demo"
    /// Exact redirect URIs besides loopback ones (always allowed).
    public var redirectURIs: [String] = []
    /// A refresh answer carries an ID token (without `nonce`); when false it carries none.
    public var idTokenOnRefresh = true
    /// The device-authorization answer carries a `message`.
    public var deviceMessage = false
    /// Device-code token answers carry an ID token (when `openid` was asked for); false: never, as some providers
    /// do — clients then read the account from userinfo.
    public var deviceIDToken = true
    /// DPoP (RFC 9449): discovery offers ES256 proofs, a token request with a proof gets tokens bound to its key, and
    /// the APIs and userinfo take such tokens with proofs. False: no DPoP (proofs are ignored, tokens are Bearer).
    public var dpop = true
    /// What the token endpoint demands of proofs' nonces (`DPoPNonceMode`), and the APIs and userinfo.
    public var dpopNonce = "off"
    public var apiDPoPNonce = "off"
    /// How far (seconds) a proof's `iat` may be from the emulator's clock.
    public var dpopIatWindow = 300

    public init() {}
}

/// Lifetimes, in seconds.
public struct Lifetimes: Sendable, Equatable {
    public var accessToken = 3600
    public var idToken = 3600
    public var refreshToken = 86_400
    public var continuationToken = 600
    public var otp = 600
    public var authCode = 300
    public var deviceCode = 900
    /// When set, token responses carry `refresh_in` (seconds).
    public var refreshIn: Int? = nil
}

/// The tenant's password policy (its refusals are the `password_*` suberrors of AADSTS399246).
public struct PasswordPolicy: Sendable, Equatable {
    public var minLength = 8
    public var maxLength = 256
    public var banned: [String] = ["password", "password1", "password123", "12345678", "qwerty123", "letmein123"]
}

/// The password-policy suberrors (`invalid_grant`, AADSTS399246) and their descriptions.
let passwordPolicySuberrors: [String: String] = [
    "password_too_short": "The new password is too short.",
    "password_too_long": "The new password is too long.",
    "password_banned": "The new password is banned.",
    "password_is_invalid": "The new password contains invalid characters.",
    "password_too_weak": "New password is too weak.",
    "password_recently_used": "The new password was used recently.",
]

/// Everything the emulated tenant is made of. `EmulatorConfig.demo` is the built-in demo tenant.
public struct EmulatorConfig: Sendable, Equatable {
    public var tenantSubdomain = "contoso"
    public var tenantID = "aaaabbbb-0000-cccc-1111-dddd2222eeee"
    public var clients: [ClientApp] = []
    public var users: [UserRecord] = []
    public var signUpEnabled = true
    /// "email_password" or "email_otp".
    public var signUpMethod = "email_password"
    public var signUpAttributes: [AttributeDefinition] = []
    public var apis: [ProtectedAPIConfig] = []
    public var lifetimes = Lifetimes()
    public var otpLength = 8
    public var passwordPolicy = PasswordPolicy()
    /// RFC 9700 §4.14.2: a used refresh token is dead, and presenting it again revokes its whole family.
    public var refreshTokenReuseDetection = true
    public var resetPollInterval = 1
    /// How many `poll_completion` calls answer `in_progress` before `succeeded`.
    public var resetInProgressPolls = 1
    /// What `poll_completion` answers after the `in_progress` polls: "succeeded" or "failed".
    public var resetPollResult = "succeeded"
    /// A password suberror (`password_banned`, …) `poll_completion` answers instead, as when the service evaluates
    /// the password policy asynchronously.
    public var resetPollPolicyError: String? = nil
    /// `poll_completion` succeeds without a continuation token (no automatic sign-in).
    public var resetCompletionWithoutToken = false
    /// A completed `/signup/v1.0/continue` answers 200 without a continuation token (no automatic sign-in).
    public var signUpCompletionWithoutToken = false
    public var deviceCodeInterval = 1
    /// Seconds a `slow_down` answer adds to a device code's polling interval (RFC 8628 §3.5 asks clients for 5).
    public var deviceSlowDownIncrement = 5
    /// Entra ID tokens carry the opaque `login_hint` optional claim (what a client sends as `logout_hint`).
    public var idTokenLoginHint = true
    public var oidc = OIDCProviderConfig()
    /// Contacts (email addresses, phone numbers) the service refuses to send codes to: JIT registration and the MFA
    /// challenge answer `access_denied` + `provider_blocked_by_rep`.
    public var blockedContacts: [String] = ["blocked@fabrikam.com", "+15555550100"]

    /// Whether codes may not go to `contact` (`blockedContacts`, any case).
    func isBlocked(_ contact: String) -> Bool {
        blockedContacts.contains { $0.lowercased() == contact.lowercased() }
    }

    public var tenantDomain: String { "\(tenantSubdomain).onmicrosoft.com" }
}
