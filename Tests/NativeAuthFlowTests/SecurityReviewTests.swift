import Foundation
import NativeAuthCABI
import NativeAuthHTTP
import NativeAuthJSON
import Testing

/// Findings of the security review that need a server: each drives the library through the C ABI against the
/// emulator, made to misbehave.
@Suite(.serialized) struct SecurityReviewTests {
    /// Finding 1: a server body that cannot be parsed is described, never quoted.
    @Test func unparsableServerAnswersAreNotQuoted() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        for body: JSONValue in ["<html>LEAKME-0123 token=eyJ.LEAK</html>", "{\"error\": \"x\", LEAKME"] {
            try emu.control("POST", "faults", ["path": "/oauth2/v2.0/initiate", "status": 400, "body": body])
            let r = c.call(na_sign_in, ["username": .string(annEmail)])
            #expect(r.rc == NA_ESERVER, "\(r.doc)")
            #expect(!r.doc.serialized().contains("LEAK"), "\(r.doc)")
        }
    }

    /// Finding 4: an API answer nested 2,000 deep comes back as text with a flag, on a thread with a 256 KiB stack.
    @Test func deepAPIBodiesComeBackAsText() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        _ = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        var deep: JSONValue = "bottom"
        for _ in 0..<2000 { deep = ["x": deep] }
        try emu.control("POST", "faults", ["path": "/api/todolist", "status": 200, "body": deep])
        let result = LockedBox<(Int32, JSONValue)?>(nil)
        let url = emu.apiURLs.todo
        let scope = emu.apiScopes.todo
        let t = Thread { result.set(c.call(na_call_api, ["url": .string(url), "scopes": [.string(scope)]])) }
        t.stackSize = 256 * 1024
        t.start()
        while result.get() == nil { usleep(2000) }
        let r = try #require(result.get())
        #expect(r.0 == NA_OK && r.1["body_too_deep"] == true, "\(r.1.serialized().prefix(200))")
        #expect(r.1["body"]?.stringValue?.hasPrefix("{\"x\":{\"x\":") == true)
    }

    /// Found by the fuzzer's "api" target: a body whose brackets nest deeper than 64 but that cannot be JSON (here a
    /// raw line break inside a string) is text and is not called deeply nested JSON; it is never parsed either.
    @Test func deepBracketsInATextThatIsNotJSONAreNotFlagged() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        _ = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
        let text =
            #"{"note":"line one"# + "\n" + #"line two","deep":"# + String(repeating: "[", count: 100)
            + String(repeating: "]", count: 100) + "}"
        try emu.control("POST", "faults", ["path": "/api/todolist", "status": 200, "body": .string(text)])
        let url = emu.apiURLs.todo
        let r = c.call(na_call_api, ["url": .string(url), "scopes": [.string(emu.apiScopes.todo)]])
        #expect(r.0 == NA_OK && r.1["body"]?.stringValue == text, "\(r.1.serialized().prefix(200))")
        #expect(r.1["body_too_deep"] == nil)
    }

    /// Finding 9: a sign-in whose answer lands after the user signed out keeps nothing.
    @Test func signOutIsNotUndoneByASignInInFlight() throws {
        let emu = try EmulatorProcess()
        let c = try ABIClient(emu)
        try emu.control("POST", "faults", ["path": "/oauth2/v2.0/token", "delay_ms": 1500, "count": 1])
        let result = LockedBox<(Int32, JSONValue)?>(nil)
        let t = Thread {
            result.set(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]))
        }
        t.start()
        // the call is under way (its token request, delayed, is on the wire or about to be)
        while try emu.requests("/oauth2/v2.0/challenge").isEmpty { usleep(10_000) }
        #expect(c.call(na_sign_out, [:]).rc == NA_OK)
        while result.get() == nil { usleep(10_000) }
        #expect(result.get()?.1.errorCode == "cancelled", "\(String(describing: result.get()?.1))")
        #expect(c.call(na_get_account, [:]).doc.errorCode == "no_account")
    }

    /// Finding 13: the ID token of a native sign-in is checked (aud, iss, exp/nbf with 5 minutes of skew).
    @Test func idTokensAreChecked() throws {
        let emu = try EmulatorProcess()
        let now = Int64(Date().timeIntervalSince1970)
        let bad: [JSONValue] = [
            ["aud": "someone-else"], ["iss": "https://evil.example/aaaabbbb-0000-cccc-1111-dddd2222eeee/v2.0"],
            ["exp": .int(now - 400)], ["nbf": .int(now + 400)],
        ]
        for claims in bad {
            let c = try ABIClient(emu)
            try emu.control("POST", "token_answers", ["id_token_claims": claims])
            let r = c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)])
            #expect(r.rc == NA_ESERVER && r.doc.errorCode == "id_token_invalid", "\(claims): \(r.doc)")
            #expect(c.call(na_get_account, [:]).doc.errorCode == "no_account")
        }
        // within the skew: accepted
        let c = try ABIClient(emu)
        try emu.control("POST", "token_answers", ["id_token_claims": ["exp": .int(now - 200), "nbf": .int(now + 200)]])
        #expect(c.call(na_sign_in, ["username": .string(annEmail), "password": .string(annPassword)]).rc == NA_OK)
    }

    /// Finding 15: the emulator's controls need its control token.
    @Test func emulatorControlsNeedTheToken() throws {
        let emu = try EmulatorProcess()
        let body = Array(#"{"email":"intruder@contoso.com","password":"Intrud3r-Passw0rd"}"#.utf8)
        for headers: [(name: String, value: String)] in [[], [("X-Emulator-Token", "wrong")]] {
            let r = try emu.http.send(
                HTTPRequest(
                    method: "POST",
                    url: emu.base + "/_emulator/users",
                    headers: [("Content-Type", "application/json")] + headers,
                    body: body
                )
            )
            #expect(r.status == 401)
        }
        let c = try ABIClient(emu)
        let r = c.call(na_sign_in, ["username": "intruder@contoso.com", "password": "Intrud3r-Passw0rd"])
        #expect(r.doc.errorCode == "user_not_found", "\(r.doc)")
    }
}
