import NativeAuthJSON

/// An error of the generic provider: `{"error","error_description"}` (RFC 6749 §5.2), or no body at all.
struct OIDCError: Error {
    var status = 400
    var error: String
    var description: String
    var emptyBody = false
    var headers: [(String, String)] = []

    init(_ error: String, _ description: String, status: Int = 400) {
        self.error = error
        self.description = description
        self.status = status
    }

    /// An unknown `client_id`: 401 with an empty body.
    static func invalidClient() -> OIDCError {
        var e = OIDCError("invalid_client", "", status: 401)
        e.emptyBody = true
        return e
    }

    static func invalidGrant(_ why: String) -> OIDCError { OIDCError("invalid_grant", why) }

    var response: EmulatorResponse {
        if emptyBody { return EmulatorResponse(status: status, headers: [("Cache-Control", "no-store")] + headers) }
        var r = EmulatorResponse.json(
            ["error": .string(error), "error_description": .string(description)],
            status: status
        )
        r.headers += headers
        return r
    }
}
