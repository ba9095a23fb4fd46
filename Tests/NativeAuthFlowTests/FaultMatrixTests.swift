import Foundation
import NativeAuthCABI
import NativeAuthJSON
import NativeAuthTestSupport
import Testing

/// The fault matrix: every operation that talks to the server × every way the server (or the network) can fail.
/// Each case must answer a documented error code within the configured timeout, leave the open flow and the cache
/// as they were (the same operation, retried once the fault is gone, succeeds), and leak nothing (no password, code
/// or token in the error document or in any log line at verbose level). A new operation or fault is one row.
@Suite struct FaultMatrixTests {
    enum Kind: Sendable { case identity, discovery, api }

    /// What a case sees: the emulator, a client reaching it through a forwarder that can refuse connections, and
    /// a source of unique names.
    final class Context: @unchecked Sendable {
        let emu: EmulatorProcess
        let forwarder: TCPForwarder
        let client: ABIClient
        var serial = 0
        init(_ emu: EmulatorProcess, _ forwarder: TCPForwarder, _ client: ABIClient) {
            self.emu = emu
            self.forwarder = forwarder
            self.client = client
        }
        func unique(_ prefix: String) -> String {
            serial += 1
            return "\(prefix)\(serial)-\(UInt32.random(in: 0...UInt32.max))"
        }
        func call(_ op: ABIClient.Op, _ doc: JSONValue) -> (rc: Int32, doc: JSONValue) { client.call(op, doc) }
        /// A new user who must register a strong-auth method (a registered one would be asked for MFA instead).
        func userToRegister() throws -> String {
            let user = unique("reg") + "@contoso.com"
            try emu.control(
                "POST",
                "users",
                ["email": .string(user), "password": "Reg-Passw0rd!", "requires_registration": true]
            )
            return user
        }
        func flow(_ r: (rc: Int32, doc: JSONValue)) throws -> String {
            guard let f = r.doc["flow"]?.stringValue else { throw TestFailure("no flow: \(r.doc)") }
            return f
        }
    }

    struct Operation: Sendable, CustomTestStringConvertible {
        let name: String
        let path: String
        let kind: Kind
        /// Sets the scene and returns the call under test (which may be repeated).
        let prepare: @Sendable (Context) throws -> @Sendable () -> (rc: Int32, doc: JSONValue)
        var testDescription: String { name }
    }

    static let ann = (annEmail, annPassword)
    static let resetUser = "reset-me@contoso.com"

    static let operations: [Operation] = [
        Operation(name: "sign-in initiate", path: "/oauth2/v2.0/initiate", kind: .identity) { ctx in
            { ctx.call(na_sign_in, ["username": .string(ann.0), "password": .string(ann.1)]) }
        },
        Operation(name: "sign-in challenge", path: "/oauth2/v2.0/challenge", kind: .identity) { ctx in
            { ctx.call(na_sign_in, ["username": .string(ann.0), "password": .string(ann.1)]) }
        },
        Operation(name: "token (password)", path: "/oauth2/v2.0/token", kind: .identity) { ctx in
            { ctx.call(na_sign_in, ["username": .string(ann.0), "password": .string(ann.1)]) }
        },
        Operation(name: "token (code)", path: "/oauth2/v2.0/token", kind: .identity) { ctx in
            let flow = try ctx.flow(ctx.call(na_sign_in, ["username": "olivia@contoso.com"]))
            let code = try ctx.emu.lastCode("olivia@contoso.com")
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "code": .string(code)]) }
        },
        Operation(name: "challenge (resend)", path: "/oauth2/v2.0/challenge", kind: .identity) { ctx in
            let flow = try ctx.flow(ctx.call(na_sign_in, ["username": "olivia@contoso.com"]))
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "action": "resend_code"]) }
        },
        Operation(name: "MFA introspect", path: "/oauth2/v2.0/introspect", kind: .identity) { ctx in
            { ctx.call(na_sign_in, ["username": "mike@contoso.com", "password": "Mfa-Passw0rd!"]) }
        },
        Operation(name: "MFA challenge", path: "/oauth2/v2.0/challenge", kind: .identity) { ctx in
            let flow = try ctx.flow(
                ctx.call(na_sign_in, ["username": "mike@contoso.com", "password": "Mfa-Passw0rd!"])
            )
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "action": "request_challenge"]) }
        },
        Operation(name: "MFA token", path: "/oauth2/v2.0/token", kind: .identity) { ctx in
            let flow = try ctx.flow(
                ctx.call(na_sign_in, ["username": "mike@contoso.com", "password": "Mfa-Passw0rd!"])
            )
            _ = ctx.call(na_flow_submit, ["flow": .string(flow), "action": "request_challenge"])
            let code = try ctx.emu.lastCode("mike.backup@fabrikam.com")
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "code": .string(code)]) }
        },
        Operation(name: "register introspect", path: "/register/v1.0/introspect", kind: .identity) { ctx in
            { ctx.call(na_sign_in, ["username": "rita@contoso.com", "password": "Reg-Passw0rd!"]) }
        },
        Operation(name: "register challenge", path: "/register/v1.0/challenge", kind: .identity) { ctx in
            let flow = try ctx.flow(
                ctx.call(na_sign_in, ["username": "rita@contoso.com", "password": "Reg-Passw0rd!"])
            )
            let contact = ctx.unique("rita.phone") + "@fabrikam.com"
            return {
                ctx.call(
                    na_flow_submit,
                    ["flow": .string(flow), "action": "register_method", "contact": .string(contact)]
                )
            }
        },
        Operation(name: "register continue", path: "/register/v1.0/continue", kind: .identity) { ctx in
            let user = try ctx.userToRegister()
            let flow = try ctx.flow(ctx.call(na_sign_in, ["username": .string(user), "password": "Reg-Passw0rd!"]))
            let contact = ctx.unique("rita.phone") + "@fabrikam.com"
            _ = ctx.call(
                na_flow_submit,
                ["flow": .string(flow), "action": "register_method", "contact": .string(contact)]
            )
            let code = try ctx.emu.lastCode(contact)
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "code": .string(code)]) }
        },
        Operation(name: "sign-up start", path: "/signup/v1.0/start", kind: .identity) { ctx in
            let user = ctx.unique("new") + "@contoso.com"
            return { ctx.call(na_sign_up, ["username": .string(user), "password": "Str0ng-Passw0rd!"]) }
        },
        Operation(name: "sign-up challenge", path: "/signup/v1.0/challenge", kind: .identity) { ctx in
            let user = ctx.unique("new") + "@contoso.com"
            return { ctx.call(na_sign_up, ["username": .string(user), "password": "Str0ng-Passw0rd!"]) }
        },
        Operation(name: "sign-up continue", path: "/signup/v1.0/continue", kind: .identity) { ctx in
            let user = ctx.unique("new") + "@contoso.com"
            let flow = try ctx.flow(ctx.call(na_sign_up, ["username": .string(user), "password": "Str0ng-Passw0rd!"]))
            let code = try ctx.emu.lastCode(user)
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "code": .string(code)]) }
        },
        Operation(name: "reset start", path: "/resetpassword/v1.0/start", kind: .identity) { ctx in
            { ctx.call(na_reset_password, ["username": .string(resetUser)]) }
        },
        Operation(name: "reset challenge", path: "/resetpassword/v1.0/challenge", kind: .identity) { ctx in
            { ctx.call(na_reset_password, ["username": .string(resetUser)]) }
        },
        Operation(name: "reset continue", path: "/resetpassword/v1.0/continue", kind: .identity) { ctx in
            let flow = try ctx.flow(ctx.call(na_reset_password, ["username": .string(resetUser)]))
            let code = try ctx.emu.lastCode(resetUser)
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "code": .string(code)]) }
        },
        Operation(name: "reset submit", path: "/resetpassword/v1.0/submit", kind: .identity) { ctx in
            let flow = try ctx.flow(ctx.call(na_reset_password, ["username": .string(resetUser)]))
            _ = ctx.call(na_flow_submit, ["flow": .string(flow), "code": .string(try ctx.emu.lastCode(resetUser))])
            let password = "N3w-" + ctx.unique("Pw") + "!x"
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "password": .string(password)]) }
        },
        Operation(name: "reset poll", path: "/resetpassword/v1.0/poll_completion", kind: .identity) { ctx in
            let flow = try ctx.flow(ctx.call(na_reset_password, ["username": .string(resetUser)]))
            _ = ctx.call(na_flow_submit, ["flow": .string(flow), "code": .string(try ctx.emu.lastCode(resetUser))])
            let password = "N3w-" + ctx.unique("Pw") + "!x"
            return { ctx.call(na_flow_submit, ["flow": .string(flow), "password": .string(password)]) }
        },
        Operation(name: "refresh", path: "/oauth2/v2.0/token", kind: .identity) { ctx in
            _ = ctx.call(
                na_sign_in,
                ["username": .string(ann.0), "password": .string(ann.1), "scopes": [.string(ctx.emu.apiScopes.todo)]]
            )
            return {
                ctx.call(na_get_access_token, ["scopes": [.string(ctx.emu.apiScopes.notes)], "force_refresh": true])
            }
        },
        Operation(name: "discovery", path: "/v2.0/.well-known/openid-configuration", kind: .discovery) { ctx in
            { ctx.call(na_sign_in, ["username": .string(ann.0), "password": .string(ann.1)]) }
        },
        Operation(name: "call API", path: "/api/todolist", kind: .api) { ctx in
            _ = ctx.call(
                na_sign_in,
                ["username": .string(ann.0), "password": .string(ann.1), "scopes": [.string(ctx.emu.apiScopes.todo)]]
            )
            let url = ctx.emu.apiURLs.todo.replacingOccurrences(
                of: ctx.emu.base,
                with: "http://127.0.0.1:\(ctx.forwarder.port)"
            )
            return { ctx.call(na_call_api, ["url": .string(url), "scopes": [.string(ctx.emu.apiScopes.todo)]]) }
        },
    ]

    /// A fault: the emulator control that causes it (nil: the forwarder refuses connections), and what each kind
    /// of operation must answer — an error code, or (for API calls, whose HTTP errors are results) an HTTP status.
    struct Fault: Sendable {
        let name: String
        let control: JSONValue?
        let identity: String
        let api: Outcome
        enum Outcome: Sendable, Equatable {
            case error(String)
            case status(Int64)
        }
    }

    static let validAnswer: JSONValue = ["continuation_token": "ct-from-a-fault"]

    static let faults: [Fault] = [
        Fault(name: "connection refused", control: nil, identity: "network", api: .error("network")),
        Fault(
            name: "reset mid-answer",
            control: ["status": 200, "body": validAnswer, "reset_after_bytes": 5],
            identity: "network",
            api: .error("network")
        ),
        Fault(
            name: "timeout",
            control: ["delay_ms": 2500, "status": 500],
            identity: "timeout",
            api: .error("timeout")
        ),
        Fault(name: "500", control: ["status": 500, "count": 2], identity: "server", api: .status(500)),
        Fault(
            name: "503 with Retry-After",
            control: ["status": 503, "retry_after": 1, "count": 2],
            identity: "throttled",
            api: .status(503)
        ),
        Fault(name: "429", control: ["status": 429], identity: "server", api: .status(429)),
        Fault(
            name: "truncated JSON",
            control: ["status": 200, "body": "{\"continuation_token\": \"abc", "content_type": "application/json"],
            identity: "server",
            api: .status(200)
        ),
        Fault(
            name: "HTML instead of JSON",
            control: ["status": 200, "html": true],
            identity: "server",
            api: .status(200)
        ),
        Fault(
            name: "wrong content type",
            control: ["status": 200, "body": validAnswer, "content_type": "text/plain"],
            identity: "server",
            api: .status(200)
        ),
        Fault(
            name: "2 MiB answer",
            control: ["status": 200, "body_bytes": 2_097_152],
            identity: "server",
            api: .status(200)
        ),
        Fault(
            name: "slow trickle",
            control: ["status": 200, "body": validAnswer, "trickle_ms": 150, "chunk_bytes": 1],
            identity: "timeout",
            api: .error("timeout")
        ),
    ]

    static let timeoutMs = 700

    @Test(arguments: operations)
    func everyFault(_ op: Operation) throws {
        let emu = try EmulatorProcess()
        guard let port = URL(string: emu.base)?.port else { throw TestFailure("no port in \(emu.base)") }
        let forwarder = try TCPForwarder(to: UInt16(port))
        let base = "http://127.0.0.1:\(forwarder.port)"
        try emu.control("POST", "settings", ["public_base_url": .string(base)])
        try emu.control("POST", "users", ["email": .string(Self.resetUser), "password": "Reset-Passw0rd!1"])
        let authority = emu.authority.replacingOccurrences(of: emu.base, with: base)
        for fault in Self.faults {
            let client = try ABIClient(
                emu,
                [
                    "authority": .string(authority), "request_timeout_ms": .int(Int64(Self.timeoutMs)),
                    "connect_timeout_ms": .int(Int64(Self.timeoutMs)), "retry_after_max_s": 2,
                ]
            )
            client.enableLogging()
            let ctx = Context(emu, forwarder, client)
            let act = try op.prepare(ctx)
            let beforeToken = client.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]]).doc
            if let control = fault.control {
                var c = control.objectValue ?? [:]
                c["path"] = .string(op.path)
                try emu.control("POST", "faults", .object(c))
            } else {
                forwarder.refuse()
            }
            let started = Date()
            let r = act()
            let elapsed = Date().timeIntervalSince(started)
            try emu.control("DELETE", "faults")
            if fault.control == nil { try forwarder.resume() }
            let label = "\(op.name) × \(fault.name)"

            // 1. a documented answer, in time
            switch op.kind {
            case .identity:
                #expect(r.doc.errorCode == fault.identity, "\(label): \(r.doc)")
            case .discovery:
                // discovery is optional: every fault but a refused connection falls back and signs in
                let expected = fault.control == nil ? "network" : nil
                #expect(r.doc.errorCode == expected, "\(label): \(r.doc)")
            case .api:
                switch fault.api {
                case .error(let code): #expect(r.doc.errorCode == code, "\(label): \(r.doc)")
                case .status(let s): #expect(r.rc == NA_OK && r.doc["status"]?.intValue == s, "\(label): \(r.doc)")
                }
            }
            #expect(elapsed < Double(Self.timeoutMs) / 1000 * 2 + 4, "\(label): took \(elapsed) s")

            // 2. nothing leaked
            let secrets =
                [annPassword, "Mfa-Passw0rd!", "Reg-Passw0rd!", "Str0ng-Passw0rd!", "Bearer ", "eyJ"]
                + (try emu.allCodes())
            let seen = (r.rc == NA_OK ? [] : [r.doc.serialized()]) + client.logs.all
            for s in secrets where seen.contains(where: { $0.contains(s) }) {
                Issue.record("\(label): a secret (\(s.prefix(3))…) leaked into the error or the logs")
            }

            // 3. the flow and the cache are as they were: the same call, repeated without the fault, succeeds
            let again = act()
            #expect(again.rc == NA_OK, "\(label): the retry failed: \(again.doc)")
            if beforeToken["access_token"] != nil, op.kind != .discovery {
                let after = client.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]]).doc
                #expect(after["access_token"] == beforeToken["access_token"], "\(label): the cache changed")
            }
        }
    }
}
