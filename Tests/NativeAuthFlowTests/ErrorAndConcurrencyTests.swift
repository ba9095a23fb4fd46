import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Synchronization
import Testing

@Suite(.serialized) struct ErrorCodeTests {
    /// Each stable error code, reached from a real server answer (or the transport), with the server's details.
    @Test func everyErrorCodeFromTheServer() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        func expectError(
            _ r: (rc: Int32, doc: JSONValue),
            _ code: String,
            _ rc: Int32,
            serverDetails: Bool = true,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            #expect(r.rc == rc && r.doc.errorCode == code, "\(r.doc)", sourceLocation: sourceLocation)
            #expect(
                r.doc["v"] == 1 && r.doc["error"]?["message"]?.stringValue?.isEmpty == false,
                sourceLocation: sourceLocation
            )
            if serverDetails {
                #expect(
                    r.doc["error"]?["server"]?["correlation_id"] != nil
                        && r.doc["error"]?["server"]?["trace_id"] != nil,
                    "\(r.doc)",
                    sourceLocation: sourceLocation
                )
            }
        }
        // client-side validation: no network call
        try emu.clearLog()
        expectError(c.call(na_sign_in, ["username": ""]), "invalid_username", NA_EAUTH, serverDetails: false)
        expectError(
            c.call(na_sign_in, ["username": "a@b.c", "password": ""]),
            "invalid_password",
            NA_EAUTH,
            serverDetails: false
        )
        expectError(c.call(na_sign_in, ["username": 5]), "invalid_argument", NA_EINVAL, serverDetails: false)
        #expect(try emu.requests().isEmpty)

        expectError(c.call(na_sign_in, ["username": "not-an-email"]), "invalid_username", NA_EAUTH)
        expectError(c.call(na_sign_in, ["username": "nobody@contoso.com"]), "user_not_found", NA_EAUTH)
        expectError(
            c.call(na_sign_in, ["username": .string(annEmail), "password": "wrong"]),
            "invalid_credentials",
            NA_EAUTH
        )
        let otp = c.call(na_sign_in, ["username": "olivia@contoso.com"])
        expectError(
            c.call(na_flow_submit, ["flow": otp.doc["flow"] ?? .null, "code": "00000000"]),
            "invalid_code",
            NA_EAUTH
        )
        expectError(
            c.call(na_sign_up, ["username": "z@contoso.com", "password": "weakweak"]),
            "invalid_password",
            NA_EAUTH
        )
        expectError(c.call(na_sign_up, ["username": .string(annEmail)]), "user_already_exists", NA_EAUTH)
        expectError(
            c.call(na_sign_up, ["username": "z@contoso.com", "attributes": ["postalCode": "x"]]),
            "attributes_invalid",
            NA_EAUTH
        )
        expectError(c.call(na_reset_password, ["username": "olivia@contoso.com"]), "user_has_no_password", NA_EAUTH)
        expectError(
            try ABIClient(emu, ["challenge_types": ["oob"]]).call(na_sign_in, ["username": .string(annEmail)]),
            "browser_required",
            NA_EINTERACTION,
            serverDetails: false
        )
        expectError(
            try ABIClient(emu, ["client_id": .string(emu.ready["confidential_client_id"]?.stringValue ?? "")])
                .call(na_sign_in, ["username": .string(annEmail)]),
            "invalid_client",
            NA_EINVAL
        )
        #expect(c.call(na_get_account, ["v": 1]).doc.errorCode == "no_account")

        // token errors
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        expectError(
            c.call(na_get_access_token, ["scopes": ["api://99999999-0000-0000-0000-000000000000/X"]]),
            "invalid_scope",
            NA_EINVAL
        )
        try emu.control("POST", "users/revoke", ["email": .string(annEmail)])
        expectError(
            c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]]),
            "interaction_required",
            NA_EINTERACTION
        )
        // the dead refresh token is not presented again
        try emu.clearLog()
        expectError(
            c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]]),
            "interaction_required",
            NA_EINTERACTION,
            serverDetails: false
        )
        #expect(try emu.requests().isEmpty)
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        try emu.control("POST", "clock", ["advance_seconds": 86_401])
        expectError(
            c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]]),
            "refresh_token_expired",
            NA_EINTERACTION
        )
    }

    @Test func transportAndServerFailures() throws {
        let emu = try EmulatorProcess()
        // 5xx: one retry, then `server`
        let c = try ABIClient(emu)
        try emu.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "status": 500, "count": 2])
        let five = c.call(na_sign_in, ["username": .string(annEmail)])
        #expect(
            five.rc == NA_ESERVER && five.doc.errorCode == "server"
                && five.doc["error"]?["server"]?["http_status"] == 500
        )
        #expect(try emu.requests("/oauth2/v2.0/initiate").count == 2)
        // 503 with Retry-After: honoured, and the retry succeeds
        try emu.clearLog()
        try emu.control(
            "POST",
            "faults",
            ["path": "/oauth2/v2.0/initiate", "status": 503, "retry_after": 1, "count": 1]
        )
        let started = Date()
        #expect(c.call(na_sign_in, ["username": .string(annEmail)]).doc["status"] == "password_required")
        #expect(Date().timeIntervalSince(started) >= 1)
        #expect(try emu.requests("/oauth2/v2.0/initiate").count == 2)
        // 429 with a Retry-After longer than retry_after_max_s: reported at once as throttled, with the header's value
        try emu.control(
            "POST",
            "faults",
            ["path": "/oauth2/v2.0/initiate", "status": 429, "retry_after": 120, "count": 1]
        )
        let throttled = c.call(na_sign_in, ["username": .string(annEmail)])
        #expect(throttled.rc == NA_ESERVER && throttled.doc.errorCode == "throttled")
        #expect(throttled.doc["error"]?["retry_after_s"] == 120)
        #expect(throttled.doc["error"]?["server"]?["retry_after"] == "120")
        // timeout
        let slow = try ABIClient(emu, ["request_timeout_ms": 300])
        try emu.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "delay_ms": 3000, "count": 1])
        let t = slow.call(na_sign_in, ["username": .string(annEmail)])
        #expect(t.rc == NA_ENETWORK && t.doc.errorCode == "timeout")
        // network: nothing listening
        let dead = try ABIClient(emu, ["authority": "http://127.0.0.1:1/contoso.onmicrosoft.com"])
        let n = dead.call(na_sign_in, ["username": .string(annEmail)])
        #expect(n.rc == NA_ENETWORK && n.doc.errorCode == "network")
        // TLS: an https emulator whose CA the client does not trust
        let tlsEmu = try EmulatorProcess(tls: true)
        let untrusted = try ABIClient(tlsEmu, ["ca_bundle": "/etc/ssl/certs/ca-certificates.crt"])
        let tls = untrusted.call(na_sign_in, ["username": .string(annEmail)])
        #expect(tls.rc == NA_ENETWORK && tls.doc.errorCode == "tls")
        tlsEmu.stop()
    }
}

@Suite(.serialized) struct ConcurrencyTests {
    /// 32 threads ask for the same missing token: one refresh, everyone gets it, the session survives reuse detection.
    @Test func singleFlightRefresh() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        _ = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]])  // discovery is cached from here on
        try emu.clearLog()
        let notes = emu.apiScopes.notes
        let results = Mutex<[JSONValue]>([])
        let threads = 32
        let done = Mutex(0)
        for _ in 0..<threads {
            Thread.detachNewThread {
                let r = c.call(na_get_access_token, ["scopes": [.string(notes)]])
                results.withLock { $0.append(r.doc) }
                done.withLock { $0 += 1 }
            }
        }
        while done.withLock({ $0 }) < threads { usleep(5_000) }  // wait for the threads, not for time
        let docs = results.withLock { $0 }
        #expect(docs.count == threads)
        #expect(docs.allSatisfy { $0["access_token"] != nil }, "\(docs.first { $0["access_token"] == nil } ?? .null)")
        #expect(Set(docs.compactMap { $0["access_token"]?.stringValue }).count == 1)
        #expect(try emu.requests("/oauth2/v2.0/token").count == 1)
        #expect(try emu.control("GET", "counters")["refresh_token_reuse_detected"] == nil)
        // The rotated refresh token is the one in the cache: the session is still valid.
        let after = c.call(
            na_get_access_token,
            ["scopes": ["api://22223333-cccc-4444-dddd-5555eeee6666/Notes.ReadWrite"]]
        )
        #expect(after.rc == NA_OK && after.doc["from_cache"] == false, "\(after.doc)")
    }

    /// Different scope sets at once must not present one refresh token twice (reuse detection would revoke it).
    @Test func mixedScopeSetsNeverReuseARefreshToken() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
        let scopes = [
            "api://11112222-bbbb-3333-cccc-4444dddd5555/ToDoList.Read",
            "api://22223333-cccc-4444-dddd-5555eeee6666/Notes.Read",
            "api://11112222-bbbb-3333-cccc-4444dddd5555/ToDoList.ReadWrite",
            "api://22223333-cccc-4444-dddd-5555eeee6666/Notes.ReadWrite",
        ]
        let failures = Mutex(0)
        let done = Mutex(0)
        for i in 0..<24 {
            Thread.detachNewThread {
                let r = c.call(
                    na_get_access_token,
                    ["scopes": [.string(scopes[i % scopes.count])], "force_refresh": .bool(i % 3 == 0)]
                )
                if r.rc != NA_OK { failures.withLock { $0 += 1 } }
                done.withLock { $0 += 1 }
            }
        }
        while done.withLock({ $0 }) < 24 { usleep(5_000) }
        #expect(failures.withLock { $0 } == 0)
        #expect(try emu.control("GET", "counters")["refresh_token_reuse_detected"] == nil)
    }

    /// A client shared by threads while another thread frees it: every call answers, nothing crashes.
    @Test func freeWhileInUse() throws {
        let emu = try EmulatorProcess()
        var h: OpaquePointer? = nil
        let config: JSONValue = ["authority": .string(emu.authority), "client_id": .string(emu.clientID)]
        #expect(na_client_new(config.serialized(), &h, nil) == NA_OK)
        let handle = UnsafeSendable(h)
        let done = Mutex(0)
        let started = Mutex(0)
        for _ in 0..<8 {
            Thread.detachNewThread {
                started.withLock { $0 += 1 }
                for _ in 0..<5 {
                    var out: UnsafeMutablePointer<CChar>? = nil
                    let rc = na_sign_in(handle.value, #"{"username":"olivia@contoso.com"}"#, &out)
                    #expect(rc == NA_OK || rc == NA_EINVAL)
                    #expect(out != nil)
                    na_string_free(out)
                }
                done.withLock { $0 += 1 }
            }
        }
        while started.withLock({ $0 }) < 8 { usleep(1_000) }
        na_client_free(h)
        while done.withLock({ $0 }) < 8 { usleep(5_000) }
    }
}

struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ v: T) { value = v }
}
