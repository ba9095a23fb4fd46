import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Testing

/// The MSAL iOS tutorial, through the C ABI: sign in, tokens for two APIs, call both, sign out.
@Suite(.serialized) struct TutorialTests {
    @Test func passwordSignInTwoAPIsCacheAndSignOut() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let (todo, notes) = emu.apiScopes
        let urls = emu.apiURLs

        let signIn = c.call(
            na_sign_in,
            ["v": 1, "username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(todo)]]
        )
        #expect(signIn.rc == NA_OK, "\(signIn.doc)")
        #expect(signIn.doc["status"] == "signed_in" && signIn.doc["v"] == 1)
        #expect(signIn.doc["account"]?["username"] == .string(annEmail))
        #expect(
            signIn.doc["account"]?["home_account_id"]?.stringValue?.hasSuffix(".aaaabbbb-0000-cccc-1111-dddd2222eeee")
                == true
        )
        #expect(signIn.doc["token"]?["scopes"]?.arrayValue?.contains(.string(todo)) == true)
        // initiate, challenge, token — and OIDC discovery, once per client, for the ID token's issuer (and, later,
        // the refresh endpoint)
        #expect(
            try emu.requests().map { $0["path"]?.stringValue ?? "" }.filter { !$0.contains("openid-configuration") }
                .count == 3
        )
        #expect(try emu.requests("/.well-known/openid-configuration").count == 1)
        // The whole flow rode one TCP connection (the second one counted is this test's own control request).
        #expect(try emu.control("GET", "counters")["connections"] == 2)

        try emu.clearLog()
        let t1 = c.call(na_get_access_token, ["scopes": [.string(todo)]])
        #expect(t1.rc == NA_OK && t1.doc["from_cache"] == true)
        #expect(t1.doc["access_token"] == signIn.doc["token"]?["access_token"])
        let call1 = c.call(na_call_api, ["url": .string(urls.todo), "scopes": [.string(todo)]])
        #expect(call1.rc == NA_OK && call1.doc["status"] == 200 && call1.doc["body"]?["user"] == .string(annEmail))
        #expect(try emu.requests().map { $0["path"] } == ["/api/todolist"])  // a cached token costs 0 requests

        try emu.clearLog()
        let t2 = c.call(na_get_access_token, ["scopes": [.string(notes)]])
        #expect(t2.rc == NA_OK && t2.doc["from_cache"] == false, "\(t2.doc)")
        #expect(t2.doc["scopes"]?.arrayValue?.contains(.string(notes)) == true)
        // exactly one refresh-token request (+ discovery, once)
        #expect(try emu.requests("/oauth2/v2.0/token").count == 1)
        let call2 = c.call(na_call_api, ["url": .string(urls.notes), "scopes": [.string(notes)]])
        #expect(call2.doc["status"] == 200 && call2.doc["body"]?["api"] == "Notes")

        // Second call of each: from cache, no identity traffic.
        try emu.clearLog()
        #expect(c.call(na_call_api, ["url": .string(urls.todo), "scopes": [.string(todo)]]).doc["status"] == 200)
        #expect(c.call(na_call_api, ["url": .string(urls.notes), "scopes": [.string(notes)]]).doc["status"] == 200)
        #expect(try emu.requests().map { $0["path"] } == ["/api/todolist", "/api/notes"])

        // A third scope set: discovery is cached now, so exactly one request.
        try emu.clearLog()
        let t3 = c.call(
            na_get_access_token,
            ["scopes": ["api://11112222-bbbb-3333-cccc-4444dddd5555/ToDoList.ReadWrite"]]
        )
        #expect(t3.rc == NA_OK && t3.doc["from_cache"] == false)
        #expect(try emu.requests().count == 1)

        let account = c.call(na_get_account, ["include_id_token": true])
        #expect(account.doc["account"]?["claims"]?["preferred_username"] == .string(annEmail))
        #expect(account.doc["account"]?["id_token"]?.stringValue?.hasPrefix("eyJ") == true)
        #expect(c.call(na_get_account, ["v": 1]).doc["account"]?["id_token"] == nil)

        let out = c.call(na_sign_out, ["v": 1])
        #expect(out.rc == NA_OK && out.doc["status"] == "signed_out" && out.doc["was_signed_in"] == true)
        let gone = c.call(na_get_account, ["v": 1])
        #expect(gone.rc == NA_ENOTFOUND && gone.doc.errorCode == "no_account")
        #expect(c.call(na_get_access_token, ["scopes": [.string(todo)]]).doc.errorCode == "no_account")
        #expect(
            c.call(na_call_api, ["url": .string(urls.todo), "scopes": [.string(todo)]]).doc.errorCode == "no_account"
        )
    }

    @Test func passwordLaterAndTLS() throws {
        let emu = try EmulatorProcess(tls: true)
        let c = try ABIClient(emu)
        let start = c.call(na_sign_in, ["username": .string(annEmail)])
        #expect(start.doc["status"] == "password_required" && start.doc["flow_type"] == "sign_in")
        let flow = try #require(start.doc["flow"]?.stringValue)
        let wrong = c.call(na_flow_submit, ["flow": .string(flow), "password": "nope"])
        #expect(
            wrong.rc == NA_EAUTH && wrong.doc.errorCode == "invalid_credentials"
                && wrong.doc["error"]?["flow"] == .string(flow)
        )
        #expect(wrong.doc["error"]?["server"]?["error_codes"] == [50126])
        #expect(
            wrong.doc["error"]?["server"]?["correlation_id"] != nil && wrong.doc["error"]?["server"]?["trace_id"] != nil
        )
        let ok = c.call(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_password", "password": .string(annPassword)]
        )
        #expect(ok.rc == NA_OK && ok.doc["status"] == "signed_in")
        let again = c.call(na_flow_submit, ["flow": .string(flow), "password": .string(annPassword)])
        #expect(again.rc == NA_ESTATE && again.doc.errorCode == "flow_invalid")  // used twice
    }

    @Test func apiRefreshesOnceOn401() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        let todo = emu.apiScopes.todo
        #expect(
            c.call(
                na_sign_in,
                ["username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(todo)]]
            ).rc == NA_OK
        )
        // The emulator's clock moves past the access token's expiry; the library's does not, so its cached token
        // looks fresh and the API answers 401 invalid_token: refresh once, retry once.
        try emu.control("POST", "clock", ["advance_seconds": 3700])
        try emu.clearLog()
        let r = c.call(na_call_api, ["url": .string(emu.apiURLs.todo), "scopes": [.string(todo)]])
        #expect(r.rc == NA_OK && r.doc["status"] == 200, "\(r.doc)")
        #expect(try emu.requests().map { $0["path"]?.stringValue ?? "" }.filter { $0.hasPrefix("/api") }.count == 2)
        #expect(try emu.requests("/oauth2/v2.0/token").count == 1)
        // An API's own error status is a result, not a library error.
        let notFound = c.call(na_call_api, ["url": .string(emu.base + "/api/nowhere"), "scopes": [.string(todo)]])
        #expect(notFound.rc == NA_OK && notFound.doc["status"] == 404)
        let post = c.call(
            na_call_api,
            ["url": .string(emu.apiURLs.todo), "method": "POST", "scopes": [.string(todo)], "body": ["title": "x"]]
        )
        #expect(post.rc == NA_OK && post.doc["status"] == 403)  // a read-only token
    }
}
