// Target "api": na_call_api's reading of what an API answers — status, headers (WWW-Authenticate: a 401 with a
// Bearer invalid_token or claims challenge makes the library get a new token and retry once), and the body as
// JSON, text or base64 — on a client the scripted server signed in.
//
// Input: byte 0 chooses the request ((b - '0') mod 4, `apiRequests`), the rest is the API's answers (Answers.swift).
import NativeAuthCore
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON

@testable import NativeAuthCABI

let apiScopes: JSONValue = ["api://a/read"]

/// The na_call_api requests the target sends (the answer is what is fuzzed).
let apiRequests: [JSONValue] = [
    ["url": .string(HappyServer.apiURL), "scopes": apiScopes],
    [
        "url": .string(HappyServer.apiURL), "method": "POST", "scopes": apiScopes,
        "body": ["title": "Buy milk", "done": false],
    ],
    [
        "url": .string(HappyServer.apiURL + "/1?x=y"), "method": "PUT", "scopes": apiScopes, "body": "text body",
        "headers": ["Content-Type": "text/plain", "X-Trace": "1"],
    ],
    ["url": .string(HappyServer.apiURL), "method": "DELETE", "scopes": apiScopes, "force_refresh": true],
]

/// The result document na_call_api must give for `response` (include/nativeauth.h): its status; its headers, a
/// repeated one joined with ", "; the body parsed when the Content-Type says JSON and it parses, else as text when it
/// is UTF-8, else in base64. JSON nested deeper than 64 levels is text with "body_too_deep": true; a text whose
/// brackets go deeper but that cannot be JSON (a control character in a string, unbalanced) is text, unflagged.
func expectedAPIResult(_ response: HTTPResponse) -> JSONValue {
    var headers: [String: String] = [:]
    for (name, value) in response.headers { headers[name] = headers[name].map { $0 + ", " + value } ?? value }
    var o: [String: JSONValue] = [
        "v": 1, "status": .int(Int64(response.status)), "headers": .object(headers.mapValues { .string($0) }),
    ]
    let contentType = response.header("content-type")?.lowercased() ?? ""
    let deep = JSONDepth.exceeds(response.body)
    if contentType.contains("json"), !deep, let parsed = try? JSONValue.parse(response.body) {
        o["body"] = parsed
    } else if let text = String(validating: response.body, as: UTF8.self) {
        o["body"] = .string(text)
        if contentType.contains("json") && deep && JSONDepth.shape(response.body) == .tooDeep {
            o["body_too_deep"] = true
        }
    } else {
        o["body_base64"] = .string(Base64.encode(response.body))
    }
    return .object(o)
}

func fuzzAPI(_ data: UnsafeRawBufferPointer) {
    guard let first = data.first else { return }
    let request = apiRequests[Int(first &- UInt8(ascii: "0")) % apiRequests.count]
    let answers = Answers.parse(data.dropFirst())
    let player = AnswerPlayer(answers)
    let client = FuzzClient(transport: HappyServer.transport(), apiTransport: player.transport())
    let signIn = client.callAPI(
        na_sign_in,
        ["username": "ann@fabrikam.example", "password": "pw", "scopes": apiScopes]
    )
    guard signIn.status == "signed_in" else { finding("the scripted sign-in failed", signIn.text) }
    let r = client.callAPI(na_call_api, request)
    let (served, last) = player.served
    guard served >= 1, served <= 2, let last else { finding("na_call_api sent \(served) requests", r.text) }
    switch answers[last] {
    case .success(let response):
        guard r.rc == 0 else { finding("an API answer was not a result", r.text) }
        let expected = expectedAPIResult(response)
        guard r.doc == expected else { finding("na_call_api's result is not the API's answer", r.text) }
        // The one retry is for a 401 whose challenge asks for it, and only then: a Bearer challenge with
        // error="invalid_token", or a claims challenge whose claims are a usable JSON object (at most 8 KiB); a
        // header that does not parse asks for it when it says invalid_token anywhere (the reading before the parser).
        let retryAsked = { (a: HTTPResponse) -> Bool in
            guard a.status == 401, let header = a.header("www-authenticate") else { return false }
            guard let parsed = try? WWWAuthenticate.parse(header, isJSONObject: ClaimsRequest.isJSONObject) else {
                return header.contains("invalid_token")
            }
            if let claims = parsed.claims, claims.utf8.count <= 8192 { return true }
            return parsed.challenges.contains { $0.isScheme("Bearer") && $0.params["error"] == "invalid_token" }
        }
        if case .success(let firstAnswer) = answers[0], retryAsked(firstAnswer) != (served == 2) {
            finding("na_call_api retried \(served - 1) times after \(firstAnswer.status)", r.text)
        }
    case .failure:
        guard r.rc != 0 else { finding("a transport failure was answered as a result", r.text) }
    }
}
