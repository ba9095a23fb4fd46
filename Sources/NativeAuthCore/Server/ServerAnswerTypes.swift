internal import NativeAuthCrypto
internal import NativeAuthHTTP
internal import NativeAuthJSON

/// What `/challenge` (sign-in or sign-up) chose.
enum Challenge: Sendable {
    case password(ContinuationToken)
    case code(ContinuationToken, CodeChallenge)
    /// MFA without a method id: the user has no default method; the methods must be introspected (with the token
    /// the challenge was sent with) and one chosen.
    case introspectRequired
}

/// A native grant on `/oauth2/v2.0/token`.
enum NativeGrant: Sendable {
    case password(ContinuationToken, username: String, password: Secret)
    case oob(ContinuationToken, code: Secret)
    case mfaOOB(ContinuationToken, code: Secret)
    /// Sign-in after sign-up, password reset or registration (`username` where the flow knows it).
    case continuation(ContinuationToken, username: String?)
}

/// What `/oauth2/v2.0/token` answered inside a flow.
enum TokenAnswer: Sendable {
    case tokens(TokenResponse)
    case mfaRequired(ContinuationToken)
    case registrationRequired(ContinuationToken)
}

enum RegisterChallenge: Sendable {
    case code(ContinuationToken, CodeChallenge)
    /// The contact needs no verification (it is the sign-in address).
    case preverified(ContinuationToken)
}

enum SignUpSubmission: Sendable {
    case code(Secret)
    case password(Secret)
    case attributes([String: String])
}

enum SignUpContinueAnswer: Sendable {
    /// Sign-up is complete; without a continuation token there is no automatic sign-in (as MSAL iOS reads it).
    case completed(ContinuationToken?)
    case credentialRequired(ContinuationToken)
    case attributesRequired(ContinuationToken, [RequiredAttribute])
}

enum ResetPollStatus: Sendable {
    case succeeded(ContinuationToken?)
    case failed
    case inProgress
}

/// A successful token response.
struct TokenResponse: Sendable {
    var accessToken: Secret
    var expiresIn: Int64
    var extExpiresIn: Int64?
    var refreshIn: Int64?
    /// The `scope` the server granted, when it said.
    var grantedScopes: [String]?
    var refreshToken: RefreshToken?
    var idToken: String?
    var clientInfo: (uid: String, utid: String)?
    /// The key the tokens are bound to (`token_type` DPoP; the request carried a proof of it), or nil (Bearer).
    var dpopKey: DPoPKey? = nil
}

/// A decoded error answer.
struct ServerErrorEnvelope: Sendable {
    var details: ServerErrorDetails
    var invalidAttributes: [String]
    var claims: String? = nil
    /// Which parameter an AADSTS90100 answer names, read from its description (see `InvalidParameter`).
    var invalidParameter: InvalidParameter? = nil
}
