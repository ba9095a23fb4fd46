internal import NativeAuthHTTP
internal import NativeAuthJSON

/// A `claims` request parameter: a JSON object, kept as its serialised text (sent as is).
public struct ClaimsRequest: Sendable, Equatable {
    public let json: String
    public init(json: String) { self.json = json }

    /// Whether `text` can be a claims request: a JSON object nested at most as deep as any request document may be
    /// (`JSONDepth`). One check for the claims of a request, of a WWW-Authenticate header the app parses, and of an
    /// API's challenge `na_call_api` answers.
    public static func isJSONObject(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !JSONDepth.exceeds(bytes) else { return false }
        if case .object? = try? JSONValue.parse(bytes) { return true }
        return false
    }

    /// The `claims` parameter a token or authorization request sends: the request's own claims with the client's
    /// capabilities merged in as `{"access_token":{"xms_cc":{"values":[…]}}}` — MSAL for Python's
    /// `_merge_claims_challenge_and_capabilities` (msal/application.py): the capabilities replace any `xms_cc` the
    /// claims had, other members stay. No capabilities: the claims as they are (nil stays nil).
    public static func merging(_ claims: ClaimsRequest?, capabilities: [String]) -> ClaimsRequest? {
        guard !capabilities.isEmpty else { return claims }
        var document: [String: JSONValue] = [:]
        if let claims {
            guard case .object(let members)? = try? JSONValue.parse(claims.json) else { return claims }
            document = members
        }
        var accessToken: [String: JSONValue] = [:]
        if case .object(let members)? = document["access_token"] { accessToken = members }
        accessToken["xms_cc"] = ["values": .array(capabilities.map { .string($0) })]
        document["access_token"] = .object(accessToken)
        guard let bytes = JSONValue.object(document).serializedBytes() else { return claims }
        return ClaimsRequest(json: String(decoding: bytes, as: UTF8.self))
    }
}
