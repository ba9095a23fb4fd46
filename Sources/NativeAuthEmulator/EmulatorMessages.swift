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

/// An answer as the emulator's logic gives it (the HTTP adapter writes it, spoiled as faults say).
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

/// Per-request context: ids for correlation and tracing, and the time.
struct RequestContext {
    let correlationID: String
    let traceID: String
    let now: Double
    let baseURL: String
}
