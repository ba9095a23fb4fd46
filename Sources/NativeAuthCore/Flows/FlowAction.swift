/// What the app may do to a flow (`na_flow_submit`).
public enum FlowAction: Sendable {
    case submitCode(Secret)
    case resendCode
    case submitPassword(Secret)
    case submitAttributes([String: String])
    /// MFA: send a code to one of the methods (default: the first).
    case requestChallenge(methodID: String?)
    /// Strong-auth registration: the contact to register (`methodID` defaults to the flow's first method).
    case registerMethod(contact: String, methodID: String?)
    /// After sign-up or password reset: sign in with the flow's continuation token.
    case signIn(scopes: [String]?, claims: ClaimsRequest?)
    /// Browser and device-code sign-in: wait for the redirect or the approval, at most `timeoutMs` this call.
    case wait(timeoutMs: Int?)
    /// Browser sign-in: the redirect, as an app that captured it itself received it.
    case submitRedirect(String)

    /// The action without its arguments (what a flow reports it is waiting for).
    public enum Kind: String, Sendable, CaseIterable {
        case submitCode = "submit_code"
        case resendCode = "resend_code"
        case submitPassword = "submit_password"
        case submitAttributes = "submit_attributes"
        case requestChallenge = "request_challenge"
        case registerMethod = "register_method"
        case signIn = "sign_in"
        case wait
        case submitRedirect = "submit_redirect"
        case cancel
    }
}

extension FlowAction {
    public var kind: Kind {
        switch self {
        case .submitCode: return .submitCode
        case .resendCode: return .resendCode
        case .submitPassword: return .submitPassword
        case .submitAttributes: return .submitAttributes
        case .requestChallenge: return .requestChallenge
        case .registerMethod: return .registerMethod
        case .signIn: return .signIn
        case .wait: return .wait
        case .submitRedirect: return .submitRedirect
        }
    }
}
