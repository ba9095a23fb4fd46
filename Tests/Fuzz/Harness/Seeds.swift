// `nativeauth-fuzz seed --out DIR [--ready-file FILE]` writes the seed corpora (`make fuzz-seeds` runs it with a
// fresh emulator and commits nothing by itself). The request, configuration and JSON documents are the ones the tests
// use (Tests/NativeAuthCABITests, Tests/NativeAuthJSONTests, Tests/c/abi_test.c); the server and API answers are
// recorded from the emulator by the driver the "server" target runs, so each seed replays a whole flow.
import Glibc
import NativeAuthCore
import NativeAuthCrypto
import NativeAuthHTTP
import NativeAuthJSON
import NativeAuthNet
import Synchronization

@testable import NativeAuthCABI

/// Seeds by target: file name and content.
final class SeedSet {
    var files: [String: [(String, [UInt8])]] = [:]

    func add(_ target: String, _ name: String, _ bytes: [UInt8]) {
        files[target, default: []].append((name, bytes))
        // Every JSON document any target reads also seeds the JSON target.
        if target != "json", let body = jsonPart(target, bytes), (try? JSONValue.parse(body)) != nil {
            files["json", default: []].append(("\(target)-\(name)", body))
        }
    }

    func add(_ target: String, _ name: String, _ text: String) { add(target, name, Array(text.utf8)) }

    private func jsonPart(_ target: String, _ bytes: [UInt8]) -> [UInt8]? {
        switch target {
        case "requests": return Array(bytes.dropFirst(2))
        case "config", "cachefile": return bytes
        case "wwwauth", "url": return nil
        default:
            // The body of the first answer.
            let answers = Answers.split(Array(bytes.dropFirst()), on: Answers.separator)
            return answers.first.flatMap { Answers.splitOnce($0, on: Array("\n\n".utf8))?.1 }
        }
    }
}

func recordSeeds(_ args: [String]) -> Int32 {
    var out: String? = nil
    var ready: String? = nil
    var i = 0
    while i + 1 < args.count {
        switch args[i] {
        case "--out": out = args[i + 1]
        case "--ready-file": ready = args[i + 1]
        default: break
        }
        i += 2
    }
    guard let out else {
        printError("usage: nativeauth-fuzz seed --out DIR [--ready-file EMULATOR_READY_FILE]")
        return 2
    }
    let seeds = SeedSet()
    requestSeeds(seeds)
    configSeeds(seeds)
    jsonSeeds(seeds)
    loopbackSeeds(seeds)
    wwwAuthenticateSeeds(seeds)
    urlSeeds(seeds)
    cacheFileSeeds(seeds)
    handWrittenAnswerSeeds(seeds)
    if let ready {
        guard let emulator = EmulatorControl(readyFile: ready) else {
            printError("nativeauth-fuzz seed: cannot read the emulator's ready file \(ready)")
            return 1
        }
        guard emulator.moveClockToFuzzStart() else {
            printError("nativeauth-fuzz seed: cannot move the emulator's clock to the fuzz clock's start")
            return 1
        }
        recordServerSeeds(seeds, emulator)
        recordAPISeeds(seeds, emulator)
    }
    for target in fuzzTargets {
        let dir = out + "/" + target.name
        guard Files.makeDirectory(out), Files.makeDirectory(dir) else {
            printError("nativeauth-fuzz seed: cannot create \(dir)")
            return 1
        }
        var names = Set<String>()
        for (name, bytes) in seeds.files[target.name] ?? [] {
            var unique = name
            var n = 2
            while names.contains(unique) {
                unique = "\(name)-\(n)"
                n += 1
            }
            names.insert(unique)
            guard Files.write(dir + "/" + unique, bytes) else {
                printError("nativeauth-fuzz seed: cannot write \(dir)/\(unique)")
                return 1
            }
        }
        print("seed \(target.name): \(names.count) file(s)")
    }
    return 0
}

// MARK: - Documents from the tests

private func requestSeeds(_ s: SeedSet) {
    // (export digit, state letter, request): RequestTarget.swift explains the first two bytes.
    let docs: [(String, String, String)] = [
        ("0", "a", #"{"username":"ann@fabrikam.example","password":"pw","scopes":["api://a/read"]}"#),
        ("0", "a", #"{"v":1,"username":"otp@fabrikam.example","scopes":["api://a/read","openid"]}"#),
        ("0", "a", #"{"username":"mfa@fabrikam.example","password":"pw","scopes":["api://a/read"]}"#),
        ("0", "a", #"{"username":"reg@fabrikam.example","password":"pw"}"#),
        ("0", "a", #"{"username":"missing@fabrikam.example"}"#),
        ("0", "a", #"{"username":"ann@fabrikam.example","password":"wrong"}"#),
        ("0", "b", #"{"username":"u@x.com","password":"p","scopes":["api://a/read"],"claims":{"id_token":{}}}"#),
        ("0", "a", #"{"username":"u@x.com","claims":"{\"access_token\":{\"xms_cc\":{\"values\":[\"cp1\"]}}}"}"#),
        ("0", "a", #"{"v":7}"#), ("0", "a", #"{"username":""}"#), ("0", "a", #"{"username":5,"password":[1]}"#),
        ("0", "a", #"{"username":"a@b.c","password":""}"#), ("0", "a", #"{"username":"a\u0000b@c.d"}"#),
        ("0", "a", #"{"scopes":"x"}"#), ("0", "a", #"{"username":"\ud800"}"#), ("0", "a", #"{"claims":5}"#),
        ("0", "a", "{\"username\":\"\u{1}\",\"scopes\":[\"a b\"]}"), ("0", "a", "[]"), ("0", "a", "{"),
        (
            "1", "a",
            #"{"username":"new@fabrikam.example","password":"pw","attributes":{"displayName":"New One","city":"Oslo","#
                + #""postalCode":12345,"ratio":0.5,"tags":["a","b"],"ok":true}}"#
        ),
        ("1", "a", #"{"username":"exists@fabrikam.example"}"#), ("1", "a", #"{"attributes":{"a":{"b":1}}}"#),
        ("1", "a", #"{"username":"n@fabrikam.example","attributes":[1]}"#),
        ("2", "a", #"{"username":"ann@fabrikam.example"}"#), ("2", "a", #"{"username":"missing@fabrikam.example"}"#),
        ("3", "d", #"{"flow":"$flow","password":"pw"}"#), ("3", "d", #"{"flow":"$flow","password":"wrong"}"#),
        ("3", "d", #"{"flow":"$flow","action":"resend_code"}"#), ("3", "d", #"{"flow":"$flow","action":"cancel"}"#),
        ("3", "e", #"{"flow":"$flow","code":"12345678"}"#), ("3", "e", #"{"flow":"$flow","code":"00000000"}"#),
        ("3", "e", #"{"flow":"$flow","action":"resend_code"}"#),
        ("3", "f", #"{"flow":"$flow","action":"request_challenge","method_id":"email-2"}"#),
        ("3", "f", #"{"flow":"$flow","action":"request_challenge","method_id":"nope"}"#),
        ("3", "g", #"{"flow":"$flow","code":"12345678"}"#), ("3", "g", #"{"flow":"$flow","action":"resend_code"}"#),
        ("3", "g", #"{"flow":"$flow","action":"request_challenge"}"#),
        (
            "3", "h",
            #"{"flow":"$flow","action":"register_method","contact":"new@fabrikam.example","method_id":"email-1"}"#
        ),
        ("3", "h", #"{"flow":"$flow","action":"register_method","contact":"pre@fabrikam.example"}"#),
        ("3", "h", #"{"flow":"$flow","action":"register_method","contact":"blocked@fabrikam.example"}"#),
        ("3", "h", #"{"flow":"$flow","action":"register_method","contact":""}"#),
        ("3", "i", #"{"flow":"$flow","code":"12345678"}"#), ("3", "i", #"{"flow":"$flow","action":"resend_code"}"#),
        ("3", "i", #"{"flow":"$flow","action":"register_method","contact":"other@fabrikam.example"}"#),
        ("3", "j", #"{"flow":"$flow","code":"12345678"}"#), ("3", "j", #"{"flow":"$flow","action":"resend_code"}"#),
        ("3", "k", #"{"flow":"$flow","password":"pw"}"#), ("3", "k", #"{"flow":"$flow","password":"weak"}"#),
        ("3", "l", #"{"flow":"$flow","attributes":{"displayName":"N","postalCode":"bad"}}"#),
        ("3", "l", #"{"flow":"$flow","action":"submit_attributes","attributes":{"displayName":"New"}}"#),
        ("3", "m", #"{"flow":"$flow","action":"sign_in","scopes":["api://a/read"]}"#),
        ("3", "m", #"{"flow":"$flow","action":"sign_in","claims":{"access_token":{}}}"#),
        ("3", "n", #"{"flow":"$flow","code":"12345678"}"#),
        ("3", "o", #"{"flow":"$flow","password":"pw"}"#), ("3", "o", #"{"flow":"$flow","password":"weak"}"#),
        ("3", "p", #"{"flow":"$flow","action":"sign_in","scopes":["api://a/read"]}"#),
        ("3", "a", #"{"flow":"f_x","action":"fly"}"#), ("3", "a", #"{"flow":"f_x","code":""}"#),
        ("3", "a", #"{"flow":5}"#), ("3", "a", #"{"flow":"f_x"}"#), ("3", "a", #"{"flow":"f_x","attributes":[1]}"#),
        ("4", "b", #"{"scopes":["api://a/read"]}"#), ("4", "b", #"{"scopes":["api://b/read"],"force_refresh":true}"#),
        ("4", "b", #"{"scopes":["API://A/READ","openid"]}"#),
        ("4", "b", #"{"scopes":["api://a/read"],"claims":{"access_token":{"nbf":{"essential":true}}}}"#),
        ("4", "b", #"{"scopes":[""]}"#), ("4", "b", #"{"scopes":["a b"]}"#), ("4", "b", #"{"scopes":[1]}"#),
        ("4", "b", #"{"force_refresh":"no","scopes":["s"]}"#), ("4", "c", #"{"scopes":["api://b/read"]}"#),
        ("4", "a", #"{"scopes":["api://a/read"]}"#),
        ("5", "b", #"{"url":"http://127.0.0.1:5000/api/todolist","scopes":["api://a/read"]}"#),
        (
            "5", "b",
            #"{"url":"http://127.0.0.1:5000/api/todolist","method":"POST","scopes":["api://a/read"],"#
                + #""body":{"title":"x"}}"#
        ),
        ("5", "b", #"{"url":"http://127.0.0.1:5000/unauthorized","scopes":["api://a/read"]}"#),
        ("5", "b", #"{"url":"http://[::1]:5000/a","scopes":["api://a/read"],"headers":{"X-A":"1"},"body":"text"}"#),
        ("5", "b", #"{"url":"https://x/y","scopes":["s"],"method":"G ET"}"#),
        ("5", "b", #"{"url":"http://evil.example/x","scopes":["s"]}"#),
        ("5", "b", #"{"url":"https://x/y","scopes":["s"],"headers":{"Authorization":"x"}}"#),
        ("5", "b", #"{"url":"ftp://x","scopes":["s"]}"#),
        ("6", "b", "{}"), ("6", "b", #"{"include_id_token":true}"#), ("6", "b", #"{"include_id_token":"yes"}"#),
        ("6", "a", "{}"), ("7", "b", "{}"), ("7", "e", #"{"v":1}"#), ("8", "a", "{}"), ("8", "a", #"{"v":2}"#),
    ]
    let exports = ["sign-in", "sign-up", "reset", "submit", "token", "call-api", "account", "sign-out", "info"]
    for (n, (export, state, doc)) in docs.enumerated() {
        let name = "\(exports[Int(export.utf8.first! - 48)])-\(state)-\(n)"
        s.add("requests", name, Array((export + state).utf8) + Array(doc.utf8))
    }
    // Invalid UTF-8 and a NUL inside, as the C tests send them.
    s.add(
        "requests",
        "sign-in-invalid-utf8",
        Array("0a".utf8) + [0x7b, 0x22, 0x75, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]
    )
    s.add("requests", "sign-in-nul", Array("0a{\"username\":\"a".utf8) + [0] + Array("b\"}".utf8))
}

private func configSeeds(_ s: SeedSet) {
    let docs: [String] = [
        #"{"v":1,"tenant_subdomain":"contoso","client_id":"00001111-aaaa-2222-bbbb-3333cccc4444"}"#,
        #"{"authority":"https://contoso.ciamlogin.com/contoso.onmicrosoft.com","client_id":"abc","#
            + #""challenge_types":["password","redirect","password"],"capabilities":["registration_required","#
            + #""mfa_required"],"redirect_uri":"msauth.com.contoso.app://auth","connect_timeout_ms":200,"#
            + #""request_timeout_ms":5000,"log_level":"verbose","cache":{"type":"memory"},"#
            + #""ca_bundle":"/etc/ssl/certs/ca-certificates.crt"}"#,
        #"{"authority":"http://127.0.0.1:1/t","client_id":"c","connect_timeout_ms":200}"#,
        #"{"authority":"http://[::1]:8080/contoso.onmicrosoft.com/","client_id":"c","log_level":"info"}"#,
        #"{"authority":"HTTPS://Contoso.CIAMlogin.com/","client_id":"abc"}"#,
        #"{"authority":"https://contoso.ciamlogin.com/t?x=1#f","client_id":"abc"}"#,
        #"{"authority":"https://user@contoso.ciamlogin.com/t","client_id":"abc"}"#,
        #"{"authority":"http://contoso.ciamlogin.com/contoso.onmicrosoft.com","client_id":"abc"}"#,
        #"{"authority":"https://contoso.ciamlogin.com","client_id":42}"#,
        #"{"authority":"https://contoso.ciamlogin.com"}"#, #"{"client_id":"abc"}"#,
        #"{"authority":"https://a.b","tenant_subdomain":"a","client_id":"abc"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","ca_bundle":"/nonexistent/ca.pem"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","ca_bundle":"/etc"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","cache":{"path":"/tmp/x.json"}}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","cache":{"type":"disk"}}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","cache":{"path":"relative.json"}}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","challenge_types":["sms"]}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","challenge_types":["oob",3]}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","capabilities":["magic"]}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","connect_timeout_ms":0}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","connect_timeout_ms":1.5}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","request_timeout_ms":600001}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","log_level":"loud"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","redirect_uri":"not a uri"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"a b"}"#, #"{"tenant_subdomain":"-bad-","client_id":"abc"}"#,
        #"{"v":2,"tenant_subdomain":"contoso","client_id":"abc"}"#,
        #"{"tenant_subdomain":"contoso","client_id":["x"]}"#, "[]", "null", "{",
        #"{"tenant_subdomain":"contoso","client_id":"abc","client_capabilities":["cp1","cp1"],"#
            + #""request_headers":{"x-fraud":"a\tb","X-Risk":"low"}}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","request_headers":{"x-ms-id":"1"}}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","request_headers":{"x-a":"1\r\nX: y"}}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","client_capabilities":["cp 1"]}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","cache":{"path":"/tmp/x.json","#
            + #""encryption_key":"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=","migrate_plaintext_cache":true}}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","cache":{"path":"/tmp/x.json","#
            + #""migrate_plaintext_cache":true}}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","proxy":"http://alice:s3cret%40pw@proxy.corp:3128/","#
            + #""no_proxy":".corp, 10.0.0.0/8,[fd00::]/8 *","proxy_ca_bundle":"/etc/ssl/certs/ca-certificates.crt"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","proxy":"","no_proxy":"*"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","proxy":"https://[::1]:8443","#
            + #""ca_bundle":"/etc/ssl/certs/ca-certificates.crt","ca_bundle_system":true}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","proxy":"socks5h://proxy:1080"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","proxy":"ftp://u:p@proxy:21"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","proxy":"http://u:p%zz@proxy:99999/x?y"}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","ca_bundle_system":false}"#,
        #"{"tenant_subdomain":"contoso","client_id":"abc","no_proxy":"a\u0001b","proxy_ca_bundle":"/etc"}"#,
    ]
    for (n, doc) in docs.enumerated() { s.add("config", "config-\(n)", doc) }
    s.add(
        "config",
        "config-invalid-utf8",
        Array(#"{"authority":""#.utf8) + [0xff, 0xfe] + Array(#"","client_id":"x"}"#.utf8)
    )
}

private func jsonSeeds(_ s: SeedSet) {
    let docs: [String] = [
        #"{"s":"héllo \"wörld\" \n\t✓","i":42,"neg":-7,"d":1.5,"t":true,"f":false,"n":null,"#
            + #""a":[1,"two",[3],{"k":"v"}],"o":{"nested":{"deep":1}},"empty":{},"ea":[]}"#,
        #"{"max":9223372036854775807,"min":-9223372036854775808}"#, #"{"ab":"x\u0000y"}"#, #"{"a\u0000b":1}"#,
        "3", "\"x\"", "null", #""\u00e9\ud83d\ude00""#, #""\ud800""#, "-0.0", "1.0", "0.1", "1e-320", "1e308",
        "123456789012345678901234567890", "1e400", "[1,]", "{\"a\":1}}", "\"\\x\"", "[1 2]", "tru", "01", "",
        "{\"a\":1,\"a\":2}", String(repeating: "[", count: 1000) + String(repeating: "]", count: 1000),
        String(repeating: "[", count: 3000),
    ]
    for (n, doc) in docs.enumerated() { s.add("json", "json-\(n)", doc) }
    s.add("json", "json-invalid-utf8", [0x22, 0xff, 0xfe, 0x22])
    s.add("json", "json-nul", [0x7b, 0x00, 0x7d])
}

/// Requests a browser sends to the loopback listener, and /proc/net/tcp tables ("loopback" target).
private func loopbackSeeds(_ s: SeedSet) {
    let requests = [
        "GET /?code=abc&state=xyz HTTP/1.1\r\nHost: localhost:5000\r\nCookie: na_k=v; other=1\r\n\r\n",
        "GET /Zm9vYmFyYmF6cXV4cXV1eGZvb2Jhcg HTTP/1.1\r\nHost: localhost:5000\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: 127.0.0.1:5000\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Content-Length: 20\r\n\r\ncode=abc&state=xyz%20",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "PUT / HTTP/1.1\r\n\r\n", "GET /favicon.ico HTTP/1.0\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
        "GET /\u{0}?a=%ZZ HTTP/1.1\r\nCookie: ;=;==;a\r\n\r\n",
    ]
    for (n, r) in requests.enumerated() { s.add("loopback", "request-\(n)", "0" + r) }
    let table = """
          sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
           0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 100 1
           1: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000  1000        0 101 1
           2: 00000000000000000000000001000000:D431 00000000000000000000000001000000:1F90 01 0:0 0:0 0 65534 0 7 1

        """
    s.add("loopback", "proc-net-tcp", "1" + table)
}

// MARK: - Server and API answers

/// WWW-Authenticate headers: the forms Microsoft documents (Graph's CAE challenge, base64url claims, claims as JSON
/// text), the emulator's own, several challenges, token68, escapes and odd whitespace; and hostile ones.
private func wwwAuthenticateSeeds(_ s: SeedSet) {
    let claims = #"{"access_token":{"nbf":{"essential":true, "value":"1604106651"}}}"#
    let acrs = #"{"access_token":{"acrs":{"essential":true,"value":"c1"},"x":"??>>"}}"#
    let deep = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
    let authorize = "https://login.microsoftonline.com/common/oauth2/authorize"
    let headers: [(String, [UInt8])] = [
        (
            "graph-cae",
            Array(
                (#"Bearer realm="", authorization_uri="\#(authorize)", "#
                    + #"client_id="00000003-0000-0000-c000-000000000000", error="insufficient_claims", "#
                    + #"claims="\#(Base64.encode(Array(claims.utf8)))""#).utf8
            )
        ),
        (
            "base64url",
            Array(
                (#"Bearer authorization_uri="\#(authorize)", error="insufficient_claims", "#
                    + #"claims="\#(Base64.urlEncode(Array(acrs.utf8)))""#).utf8
            )
        ),
        ("claims-text", Array(#"Bearer error=insufficient_claims, claims="{\"access_token\":{\"xms_cc\":{}}}""#.utf8)),
        (
            "emulator",
            Array(#"Bearer realm="ToDoList", error="invalid_token", error_description="The token has expired.""#.utf8)
        ),
        ("several", Array(#"Basic realm="x", Bearer error="invalid_token""#.utf8)),
        (
            "pop-and-bearer",
            Array(
                (#"PoP nonce="n0", claims="\#(Base64.encode(Array(acrs.utf8)))", bEaReR ERROR="INSUFFICIENT_CLAIMS", "#
                    + #"claims=\#(Base64.urlEncode(Array(claims.utf8)))"#).utf8
            )
        ),
        (
            "token68",
            Array("Negotiate YII/+_-.~a==, NTLM, Basic realm=\"r\", Digest qop=\"auth,auth-int\", nonce=x".utf8)
        ),
        (
            "escapes",
            Array(#"Newauth realm="apps", title="Login to \"apps\"", b="back\\slash", c="\q", d="a, b=c""#.utf8)
        ),
        ("whitespace", Array("\tBearer\trealm = r ,, error=\t\"e\" ,Basic  a  =  b,  ".utf8)),
        ("lenient", Array("Bearer, realm=r, Basic ,a=b, Bearer =abc".utf8)),
        ("duplicates", Array(#"Bearer error=a, ERROR=b, Error="c", Bearer error=d"#.utf8)),
        ("empty", []),
        ("commas", Array(" ,, ,\t,".utf8)),
        ("deep-claims", Array(#"Bearer error=insufficient_claims, claims="\#(Base64.encode(Array(deep.utf8)))""#.utf8)),
        ("undecodable-claims", Array(#"Bearer error=insufficient_claims, claims="e30=e30", Basic claims="[1]""#.utf8)),
        ("unterminated", Array(#"Bearer error="insufficient_claims"#.utf8)),
        ("no-name", Array(#"Bearer a=b, ="c""#.utf8)),
        ("param-after-token68", Array(#"Negotiate abc==, realm="x""#.utf8)),
        ("nul", Array(#"Bearer a="x"#.utf8) + [0] + Array(#"y", b=c"#.utf8)),
        ("invalid-utf8", Array(#"Basic realm=""#.utf8) + [0xFF, 0xC3] + Array(#"""#.utf8)),
        ("controls", Array("Bearer a=\"x\u{1}\u{7F}\", b=\"\\\u{0}\"\r\n".utf8)),
        ("utf8", Array(#"Basic realm="Zoë ✓", charset=UTF-8"#.utf8)),
    ]
    for (name, bytes) in headers { s.add("wwwauth", name, bytes) }
}

private func handWrittenAnswerSeeds(_ s: SeedSet) {
    let json = "content-type: application/json; charset=utf-8\n"
    s.add("server", "0-redirect", "0200\n\(json)\n{\"challenge_type\":\"redirect\",\"redirect_reason\":\"x\"}")
    s.add("server", "0-not-json", "0200\ncontent-type: text/html\n\n<html>oops</html>")
    s.add("server", "0-network-then-ok", "0En\n--\n200\n\(json)\n{\"continuation_token\":\"c\"}")
    s.add("server", "0-timeout", "0Et")
    s.add("server", "1-retry-after-nan", "1503\nretry-after: nan\n\n{}")
    s.add("server", "1-retry-after-large", "1429\nretry-after: 11\n\n{\"error\":\"slow_down\"}")
    s.add(
        "server",
        "0-one-answer-for-all",
        "0200\n\(json)\n{\"continuation_token\":\"c\",\"challenge_type\":\"password\",\"token_type\":\"Bearer\","
            + "\"access_token\":\"a\",\"expires_in\":\"3600\",\"refresh_in\":60,\"scope\":\"api://a/read openid\","
            + "\"client_info\":\"eyJ1aWQiOiJ1MSIsInV0aWQiOiJ0MSJ9\",\"refresh_token\":\"r\","
            + "\"token_endpoint\":\"http://127.0.0.1:5000/contoso.onmicrosoft.com/oauth2/v2.0/token\"}"
    )
    s.add("api", "0-text", "0200\ncontent-type: text/plain\n\nhello")
    s.add("api", "0-binary", Array("0200\ncontent-type: application/octet-stream\n\n".utf8) + [0xff, 0x00, 0xfe])
    s.add("api", "0-no-content", "0204\n\n")
    s.add("api", "0-json-invalid", "0200\n\(json)\n{\"a\":")
    s.add("api", "0-json-scalar", "0200\ncontent-type: application/problem+json\n\n42")
    s.add("api", "0-repeated-headers", "0200\nset-cookie: a=1\nset-cookie: b=2\nx-empty:\n\n[]")
    s.add("api", "0-500-html", "0500\ncontent-type: text/html\n\n<h1>error</h1>")
    s.add("api", "0-network", "0En")
    s.add(
        "api",
        "0-401-then-200",
        "0401\nwww-authenticate: Bearer error=\"invalid_token\"\n\n--\n200\n\(json)\n{\"ok\":true}"
    )
    s.add("api", "0-401-other", "0401\nwww-authenticate: Bearer error=\"insufficient_scope\"\n\n")
}

/// The emulator, through its ready file and its control endpoints.
private final class EmulatorControl {
    let base: String
    let authority: String
    let controlToken: String
    let http = CurlHTTPClient()

    init?(readyFile: String) {
        guard let bytes = Files.read(readyFile), let ready = try? JSONValue.parse(bytes),
            let base = ready["base_url"]?.stringValue, let authority = ready["authority"]?.stringValue,
            let controlToken = ready["control_token"]?.stringValue
        else { return nil }
        self.base = base
        self.authority = authority
        self.controlToken = controlToken
    }

    /// The emulator's time.
    func now() -> Double? { control("POST", "clock", ["advance_seconds": 0])?["now"]?.doubleValue }

    /// Moves the emulator's clock to the fuzz clock's start, so the ID tokens it signs (exp, iat) are valid when the
    /// recorded answers are replayed at that time. False when the emulator is already past it.
    func moveClockToFuzzStart() -> Bool {
        guard var now = now() else { return false }
        while now < FuzzClock.start {
            let step = min(FuzzClock.start - now, 50_000_000)
            guard let moved = control("POST", "clock", ["advance_seconds": .double(step)])?["now"]?.doubleValue else {
                return false
            }
            now = moved
        }
        return now - FuzzClock.start < 60
    }

    @discardableResult
    func control(_ method: String, _ path: String, _ body: JSONValue? = nil) -> JSONValue? {
        let request = HTTPRequest(
            method: method,
            url: base + "/_emulator/" + path,
            headers: [("Content-Type", "application/json"), ("X-Emulator-Token", controlToken)],
            body: body?.serializedBytes() ?? []
        )
        guard let r = try? http.send(request), r.status < 300 else { return nil }
        return try? JSONValue.parse(r.body)
    }

    /// The newest one-time code the emulator sent.
    func lastCode() -> String {
        control("GET", "outbox")?["messages"]?.arrayValue?.last?["code"]?.stringValue ?? "00000000"
    }
}

/// A transport to the emulator that keeps what it answers, in the "server" target's form: the emulator's address
/// becomes the scripted server's (so OIDC discovery stays on the fuzzed client's origin) and only the headers the
/// library reads are kept.
private final class Recorder: Transport, Sendable {
    let inner: CurlHTTPClient
    let base: String
    private let state = Mutex<(on: Bool, answers: [Result<HTTPResponse, HTTPError>])>((true, []))

    init(base: String) {
        self.base = base
        var o = HTTPClientOptions()
        o.totalTimeoutMs = 15_000
        inner = CurlHTTPClient(options: o)
    }

    var recording: Bool {
        get { state.withLock { $0.on } }
        set { state.withLock { $0.on = newValue } }
    }

    var answers: [Result<HTTPResponse, HTTPError>] { state.withLock { $0.answers } }

    func send(_ request: HTTPRequest) throws(HTTPError) -> HTTPResponse {
        let result: Result<HTTPResponse, HTTPError>
        do { result = .success(try inner.send(request)) } catch { result = .failure(error) }
        let kept: Set<String> = [
            "content-type", "retry-after", "www-authenticate", "client-request-id", "x-ms-request-id",
        ]
        let canonical = result.map { r in
            HTTPResponse(
                status: r.status,
                headers: r.headers.filter { kept.contains($0.name) }.map { ($0.name, rebase($0.value)) },
                body: Array(rebase(String(decoding: r.body, as: UTF8.self)).utf8)
            )
        }
        state.withLock { if $0.on { $0.answers.append(canonical) } }
        return try result.get()
    }

    private func rebase(_ text: String) -> String { text.replacing(base, with: HappyServer.origin) }
}

private let ann = ("ann@contoso.com", "Demo-Passw0rd!")
private let todoRead = "api://11112222-bbbb-3333-cccc-4444dddd5555/ToDoList.Read"
private let todoWrite = "api://11112222-bbbb-3333-cccc-4444dddd5555/ToDoList.ReadWrite"

private func recordServerSeeds(_ s: SeedSet, _ e: EmulatorControl) {
    func record(
        _ name: String,
        _ scenario: ServerScenario,
        user: String,
        password: String = "Str0ng-Passw0rd!x",
        contact: String = "new.contact@fabrikam.com",
        clientID: String = FuzzClient.clientID,
        prepare: () -> Void = {},
        beforeStep: (() -> Void)? = nil
    ) {
        e.control("POST", "reset")
        let recorder = Recorder(base: e.base)
        var inputs = DriverInputs()
        inputs.username = user
        inputs.password = password
        inputs.contact = contact
        inputs.code = { e.lastCode() }
        inputs.beforeStep = beforeStep
        let client = FuzzClient(
            authority: e.authority,
            transport: recorder,
            clientID: clientID,
            logSink: { _, _, _ in }
        )
        client.clock.advance(to: e.now() ?? FuzzClock.start)
        if scenario == .refresh {
            recorder.recording = false
            let r = client.callAPI(
                na_sign_in,
                ["username": .string(ann.0), "password": .string(ann.1), "scopes": [.string(todoRead)]]
            )
            guard r.status == "signed_in" else { finding("seed \(name): the emulator sign-in failed", r.text) }
            recorder.recording = true
        }
        prepare()
        runScenario(scenario, client, nil, inputs)
        let digit = UInt8(ascii: "0") + UInt8(scenario.rawValue)
        s.add("server", "\(scenario.rawValue)-\(name)", [digit] + Answers.encode(recorder.answers))
    }
    let fault = { (path: String, extra: JSONValue) in
        var o = extra.objectValue ?? [:]
        o["path"] = .string(path)
        e.control("POST", "faults", .object(o))
    }
    record("sign-in-password", .signInWithPassword, user: ann.0, password: ann.1)
    record("sign-in-wrong-password", .signInWithPassword, user: ann.0, password: "Nope-nope-1")
    record("sign-in-mfa", .signInWithPassword, user: "mike@contoso.com", password: "Mfa-Passw0rd!")
    record("sign-in-registration", .signInWithPassword, user: "rita@contoso.com", password: "Reg-Passw0rd!")
    record(
        "sign-in-registration-preverified",
        .signInWithPassword,
        user: "rita@contoso.com",
        password: "Reg-Passw0rd!",
        contact: "rita@contoso.com"
    )
    record(
        "sign-in-registration-blocked",
        .signInWithPassword,
        user: "rita@contoso.com",
        password: "Reg-Passw0rd!",
        contact: "blocked@fabrikam.com"
    )
    record("sign-in-user-not-found", .signInWithPassword, user: "nobody@contoso.com")
    record(
        "sign-in-invalid-client",
        .signInWithPassword,
        user: ann.0,
        password: ann.1,
        clientID: "99990000-ffff-8888-eeee-7777dddd6666"
    )
    record("sign-in-code", .signInWithoutPassword, user: "olivia@contoso.com")
    record("sign-in-password-later", .signInWithoutPassword, user: ann.0, password: ann.1)
    record("sign-up-with-password", .signUpWithPassword, user: "new.one@contoso.com")
    record("sign-up-weak-password", .signUpWithPassword, user: "new.two@contoso.com", password: "password1")
    record("sign-up", .signUp, user: "new.three@contoso.com")
    record("sign-up-existing", .signUp, user: ann.0)
    record("reset-password", .resetPassword, user: ann.0, password: "N3w-Passw0rd!x")
    record("reset-no-password", .resetPassword, user: "olivia@contoso.com")
    record("refresh", .refresh, user: ann.0)
    record(
        "refresh-revoked",
        .refresh,
        user: ann.0,
        prepare: { e.control("POST", "users/revoke", ["email": .string(ann.0)]) }
    )
    record(
        "sign-in-503-retry-after",
        .signInWithPassword,
        user: ann.0,
        password: ann.1,
        prepare: { fault("/oauth2/v2.0/initiate", ["status": 503, "retry_after": 1]) }
    )
    record(
        "sign-in-429",
        .signInWithPassword,
        user: ann.0,
        password: ann.1,
        prepare: { fault("/oauth2/v2.0/token", ["status": 429, "retry_after": 2, "count": 2]) }
    )
    record(
        "sign-in-500-twice",
        .signInWithPassword,
        user: ann.0,
        password: ann.1,
        prepare: { fault("/oauth2/v2.0/challenge", ["status": 500, "count": 2]) }
    )
    record(
        "sign-in-truncated",
        .signInWithPassword,
        user: ann.0,
        password: ann.1,
        prepare: { fault("/oauth2/v2.0/token", ["truncate": true]) }
    )
    record(
        "refresh-discovery-garbage",
        .refresh,
        user: ann.0,
        prepare: { fault("/.well-known/openid-configuration", ["status": 200, "body": "not json"]) }
    )
    // Last: it moves the emulator's clock on, and the answers recorded after it would carry ID tokens that are not
    // valid yet when replayed at the fuzz clock's start.
    var advanced = false
    record(
        "sign-in-flow-expired",
        .signInWithoutPassword,
        user: ann.0,
        password: ann.1,
        beforeStep: {
            if !advanced { e.control("POST", "clock", ["advance_seconds": 700]) }
            advanced = true
        }
    )
}

private func recordAPISeeds(_ s: SeedSet, _ e: EmulatorControl) {
    func record(_ digit: String, _ name: String, _ request: JSONValue, prepare: () -> Void = {}) {
        e.control("POST", "reset")
        let recorder = Recorder(base: e.base)
        let client = FuzzClient(
            authority: e.authority,
            transport: CurlHTTPClient(),
            apiTransport: recorder,
            logSink: { _, _, _ in }
        )
        client.clock.advance(to: e.now() ?? FuzzClock.start)
        let r = client.callAPI(
            na_sign_in,
            [
                "username": .string(ann.0), "password": .string(ann.1),
                "scopes": [.string(todoRead), .string(todoWrite)],
            ]
        )
        guard r.status == "signed_in" else { finding("seed \(name): the emulator sign-in failed", r.text) }
        prepare()
        _ = client.callAPI(na_call_api, request)
        s.add("api", "\(digit)-\(name)", Array(digit.utf8) + Answers.encode(recorder.answers))
    }
    let todo = e.base + "/api/todolist"
    let notes = e.base + "/api/notes"
    let scopes: JSONValue = [.string(todoRead)]
    record("0", "get", ["url": .string(todo), "scopes": scopes])
    record(
        "1",
        "post",
        ["url": .string(todo), "method": "POST", "scopes": [.string(todoWrite)], "body": ["title": "x"]]
    )
    record("2", "put-not-allowed", ["url": .string(todo), "method": "PUT", "scopes": scopes, "body": "text"])
    record("0", "wrong-audience", ["url": .string(notes), "scopes": scopes])
    record(
        "0",
        "expired-then-refreshed",
        ["url": .string(todo), "scopes": scopes],
        prepare: { e.control("POST", "clock", ["advance_seconds": 3700]) }
    )
    record("3", "force-refresh", ["url": .string(todo), "method": "DELETE", "scopes": scopes, "force_refresh": true])
}
