// A scripted token server and a clock tests move by hand, for the core's logic without sockets. Test-only code.
import NativeAuthCore
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import Synchronization

/// A scripted server: answers by path, records requests.
public final class FakeTransport: Transport, @unchecked Sendable {
    public init() {}
    public typealias Responder = @Sendable (HTTPRequest, [String: String]) -> Result<HTTPResponse, HTTPError>
    private let lock = Mutex<([HTTPRequest], [String: [Responder]])>(([], [:]))

    /// Answers requests to `suffix` with `responders` in turn (the last one repeats). Replaces earlier ones.
    public func on(_ suffix: String, _ responders: Responder...) {
        lock.withLock { $0.1[suffix] = responders }
    }

    public var requests: [HTTPRequest] { lock.withLock { $0.0 } }
    public func count(_ suffix: String) -> Int { requests.filter { $0.url.hasSuffix(suffix) }.count }

    public func send(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        let path = request.url.split(separator: "?").first.map(String.init) ?? request.url
        let responder: Responder? = lock.withLock { s in
            s.0.append(request)
            guard let key = s.1.keys.filter({ path.hasSuffix($0) }).max(by: { $0.count < $1.count }),
                var list = s.1[key], !list.isEmpty
            else { return nil }
            let r = list.count > 1 ? list.removeFirst() : list[0]
            s.1[key] = list
            return r
        }
        guard let responder else { return HTTPResponse(status: 404) }
        let form = Dictionary(
            uniqueKeysWithValues: (FormEncoding.decode(String(decoding: request.body, as: UTF8.self)) ?? []).map {
                ($0.0, $0.1)
            }
        )
        return try responder(request, form).get()
    }
}

public final class FakeClock: Clock, @unchecked Sendable {
    public init() {}
    private let t = Mutex<Double>(1_800_000_000)
    public let slept = Mutex<[Double]>([])
    public func now() -> Double { t.withLock { $0 } }
    public func sleep(_ seconds: Double) {
        slept.withLock { $0.append(seconds) }
        advance(seconds)
    }
    public func advance(_ s: Double) { t.withLock { $0 += s } }
}

public func json(_ v: JSONValue, status: Int = 200, headers: [(String, String)] = []) -> Result<HTTPResponse, HTTPError>
{
    .success(
        HTTPResponse(
            status: status,
            headers: [("content-type", "application/json")] + headers.map { ($0.0, $0.1) },
            body: v.serializedBytes() ?? []
        )
    )
}

public let clientInfo = Base64.urlEncode(Array(#"{"uid":"u1","utid":"t1"}"#.utf8))

public func tokenResponse(
    _ scope: String,
    at: String = "AT",
    rt: String? = "RT2",
    expiresIn: Int = 3600,
    refreshIn: Int? = nil
) -> JSONValue {
    var o: [String: JSONValue] = [
        "token_type": "Bearer", "access_token": .string(at), "expires_in": .int(Int64(expiresIn)),
        "scope": .string(scope), "client_info": .string(clientInfo),
    ]
    if let rt { o["refresh_token"] = .string(rt) }
    if let refreshIn { o["refresh_in"] = .int(Int64(refreshIn)) }
    return .object(o)
}
