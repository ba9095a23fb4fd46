import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Testing

/// Behaving like MSAL against the real service: each case makes the emulator answer the way the real service (or a
/// slightly different one) may, through its controls, and drives the library through the C ABI.
@Suite(.serialized) struct ConformanceTests {
    private func signedIn(
        _ emu: EmulatorProcess,
        _ extra: [String: JSONValue] = [:],
        scopes: [JSONValue]? = nil
    )
        throws -> ABIClient
    {
        let c = try ABIClient(emu, extra)
        let r = c.call(
            na_sign_in,
            [
                "username": .string(annEmail), "password": .string(annPassword),
                "scopes": .array(scopes ?? [.string(emu.apiScopes.todo)]),
            ]
        )
        guard r.doc["status"] == "signed_in" else { throw TestFailure("sign-in failed: \(r.doc)") }
        return c
    }

    // MARK: Token responses

    /// 1. No client_info: the account comes from the ID token (oid/sub and tid), as MSAL Python does.
    @Test func aTokenAnswerWithoutClientInfoStillSignsIn() throws {
        let emu = try EmulatorProcess()
        try emu.control("POST", "token_answers", ["remove": ["client_info"]])
        let c = try ABIClient(emu)
        let r = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        #expect(r.rc == NA_OK && r.doc["status"] == "signed_in", "\(r.doc)")
        let oid = r.doc["account"]?["claims"]?["oid"]?.stringValue ?? "?"
        let tid = r.doc["account"]?["claims"]?["tid"]?.stringValue ?? "?"
        #expect(r.doc["account"]?["home_account_id"] == .string("\(oid).\(tid)"))
        #expect(c.call(na_get_account, [:]).doc["account"]?["username"] == .string(annEmail))
    }

    /// 2. Refresh does not depend on discovery: without it, the authority's own token endpoint is used.
    @Test func refreshWorksWhenDiscoveryIsDown() throws {
        let emu = try EmulatorProcess()
        try emu.control(
            "POST",
            "faults",
            ["path": "/v2.0/.well-known/openid-configuration", "status": 404, "count": 1000]
        )
        let c = try signedIn(emu)
        let t = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])
        #expect(t.rc == NA_OK && t.doc["from_cache"] == false, "\(t.doc)")
        let refresh = try emu.requests("/oauth2/v2.0/token").last
        #expect(refresh?["fields"]?["grant_type"] == "refresh_token")
        #expect(refresh?["path"]?.stringValue?.hasSuffix("/contoso.onmicrosoft.com/oauth2/v2.0/token") == true)
    }

    /// 3. OIDC-only requests get the sign-in's token, never one cached later for another API; fewer scopes granted
    /// than asked is `declined_scopes`, with the token cached under what was granted.
    @Test func oidcOnlyRequestsAndDeclinedScopes() throws {
        let emu = try EmulatorProcess()
        let c = try signedIn(emu)
        let signInToken = c.call(na_get_access_token, [:]).doc["access_token"]
        let notes = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])
        #expect(notes.doc["access_token"] != signInToken)
        for oidc: JSONValue in [["openid"], ["openid", "profile", "offline_access"], ["OpenID"]] {
            let r = c.call(na_get_access_token, ["scopes": oidc])
            #expect(r.doc["access_token"] == signInToken, "\(oidc)")
        }
        // the server grants only part of what was asked
        let readWrite = emu.apiScopes.todo.replacingOccurrences(of: ".Read", with: ".ReadWrite")
        try emu.control("POST", "token_answers", ["set": ["scope": .string(emu.apiScopes.todo + " openid profile")]])
        let declined = c.call(
            na_get_access_token,
            ["scopes": [.string(emu.apiScopes.todo), .string(readWrite)], "force_refresh": true]
        )
        #expect(declined.rc == NA_ESERVER && declined.doc.errorCode == "declined_scopes", "\(declined.doc)")
        #expect(declined.doc["error"]?["declined"] == [.string(readWrite)])
        #expect(declined.doc["error"]?["granted"] == [.string(emu.apiScopes.todo)])
        let granted = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)]])
        #expect(granted.rc == NA_OK && granted.doc["from_cache"] == true)
    }

    /// 4. Lifetimes as numbers or numeric strings; absurd values clamped or refused — never a trap.
    @Test func expiresInInEveryShape() throws {
        let emu = try EmulatorProcess()
        let hour: ClosedRange<Int64> = 3500...3700
        let year: ClosedRange<Int64> = (365 * 86_400 - 120)...(365 * 86_400 + 120)
        let cases: [(JSONValue, ClosedRange<Int64>?)] = [
            ("3600", hour), (3600, hour), (3600.5, hour), (" 3600 ", hour),
            (9_223_372_036_854_775_807, year), (1e300, year), ("99999999999999999999999", year),
            (-5, nil), (0, nil), ("abc", nil), (.null, nil), (["x"], nil),
        ]
        for (value, range) in cases {
            let c = try ABIClient(emu)
            try emu.control("POST", "token_answers", ["set": ["expires_in": value]])
            let r = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
            if let range {
                let lifetime = (r.doc["token"]?["expires_on"]?.intValue ?? 0) - Int64(Date().timeIntervalSince1970)
                #expect(r.rc == NA_OK && range.contains(lifetime), "\(value): \(r.doc)")
            } else {
                #expect(r.rc == NA_ESERVER && r.doc.errorCode == "server", "\(value): \(r.doc)")
                #expect(r.doc["error"]?["message"]?.stringValue?.contains("expires_in") == true)
            }
        }
    }

    // MARK: Keeping the refresh token

    /// 5. Consent required for one scope set leaves the user signed in for the others; only a dead refresh token
    /// (invalid_grant + bad_token) is dropped.
    @Test func consentForOneScopeSetKeepsTheRefreshToken() throws {
        let emu = try EmulatorProcess()
        let c = try signedIn(emu)
        try emu.control(
            "POST",
            "token_errors",
            [
                "scope": .string(emu.apiScopes.notes), "error": "invalid_grant", "suberror": "consent_required",
                "error_codes": [65001],
            ]
        )
        let notes = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])
        #expect(notes.rc == NA_EINTERACTION && notes.doc.errorCode == "interaction_required", "\(notes.doc)")
        let todo = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)], "force_refresh": true])
        #expect(todo.rc == NA_OK && todo.doc["from_cache"] == false, "the refresh token was kept: \(todo.doc)")
        // network errors and 5xx never touch it either
        try emu.control("DELETE", "token_errors")
        try emu.control("POST", "faults", ["path": "/oauth2/v2.0/token", "status": 500, "count": 2])
        #expect(
            c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)], "force_refresh": true]).rc
                == NA_ESERVER
        )
        #expect(
            c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)], "force_refresh": true]).rc == NA_OK
        )
        // a dead token is dropped: the next call needs no server to say so
        try emu.control(
            "POST",
            "token_errors",
            ["error": "invalid_grant", "suberror": "bad_token", "error_codes": [70008], "count": 1]
        )
        let dead = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)], "force_refresh": true])
        #expect(dead.doc.errorCode == "interaction_required")
        try emu.clearLog()
        let after = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])
        let requests = try emu.requests("/token")
        #expect(after.doc.errorCode == "interaction_required" && requests.isEmpty)
    }

    /// 6. Retry rules: a 503 with a short Retry-After (seconds or an HTTP-date) is waited out once; a POST that may
    /// have reached the server is never resent — checked against the emulator's count of presentations.
    @Test func retriesNeverPresentASecretTwice() throws {
        let emu = try EmulatorProcess()
        let c = try signedIn(emu, ["request_timeout_ms": 1500])
        // 503 + Retry-After (HTTP-date, two seconds ahead): waited out, retried once
        let date = httpDate(Date().addingTimeInterval(2))
        try emu.control("POST", "faults", ["path": "/oauth2/v2.0/token", "status": 503, "retry_after": .string(date)])
        let waited = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])
        #expect(waited.rc == NA_OK, "\(waited.doc)")
        // The answer to a refresh is lost — reset mid-answer, or too slow — after the server rotated the token:
        // the call fails and the refresh token was presented exactly once (never resent, by the library or by
        // libcurl on a fresh connection). Each case starts from a fresh sign-in: a lost rotation leaves the cached
        // token stale, and presenting it in a later call is what reuse detection then punishes, by design.
        let faults: [JSONValue] = [
            ["path": "/oauth2/v2.0/token", "stage": "after", "reset_after_bytes": 10],
            ["path": "/oauth2/v2.0/token", "stage": "after", "drop": true],
            ["path": "/oauth2/v2.0/token", "stage": "after", "delay_ms": 3000],
        ]
        for fault in faults {
            let fresh = try signedIn(emu, ["request_timeout_ms": 1500])
            _ = fresh.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])  // the connection is reused
            let before = try emu.control("GET", "counters")
            try emu.control("POST", "faults", fault)
            let lost = fresh.call(
                na_get_access_token,
                ["scopes": [.string(emu.apiScopes.todo)], "force_refresh": true]
            )
            #expect(lost.rc == NA_ENETWORK, "\(fault): \(lost.doc)")
            let after = try emu.control("GET", "counters")
            let presented =
                (after["refresh_token_presentations"]?.intValue ?? 0)
                - (before["refresh_token_presentations"]?.intValue ?? 0)
            #expect(presented == 1, "\(fault) \(lost.doc)")
            #expect(after["refresh_token_presented_twice"] == before["refresh_token_presented_twice"], "\(fault)")
            #expect(after["refresh_token_reuse_detected"] == before["refresh_token_reuse_detected"], "\(fault)")
        }
        // a long Retry-After is throttled, with how long to wait
        try emu.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "status": 429, "retry_after": 60])
        let throttled = c.call(na_sign_in, ["username": .string(annEmail)])
        #expect(throttled.doc.errorCode == "throttled" && throttled.doc["error"]?["retry_after_s"] == 60)
    }

    // MARK: Flows

    /// 7. signup/continue answering 200 without a continuation token: completed, no flow (sign in normally).
    @Test func signUpCompletedWithoutAutomaticSignIn() throws {
        let emu = try EmulatorProcess()
        try emu.control("POST", "settings", ["sign_up_completion_without_token": true])
        let c = try ABIClient(emu)
        let start = c.call(na_sign_up, ["username": "nosignin@contoso.com", "password": "Str0ng-Passw0rd!"])
        let flow = try #require(start.doc["flow"]?.stringValue)
        var r = c.call(
            na_flow_submit,
            ["flow": .string(flow), "code": .string(try emu.lastCode("nosignin@contoso.com"))]
        )
        if r.doc["status"] == "attributes_required" {
            r = c.call(na_flow_submit, ["flow": .string(flow), "attributes": ["displayName": "No Sign-In"]])
        }
        #expect(r.rc == NA_OK && r.doc["status"] == "sign_up_completed" && r.doc["flow"] == nil, "\(r.doc)")
        let signIn = c.call(na_sign_in, ["username": "nosignin@contoso.com", "password": "Str0ng-Passw0rd!"])
        #expect(signIn.doc["status"] == "signed_in")
    }

    /// 8. Continuation-token grants carry the same challenge_type list as the other steps.
    @Test func continuationGrantsSendTheChallengeTypes() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let start = c.call(na_reset_password, ["username": .string(annEmail)])
        let flow = try #require(start.doc["flow"]?.stringValue)
        _ = c.call(na_flow_submit, ["flow": .string(flow), "code": .string(try emu.lastCode(annEmail))])
        let done = c.call(na_flow_submit, ["flow": .string(flow), "password": "N3w-Passw0rd!x"])
        #expect(done.doc["status"] == "password_reset_completed", "\(done.doc)")
        try emu.clearLog()
        #expect(c.call(na_flow_submit, ["flow": .string(flow), "action": "sign_in"]).doc["status"] == "signed_in")
        let grant = try emu.requests("/oauth2/v2.0/token").last
        #expect(grant?["fields"]?["grant_type"] == "continuation_token")
        #expect(grant?["fields"]?["challenge_type"] == "oob password redirect")
        #expect(grant?["fields"]?["username"] == .string(annEmail))
    }

    /// 9. Password-reset polling: failed ends the flow; a policy error rolls back to password_required; cancel stops
    /// the polling.
    @Test func passwordResetPollingOutcomes() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        func toNewPassword() throws -> String {
            let start = c.call(na_reset_password, ["username": .string(annEmail)])
            let flow = try #require(start.doc["flow"]?.stringValue)
            let pw = c.call(na_flow_submit, ["flow": .string(flow), "code": .string(try emu.lastCode(annEmail))])
            #expect(pw.doc["status"] == "password_required", "\(pw.doc)")
            return flow
        }
        try emu.control("POST", "settings", ["reset_poll_result": "failed"])
        var flow = try toNewPassword()
        let failed = c.call(na_flow_submit, ["flow": .string(flow), "password": "N3w-Passw0rd!a"])
        #expect(
            failed.rc == NA_ESERVER && failed.doc.errorCode == "password_reset_failed"
                && failed.doc["error"]?["flow"] == nil
        )
        #expect(
            c.call(na_flow_submit, ["flow": .string(flow), "password": "N3w-Passw0rd!a"]).doc.errorCode
                == "flow_invalid"
        )

        try emu.control(
            "POST",
            "settings",
            ["reset_poll_result": "succeeded", "reset_poll_policy_error": "password_banned"]
        )
        flow = try toNewPassword()
        let policy = c.call(na_flow_submit, ["flow": .string(flow), "password": "N3w-Passw0rd!b"])
        #expect(
            policy.doc.errorCode == "invalid_password" && policy.doc["error"]?["flow"] == .string(flow),
            "\(policy.doc)"
        )
        try emu.control("POST", "settings", ["reset_poll_policy_error": .null])
        let retry = c.call(na_flow_submit, ["flow": .string(flow), "password": "N3w-Passw0rd!c"])
        #expect(retry.doc["status"] == "password_reset_completed", "\(retry.doc)")

        // a long poll, cancelled from another thread
        try emu.control("POST", "settings", ["reset_in_progress_polls": 50, "reset_poll_interval": 1])
        let polled = try toNewPassword()
        try emu.clearLog()  // count this flow's polls only
        let started = Date()
        let result = LockedBox<(Int32, JSONValue)?>(nil)
        let t = Thread { result.set(c.call(na_flow_submit, ["flow": .string(polled), "password": "N3w-Passw0rd!d"])) }
        t.start()
        while try emu.requests("/resetpassword/v1.0/poll_completion").count < 2 { usleep(20_000) }
        #expect(c.call(na_flow_submit, ["flow": .string(polled), "action": "cancel"]).doc["status"] == "cancelled")
        while result.get() == nil { usleep(10_000) }
        #expect(
            result.get()?.1.errorCode == "cancelled" && result.get()?.0 == NA_ESTATE,
            "\(String(describing: result.get()))"
        )
        #expect(Date().timeIntervalSince(started) < 20)
        #expect(c.call(na_flow_submit, ["flow": .string(polled), "action": "sign_in"]).doc.errorCode == "flow_invalid")
    }

    /// 10. A failing token request after register/continue keeps the registration: a retry repeats only the token
    /// request.
    @Test func registrationIsNotRolledBackWhenTheTokenRequestFails() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu, ["capabilities": ["mfa_required", "registration_required"]])
        let start = c.call(na_sign_in, ["username": "rita@contoso.com", "password": "Reg-Passw0rd!"])
        let flow = try #require(start.doc["flow"]?.stringValue)
        _ = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "register_method", "contact": "rita.phone@fabrikam.com"]
        )
        try emu.control("POST", "faults", ["path": "/oauth2/v2.0/token", "status": 500, "count": 2])
        let failed = c.call(
            na_flow_submit,
            ["flow": .string(flow), "code": .string(try emu.lastCode("rita.phone@fabrikam.com"))]
        )
        #expect(failed.rc == NA_ESERVER && failed.doc["error"]?["flow"] == .string(flow), "\(failed.doc)")
        try emu.clearLog()
        let retry = c.call(na_flow_submit, ["flow": .string(flow), "action": "sign_in"])
        #expect(retry.doc["status"] == "signed_in", "\(retry.doc)")
        #expect(try emu.requests("/register/v1.0/continue").isEmpty)
        #expect(try emu.requests("/oauth2/v2.0/token").count == 1)
    }

    /// 11. Errors are mapped from error, suberror and error_codes — never from the description.
    @Test func errorMappingReadsFieldsOnly() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let cases: [(JSONValue, String)] = [
            (["error": "unsupported_challenge_type", "error_description": "use the browser"], "server"),
            (["error": "invalid_request", "error_description": "The continuation_token is invalid"], "server"),
            (["error": "invalid_request", "error_codes": [55200]], "flow_invalid"),
            (["error": "expired_token", "error_codes": [552003]], "flow_expired"),
            (["error": "something_new", "suberror": "brand_new"], "server"),
        ]
        for (body, code) in cases {
            try emu.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "status": 400, "body": body])
            let r = c.call(na_sign_in, ["username": .string(annEmail)])
            #expect(r.doc.errorCode == code, "\(body) → \(r.doc)")
            if code == "server" { #expect(r.doc["error"]?["server"]?["error"] == body["error"]) }
        }
    }

    /// 12. One client-request-id per flow, the app's own when it passes one; a fresh one per independent call.
    @Test func oneCorrelationIDPerFlow() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let seen = CorrelationLog()
        _ = na_client_set_log_callback(
            c.handle,
            4,
            { _, _, correlation, user in
                guard let user, let correlation else { return }
                Unmanaged<CorrelationLog>.fromOpaque(user).takeUnretainedValue().add(String(cString: correlation))
            },
            Unmanaged.passUnretained(seen).toOpaque()
        )
        defer { _ = na_client_set_log_callback(c.handle, 0, nil, nil) }
        let mine = "0f8fad5b-d9cb-469f-a165-70867728950e"
        let start = c.call(na_sign_in, ["username": "olivia@contoso.com", "correlation_id": .string(mine)])
        let flow = try #require(start.doc["flow"]?.stringValue)
        let bad = c.call(na_flow_submit, ["flow": .string(flow), "code": "00000000"])
        #expect(bad.doc["error"]?["server"]?["correlation_id"] == .string(mine))
        _ = c.call(na_flow_submit, ["flow": .string(flow), "code": .string(try emu.lastCode("olivia@contoso.com"))])
        let ids = Set(try emu.requests().compactMap { $0["client_request_id"]?.stringValue })
        #expect(ids == [mine])
        try emu.clearLog()
        _ = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.notes)]])
        _ = c.call(na_get_access_token, ["scopes": [.string(emu.apiScopes.todo)], "force_refresh": true])
        let fresh = try emu.requests("/oauth2/v2.0/token").compactMap { $0["client_request_id"]?.stringValue }
        #expect(fresh.count == 2 && Set(fresh).count == 2 && !fresh.contains(mine))
        #expect(
            c.call(na_sign_in, ["username": .string(annEmail), "correlation_id": "not-a-uuid"]).doc["error"]?["field"]
                == "correlation_id"
        )
        #expect(seen.all.contains(mine))
    }

    /// 13. na_get_access_token without scopes answers the sign-in's token.
    @Test func aTokenWithoutScopesIsTheSignInsToken() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let s = c.call(
            na_sign_in,
            ["username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(emu.apiScopes.todo)]]
        )
        let r = c.call(na_get_access_token, [:])
        #expect(
            r.rc == NA_OK && r.doc["access_token"] == s.doc["token"]?["access_token"] && r.doc["from_cache"] == true
        )
        #expect(c.call(na_get_access_token, ["scopes": []]).doc["access_token"] == s.doc["token"]?["access_token"])
        // with no API scopes at sign-in: the OIDC-scoped token of the sign-in
        let d = try ABIClient(emu)
        let plain = d.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        #expect(d.call(na_get_access_token, [:]).doc["access_token"] == plain.doc["token"]?["access_token"])
    }
}

/// An HTTP-date (IMF-fixdate) for `date`.
func httpDate(_ date: Date) -> String {
    let f = DateFormatter()
    f.locale = Locale(identifier: "en_US_POSIX")
    f.timeZone = TimeZone(identifier: "GMT")
    f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return f.string(from: date)
}

final class CorrelationLog: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: Set<String> = []
    func add(_ id: String) { lock.withLock { _ = ids.insert(id) } }
    var all: Set<String> { lock.withLock { ids } }
}

final class LockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T
    init(_ v: T) { value = v }
    func get() -> T { lock.withLock { value } }
    func set(_ v: T) { lock.withLock { value = v } }
}
