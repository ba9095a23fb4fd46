import NativeAuthCore
import NativeAuthJSON
import Testing

/// `client_capabilities` merged into a request's claims as MSAL for Python merges them
/// (`_merge_claims_challenge_and_capabilities`): `access_token.xms_cc.values` = the capabilities, the rest kept.
@Suite struct ClaimsMergeTests {
    static func merged(_ claims: String?, _ capabilities: [String]) throws -> JSONValue? {
        guard let out = ClaimsRequest.merging(claims.map { ClaimsRequest(json: $0) }, capabilities: capabilities)
        else { return nil }
        return try JSONValue.parse(out.json)
    }

    @Test("capabilities alone, claims alone, neither")
    func alone() throws {
        #expect(try Self.merged(nil, ["cp1"]) == ["access_token": ["xms_cc": ["values": ["cp1"]]]])
        #expect(try Self.merged(nil, []) == nil)
        let claims = #"{"id_token":{"auth_time":{"essential":true}}}"#
        #expect(ClaimsRequest.merging(ClaimsRequest(json: claims), capabilities: [])?.json == claims)  // untouched
    }

    @Test("merged: other members stay, xms_cc is replaced")
    func merged() throws {
        let claims =
            #"{"access_token":{"nbf":{"essential":true,"value":"1604106651"},"xms_cc":{"values":["old"]}},"#
            + #""id_token":{"auth_time":{"essential":true}}}"#
        #expect(
            try Self.merged(claims, ["cp1", "cp2"]) == [
                "access_token": [
                    "nbf": ["essential": true, "value": "1604106651"], "xms_cc": ["values": ["cp1", "cp2"]],
                ],
                "id_token": ["auth_time": ["essential": true]],
            ]
        )
        // access_token that is not an object is replaced by one.
        #expect(try Self.merged(#"{"access_token":7}"#, ["cp1"]) == ["access_token": ["xms_cc": ["values": ["cp1"]]]])
    }

    @Test("claims that are not a JSON object go as they are (the request's decoding refuses them before)")
    func notAnObject() {
        for text in ["[1]", "not json", ""] {
            #expect(ClaimsRequest.merging(ClaimsRequest(json: text), capabilities: ["cp1"])?.json == text)
        }
    }
}
