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
    /// The registered strong-auth (MFA) method: an email address codes are sent to. nil = none registered.
    public var mfaEmail: String?
    /// MFA is enforced for this user (needs `mfaEmail`, or registration first).
    public var mfaRequired: Bool
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
        if mfaRequired && mfaEmail == nil { return "password+registration_required" }
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
    /// Contacts that JIT registration refuses (`access_denied` + `provider_blocked_by_rep`).
    public var blockedContacts: [String] = ["blocked@fabrikam.com"]

    public var tenantDomain: String { "\(tenantSubdomain).onmicrosoft.com" }

    /// The built-in demo tenant (documented in README).
    public static var demo: EmulatorConfig {
        var c = EmulatorConfig()
        c.clients = [
            ClientApp(
                clientID: "00001111-aaaa-2222-bbbb-3333cccc4444",
                name: "NativeAuth demo (public, native auth)",
                isPublic: true,
                nativeAuthEnabled: true,
                redirectURIs: [],
                consentedScopes: nil
            ),
            ClientApp(
                clientID: "99990000-ffff-8888-eeee-7777dddd6666",
                name: "Web app (confidential)",
                isPublic: false,
                nativeAuthEnabled: false,
                redirectURIs: [],
                consentedScopes: nil
            ),
            ClientApp(
                clientID: "55556666-bbbb-7777-cccc-8888dddd9999",
                name: "Public client without native auth",
                isPublic: true,
                nativeAuthEnabled: false,
                redirectURIs: [],
                consentedScopes: nil
            ),
        ]
        c.users = [
            UserRecord(
                email: "ann@contoso.com",
                password: "Demo-Passw0rd!",
                displayName: "Ann Example",
                givenName: "Ann",
                surname: "Example",
                attributes: ["city": "Seattle"],
                objectID: "11110000-aaaa-4bbb-8ccc-000000000001",
                mfaEmail: nil,
                mfaRequired: false
            ),
            UserRecord(
                email: "olivia@contoso.com",
                password: nil,
                displayName: "Olivia Otp",
                givenName: "Olivia",
                surname: "Otp",
                attributes: [:],
                objectID: "11110000-aaaa-4bbb-8ccc-000000000002",
                mfaEmail: nil,
                mfaRequired: false,
                oidcPreferredUsername: false
            ),
            UserRecord(
                email: "mike@contoso.com",
                password: "Mfa-Passw0rd!",
                displayName: "Mike Mfa",
                givenName: "Mike",
                surname: "Mfa",
                attributes: [:],
                objectID: "11110000-aaaa-4bbb-8ccc-000000000003",
                mfaEmail: "mike.backup@fabrikam.com",
                mfaRequired: true
            ),
            UserRecord(
                email: "rita@contoso.com",
                password: "Reg-Passw0rd!",
                displayName: "Rita Register",
                givenName: "Rita",
                surname: "Register",
                attributes: [:],
                objectID: "11110000-aaaa-4bbb-8ccc-000000000004",
                mfaEmail: nil,
                mfaRequired: true
            ),
        ]
        c.signUpAttributes = [
            AttributeDefinition(name: "displayName", type: "string", required: true, regex: nil),
            AttributeDefinition(name: "city", type: "string", required: false, regex: nil),
            AttributeDefinition(name: "postalCode", type: "string", required: false, regex: "^[0-9]{5}$"),
        ]
        c.apis = [
            ProtectedAPIConfig(
                name: "ToDoList",
                appID: "11112222-bbbb-3333-cccc-4444dddd5555",
                path: "/api/todolist",
                permissions: ["ToDoList.Read", "ToDoList.ReadWrite"],
                readPermissions: ["ToDoList.Read", "ToDoList.ReadWrite"],
                writePermissions: ["ToDoList.ReadWrite"]
            ),
            ProtectedAPIConfig(
                name: "Notes",
                appID: "22223333-cccc-4444-dddd-5555eeee6666",
                path: "/api/notes",
                permissions: ["Notes.Read", "Notes.ReadWrite"],
                readPermissions: ["Notes.Read", "Notes.ReadWrite"],
                writePermissions: ["Notes.ReadWrite"]
            ),
        ]
        return c
    }

    /// Reads a configuration document; members not given keep the demo tenant's values.
    public static func load(json: JSONValue) throws(JSONFieldError) -> EmulatorConfig {
        var c = EmulatorConfig.demo
        let f = try JSONFields(json)
        if let t = try f.optionalObject("tenant") {
            c.tenantSubdomain = try t.optionalString("subdomain") ?? c.tenantSubdomain
            c.tenantID = try t.optionalString("id") ?? c.tenantID
        }
        if let clients = try f.optionalArray("clients") {
            c.clients = []
            for (i, v) in clients.enumerated() {
                let o = try JSONFields(v, path: "clients[\(i)]")
                c.clients.append(
                    ClientApp(
                        clientID: try o.string("client_id"),
                        name: try o.optionalString("name") ?? "app",
                        isPublic: try o.optionalBool("public") ?? true,
                        nativeAuthEnabled: try o.optionalBool("native_auth") ?? true,
                        redirectURIs: try o.optionalStringArray("redirect_uris") ?? [],
                        consentedScopes: try o.optionalStringArray("consented_scopes")
                    )
                )
            }
        }
        if let users = try f.optionalArray("users") {
            c.users = []
            for (i, v) in users.enumerated() {
                c.users.append(try user(from: JSONFields(v, path: "users[\(i)]"), index: i))
            }
        }
        if let s = try f.optionalObject("sign_up") {
            c.signUpEnabled = try s.optionalBool("enabled") ?? c.signUpEnabled
            c.signUpMethod = try s.optionalString("method") ?? c.signUpMethod
            guard c.signUpMethod == "email_password" || c.signUpMethod == "email_otp" else {
                throw JSONFieldError(path: "sign_up.method", problem: .invalid("must be email_password or email_otp"))
            }
            c.signUpCompletionWithoutToken =
                try s.optionalBool("completion_without_token") ?? c.signUpCompletionWithoutToken
            if let attrs = try s.optionalArray("attributes") {
                c.signUpAttributes = []
                for (i, v) in attrs.enumerated() {
                    let a = try JSONFields(v, path: "sign_up.attributes[\(i)]")
                    c.signUpAttributes.append(
                        AttributeDefinition(
                            name: try a.string("name"),
                            type: try a.optionalString("type") ?? "string",
                            required: try a.optionalBool("required") ?? false,
                            regex: try a.optionalString("regex")
                        )
                    )
                }
            }
        }
        if let apis = try f.optionalArray("apis") {
            c.apis = []
            for (i, v) in apis.enumerated() {
                let a = try JSONFields(v, path: "apis[\(i)]")
                let perms = try a.stringArray("permissions")
                c.apis.append(
                    ProtectedAPIConfig(
                        name: try a.string("name"),
                        appID: try a.string("app_id"),
                        path: try a.string("path"),
                        permissions: perms,
                        readPermissions: try a.optionalStringArray("read_permissions") ?? perms,
                        writePermissions: try a.optionalStringArray("write_permissions") ?? perms
                    )
                )
            }
        }
        if let l = try f.optionalObject("lifetimes") {
            c.lifetimes.accessToken = Int(
                try l.optionalInt("access_token", in: 1...86_400 * 30) ?? Int64(c.lifetimes.accessToken)
            )
            c.lifetimes.idToken = Int(try l.optionalInt("id_token", in: 1...86_400 * 30) ?? Int64(c.lifetimes.idToken))
            c.lifetimes.refreshToken = Int(
                try l.optionalInt("refresh_token", in: 1...86_400 * 365) ?? Int64(c.lifetimes.refreshToken)
            )
            c.lifetimes.continuationToken = Int(
                try l.optionalInt("continuation_token", in: 1...86_400) ?? Int64(c.lifetimes.continuationToken)
            )
            c.lifetimes.otp = Int(try l.optionalInt("otp", in: 1...86_400) ?? Int64(c.lifetimes.otp))
            c.lifetimes.authCode = Int(try l.optionalInt("auth_code", in: 1...86_400) ?? Int64(c.lifetimes.authCode))
            c.lifetimes.deviceCode = Int(
                try l.optionalInt("device_code", in: 1...86_400) ?? Int64(c.lifetimes.deviceCode)
            )
            if let r = try l.optionalInt("refresh_in", in: 1...86_400) { c.lifetimes.refreshIn = Int(r) }
        }
        c.otpLength = Int(try f.optionalInt("otp_length", in: 4...10) ?? Int64(c.otpLength))
        if let p = try f.optionalObject("password_policy") {
            c.passwordPolicy.minLength = Int(
                try p.optionalInt("min_length", in: 1...256) ?? Int64(c.passwordPolicy.minLength)
            )
            c.passwordPolicy.maxLength = Int(
                try p.optionalInt("max_length", in: 1...1024) ?? Int64(c.passwordPolicy.maxLength)
            )
            c.passwordPolicy.banned = try p.optionalStringArray("banned") ?? c.passwordPolicy.banned
        }
        c.refreshTokenReuseDetection =
            try f.optionalBool("refresh_token_reuse_detection") ?? c.refreshTokenReuseDetection
        if let r = try f.optionalObject("reset_password") {
            c.resetPollInterval = Int(try r.optionalInt("poll_interval", in: 0...60) ?? Int64(c.resetPollInterval))
            c.resetInProgressPolls = Int(
                try r.optionalInt("in_progress_polls", in: 0...10) ?? Int64(c.resetInProgressPolls)
            )
            c.resetPollResult = try r.optionalString("poll_result") ?? c.resetPollResult
            guard c.resetPollResult == "succeeded" || c.resetPollResult == "failed" else {
                throw JSONFieldError(
                    path: "reset_password.poll_result",
                    problem: .invalid("must be succeeded or failed")
                )
            }
            c.resetPollPolicyError = try r.optionalString("poll_policy_error")
            if let sub = c.resetPollPolicyError, passwordPolicySuberrors[sub] == nil {
                throw JSONFieldError(
                    path: "reset_password.poll_policy_error",
                    problem: .invalid("must be one of \(passwordPolicySuberrors.keys.sorted().joined(separator: ", "))")
                )
            }
            c.resetCompletionWithoutToken =
                try r.optionalBool("completion_without_token") ?? c.resetCompletionWithoutToken
        }
        c.deviceCodeInterval = Int(try f.optionalInt("device_code_interval", in: 1...60) ?? Int64(c.deviceCodeInterval))
        c.deviceSlowDownIncrement = Int(
            try f.optionalInt("device_slow_down_increment", in: 0...60) ?? Int64(c.deviceSlowDownIncrement)
        )
        c.idTokenLoginHint = try f.optionalBool("id_token_login_hint") ?? c.idTokenLoginHint
        if let o = try f.optionalObject("oidc") {
            try rejectUnknownMembers(
                o,
                ["client_id", "redirect_uris", "id_token_on_refresh", "device_message", "device_id_token"]
            )
            c.oidc.clientID = try o.optionalString("client_id") ?? c.oidc.clientID
            c.oidc.redirectURIs = try o.optionalStringArray("redirect_uris") ?? c.oidc.redirectURIs
            c.oidc.idTokenOnRefresh = try o.optionalBool("id_token_on_refresh") ?? c.oidc.idTokenOnRefresh
            c.oidc.deviceMessage = try o.optionalBool("device_message") ?? c.oidc.deviceMessage
            c.oidc.deviceIDToken = try o.optionalBool("device_id_token") ?? c.oidc.deviceIDToken
        }
        c.blockedContacts = try f.optionalStringArray("blocked_contacts") ?? c.blockedContacts
        return c
    }

    static func user(from o: JSONFields<JSONValue>, index: Int) throws(JSONFieldError) -> UserRecord {
        var attributes: [String: String] = [:]
        if let a = try o.optionalObject("attributes") {
            for (k, v) in a.members {
                guard let s = v.stringValue else {
                    throw JSONFieldError(
                        path: a.path(of: k),
                        problem: .wrongType(expected: "string", found: v.typeName)
                    )
                }
                attributes[k] = s
            }
        }
        let email = try o.string("email")
        let mfaEmail = try o.optionalString("mfa_email")
        let registration = try o.optionalBool("requires_registration") ?? false
        let mfaRequired = try o.optionalBool("mfa_required") ?? (mfaEmail != nil || registration)
        var user = UserRecord(
            email: email.lowercased(),
            password: try o.optionalString("password"),
            displayName: try o.optionalString("display_name") ?? email,
            givenName: try o.optionalString("given_name"),
            surname: try o.optionalString("surname"),
            attributes: attributes,
            objectID: try o.optionalString("object_id") ?? Ids.deterministicGUID(email.lowercased()),
            mfaEmail: mfaEmail,
            mfaRequired: mfaRequired
        )
        user.requiresBrowser = try o.optionalBool("requires_browser") ?? false
        user.redirectReason = try o.optionalString("redirect_reason")
        user.accessTokenLifetime = try o.optionalInt("access_token_lifetime", in: 1...86_400).map(Int.init)
        user.oidcPreferredUsername = try o.optionalBool("oidc_preferred_username") ?? true
        return user
    }
}
