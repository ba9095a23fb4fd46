// Target "requests": the request document of every export that takes one, on a client in one of sixteen states
// (fresh, signed in, or with a flow waiting at each step of each flow), against the scripted server.
//
// Input: byte 0 chooses the export ((b - '0') mod 10: 0 na_sign_in, 1 na_sign_up, 2 na_reset_password,
// 3 na_flow_submit, 4 na_get_access_token, 5 na_call_api, 6 na_get_account, 7 na_sign_out, 8 na_client_info,
// 9 na_dpop_proof),
// byte 1 the client's state ((b - 'a') mod 16, `RequestSetup`), the rest is request_json. Every "$flow" in it is
// replaced by the open flow's id, when the state has one.
import NativeAuthJSON

@testable import NativeAuthCABI

/// The client states of the "requests" target; each is reached through the C ABI from the one before it.
enum RequestSetup: Int, CaseIterable {
    case fresh, signedIn, signedInWithoutRefreshToken
    case signInPassword, signInCode, mfaSelect, mfaCode, registrationSelect, registrationCode
    case signUpCode, signUpPassword, signUpAttributes, signUpCompleted
    case resetCode, resetPassword, resetCompleted

    /// Takes `client` to this state; returns the open flow, if the state has one. The scripted server answers each
    /// step as planned, so anything else is a broken harness (or library), not a fuzzing result.
    func reach(_ c: FuzzClient) -> String? {
        let scopes: JSONValue = ["api://a/read"]
        func step(_ export: Export, _ doc: JSONValue, expect status: String) -> String? {
            let r = c.callAPI(export, doc)
            guard r.rc == 0, r.status == status else { finding("setup \(self): expected \(status)", r.text) }
            return r.flow
        }
        func submit(_ flow: String?, _ doc: [String: JSONValue], expect status: String) -> String? {
            var d = doc
            d["flow"] = .string(flow ?? "")
            return step(na_flow_submit, .object(d), expect: status)
        }
        switch self {
        case .fresh:
            return nil
        case .signedIn:
            _ = step(
                na_sign_in,
                ["username": "ann@fabrikam.example", "password": "pw", "scopes": scopes],
                expect: "signed_in"
            )
            return nil
        case .signedInWithoutRefreshToken:
            _ = step(
                na_sign_in,
                ["username": "nort@fabrikam.example", "password": "pw", "scopes": scopes],
                expect: "signed_in"
            )
            return nil
        case .signInPassword:
            return step(na_sign_in, ["username": "ann@fabrikam.example"], expect: "password_required")
        case .signInCode:
            return step(na_sign_in, ["username": "otp@fabrikam.example", "scopes": scopes], expect: "code_required")
        case .mfaSelect:
            return step(
                na_sign_in,
                ["username": "mfa@fabrikam.example", "password": "pw", "scopes": scopes],
                expect: "mfa_required"
            )
        case .mfaCode:
            return submit(RequestSetup.mfaSelect.reach(c), ["action": "request_challenge"], expect: "code_required")
        case .registrationSelect:
            return step(
                na_sign_in,
                ["username": "reg@fabrikam.example", "password": "pw", "scopes": scopes],
                expect: "registration_required"
            )
        case .registrationCode:
            return submit(
                RequestSetup.registrationSelect.reach(c),
                ["action": "register_method", "contact": "new@fabrikam.example"],
                expect: "code_required"
            )
        case .signUpCode:
            return step(na_sign_up, ["username": "new@fabrikam.example"], expect: "code_required")
        case .signUpPassword:
            return submit(RequestSetup.signUpCode.reach(c), ["code": "12345678"], expect: "password_required")
        case .signUpAttributes:
            return submit(RequestSetup.signUpPassword.reach(c), ["password": "pw"], expect: "attributes_required")
        case .signUpCompleted:
            return submit(
                RequestSetup.signUpAttributes.reach(c),
                ["attributes": ["displayName": "New"]],
                expect: "sign_up_completed"
            )
        case .resetCode:
            return step(na_reset_password, ["username": "ann@fabrikam.example"], expect: "code_required")
        case .resetPassword:
            return submit(RequestSetup.resetCode.reach(c), ["code": "12345678"], expect: "password_required")
        case .resetCompleted:
            return submit(RequestSetup.resetPassword.reach(c), ["password": "pw"], expect: "password_reset_completed")
        }
    }
}

func fuzzRequests(_ data: UnsafeRawBufferPointer) {
    guard data.count >= 2 else { return }
    let export = requestExports[Int(data[0] &- UInt8(ascii: "0")) % requestExports.count]
    let setup = RequestSetup.allCases[Int(data[1] &- UInt8(ascii: "a")) % RequestSetup.allCases.count]
    let client = FuzzClient(transport: HappyServer.transport(), apiTransport: HappyServer.apiTransport())
    var request = Array(data[2...])
    let flow = setup.reach(client)
    if let flow { request = replacing("$flow", with: flow, in: request) }
    let first = call(export.fn, client.handle, request)
    // A token served from the cache is served again, byte for byte (the second time from the thread's memo).
    if export.name == "na_get_access_token", first.rc == 0, first["from_cache"] == true {
        let second = call(export.fn, client.handle, request)
        guard second.text == first.text else {
            finding("a repeated cached-token request got another answer", first.text + "\n" + second.text)
        }
    }
    checkAccount(after: first, of: export.name, on: client)
    // An error that names the client's open flow leaves it usable (include/nativeauth.h): the flow still answers
    // an action it cannot take with "expected", not as an unknown flow.
    if let flow, first.rc != 0, first.flow == flow {
        let probe = client.callAPI(
            na_flow_submit,
            ["flow": .string(flow), "action": "submit_attributes", "attributes": [:]]
        )
        if probe.errorCode == "flow_invalid" && probe.doc["error"]?["expected"] == nil {
            finding("an error named the flow, but the flow is gone", first.text + "\n" + probe.text)
        }
    }
}

/// After a call: a sign-in's account is the client's account; after a sign-out there is none.
func checkAccount(after reply: Reply, of export: String, on client: FuzzClient) {
    if reply.status == "signed_in" {
        let account = client.callAPI(na_get_account, [:])
        guard account.rc == 0, account["account"]?["home_account_id"] == reply["account"]?["home_account_id"] else {
            finding("the account just signed in is not the client's account", reply.text + "\n" + account.text)
        }
    }
    if export == "na_sign_out" && reply.rc == 0 {
        let account = client.callAPI(na_get_account, [:])
        let token = client.callAPI(na_get_access_token, ["scopes": ["api://a/read"]])
        guard account.errorCode == "no_account", token.errorCode == "no_account" else {
            finding("an account or token survived na_sign_out", account.text + "\n" + token.text)
        }
    }
}
