/// The opaque name of a library-held flow ("f_…"), as results carry it.
public struct FlowID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// Which native-auth flow a result belongs to.
public enum FlowType: String, Sendable {
    case signIn = "sign_in"
    case signUp = "sign_up"
    case resetPassword = "reset_password"
    case interactive
    case deviceCode = "device_code"
}

/// The answer of a flow call: its status, and the flow to continue (nil when it ended).
public struct FlowResult: Sendable {
    public var flowType: FlowType
    public var flow: FlowID?
    public var status: FlowStatus
}
