// The fuzz targets by name, and the one the fuzzer runs.

/// One fuzz target: its name (also its corpus directory, Tests/Fuzz/corpus/<name>) and what it does with an input.
struct FuzzTarget: Sendable {
    let name: String
    let about: String
    let run: @Sendable (UnsafeRawBufferPointer) -> Void
}

let fuzzTargets: [FuzzTarget] = [
    FuzzTarget(
        name: "requests",
        about: "request_json of every export, on clients in 16 states, against a scripted server",
        run: fuzzRequests
    ),
    FuzzTarget(name: "config", about: "na_client_new's configuration document; na_client_info", run: fuzzConfig),
    FuzzTarget(
        name: "server",
        about: "server answers (status, headers, body) through whole flows, discovery and refresh",
        run: fuzzServer
    ),
    FuzzTarget(name: "api", about: "na_call_api: the API's status, headers and body", run: fuzzAPI),
    FuzzTarget(name: "json", about: "JSONValue and JSONDocument against jansson, and serialisation", run: fuzzJSON),
    FuzzTarget(
        name: "loopback",
        about: "the browser sign-in's loopback listener: HTTP requests, and /proc/net/tcp tables",
        run: fuzzLoopback
    ),
    FuzzTarget(
        name: "dbus",
        about: "the Secret Service store's D-Bus client: messages as the session bus's socket delivers them",
        run: fuzzDBus
    ),
    FuzzTarget(name: "toml", about: "the nativeauth command's profile file (its TOML subset)", run: fuzzTOML),
    FuzzTarget(
        name: "start",
        about: "started calls: na_start, na_op_cancel/free, the event fd and na_client_dispatch, freeing the client",
        run: fuzzStart
    ),
    FuzzTarget(
        name: "wwwauth",
        about: "WWW-Authenticate headers: na_parse_www_authenticate and NativeAuthHTTP's parser",
        run: fuzzWWWAuthenticate
    ),
    FuzzTarget(
        name: "url",
        about: "HTTPURL, the parser of every URL (the app's and the server's), and the DPoP target made of it",
        run: fuzzURL
    ),
    FuzzTarget(
        name: "cachefile",
        about: "the file token cache's scanner: MSALCacheFormat.Document, written back, against jansson",
        run: fuzzCacheFile
    ),
]

func fuzzTarget(named name: String) -> FuzzTarget? { fuzzTargets.first { $0.name == name } }

/// The target libFuzzer's callback runs (set once, before the fuzzer starts).
nonisolated(unsafe) var selectedTarget: FuzzTarget? = nil

func runSelected(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let target = selectedTarget else { return 0 }
    run(target, UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

/// The input being run, as text (the checks ignore what the input itself contains: libFuzzer learns the markers
/// they look for from their comparisons and writes them into requests and answers, which may quote them).
nonisolated(unsafe) var currentInput = ""

func run(_ target: FuzzTarget, _ input: UnsafeRawBufferPointer) {
    currentInput = String(decoding: input, as: UTF8.self)
    target.run(input)
}
