import Foundation
import NativeAuthJSON

/// A request as the emulator's logic sees it (independent of the HTTP server library).
public struct EmulatorRequest: Sendable {
    public var method: String
    /// Percent-decoded path, e.g. "/contoso.onmicrosoft.com/oauth2/v2.0/initiate".
    public var path: String
    public var query: [String: String]
    /// Header names lowercased.
    public var headers: [String: String]
    public var body: [UInt8]

    public init(
        method: String,
        path: String,
        query: [String: String] = [:],
        headers: [String: String] = [:],
        body: [UInt8] = []
    ) {
        self.method = method.uppercased()
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        self.body = body
    }

    /// Form fields of a POST (nil if the body is not valid form encoding), else the query.
    var form: [String: String]? {
        if method == "POST" { return Form.decode(String(decoding: body, as: UTF8.self)) }
        return query
    }

    var cookies: [String: String] {
        var out: [String: String] = [:]
        for part in (headers["cookie"] ?? "").split(separator: ";") {
            let kv = part.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { out[kv[0].trimmingCharacters(in: .whitespaces)] = String(kv[1]) }
        }
        return out
    }
}

public struct EmulatorResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    static func json(_ value: JSONValue, status: Int = 200) -> EmulatorResponse {
        EmulatorResponse(
            status: status,
            headers: [("Content-Type", "application/json; charset=utf-8"), ("Cache-Control", "no-store")],
            body: value.serializedBytes() ?? Array("{}".utf8)
        )
    }

    static func html(_ text: String, status: Int = 200, headers: [(String, String)] = []) -> EmulatorResponse {
        EmulatorResponse(
            status: status,
            headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")] + headers,
            body: Array(text.utf8)
        )
    }

    static func redirect(_ location: String, headers: [(String, String)] = []) -> EmulatorResponse {
        EmulatorResponse(status: 302, headers: [("Location", location), ("Cache-Control", "no-store")] + headers)
    }

    func header(_ name: String) -> String? {
        headers.first(where: { $0.0.lowercased() == name.lowercased() })?.1
    }
}

/// An error answer in the service's envelope.
struct ServiceError: Error {
    var status = 400
    var error: String
    var codes: [Int]
    var text: String
    var suberror: String? = nil
    var extra: [String: JSONValue] = [:]

    init(
        _ error: String,
        _ codes: [Int],
        _ text: String,
        suberror: String? = nil,
        status: Int = 400,
        extra: [String: JSONValue] = [:]
    ) {
        self.error = error
        self.codes = codes
        self.text = text
        self.suberror = suberror
        self.status = status
        self.extra = extra
    }

    // The catalogue of answers the SDKs classify; descriptions reproduce the phrases they match.
    static func invalidUsername() -> ServiceError {
        ServiceError("invalid_request", [90100], "AADSTS90100: username parameter is empty or not valid.")
    }
    static func missingParameter(_ name: String) -> ServiceError {
        ServiceError("invalid_request", [90100], "AADSTS90100: \(name) parameter is empty or not valid.")
    }
    static func invalidContinuationToken() -> ServiceError {
        ServiceError("invalid_request", [55200], "AADSTS55200: The continuation_token is invalid.")
    }
    static func expiredContinuationToken() -> ServiceError {
        ServiceError("expired_token", [552003], "AADSTS552003: The continuation_token is expired.")
    }
    static func userNotFound() -> ServiceError {
        ServiceError("user_not_found", [50034], "AADSTS50034: The user account does not exist in the directory.")
    }
    static func invalidOOB() -> ServiceError {
        ServiceError(
            "invalid_grant",
            [50181],
            "AADSTS50181: Unable to validate the one-time passcode.",
            suberror: "invalid_oob_value"
        )
    }
    static func wrongPassword() -> ServiceError {
        ServiceError(
            "invalid_grant",
            [50126],
            "AADSTS50126: Error validating credentials due to invalid username or password."
        )
    }
}

/// Per-request context: ids for correlation and tracing, and the time.
struct RequestContext {
    let correlationID: String
    let traceID: String
    let now: Double
    let baseURL: String
}
