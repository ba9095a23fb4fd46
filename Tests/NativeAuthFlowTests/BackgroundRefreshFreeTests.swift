import Foundation
import NativeAuthCABI
import NativeAuthJSON
import Testing

/// The log callback of a refresh finishing in the background (its call was cancelled) frees the client while a
/// started call's log callback does too: the first waits for that call, whose thread waits — inside its own
/// na_client_free — for the background refreshes. Neither may wait for the other for ever.
@Suite(.serialized) struct BackgroundRefreshFreeTests {
    nonisolated(unsafe) static var handle: OpaquePointer? = nil
    nonisolated(unsafe) static var meet = Rendezvous()

    static let log: NALogFunction = { _, message, _, _ in
        guard let message else { return }
        let line = String(cString: message)
        if line.contains("na_client_info") {
            meet.bump("in info")
            meet.wait("refresh freeing", atLeast: 1)
        } else if line.hasPrefix("the token refresh of a cancelled call") {
            meet.bump("refresh freeing")
        } else {
            return
        }
        na_client_free(handle)
        meet.bump("returned")
    }

    @Test func aBackgroundRefreshsLogCallbackAndAStartedCallsFreeingAtOnceBothReturn() async throws {
        Self.meet = Rendezvous()
        let emu = try EmulatorProcess()
        var h: OpaquePointer? = nil
        let config: JSONValue = [
            "authority": .string(emu.authority), "client_id": .string(emu.clientID), "request_timeout_ms": 300_000,
        ]
        #expect(na_client_new(config.serialized(), &h, nil) == NA_OK)
        Self.handle = h
        let (todo, _) = emu.apiScopes
        var out: UnsafeMutablePointer<CChar>? = nil
        let request: JSONValue = [
            "username": .string(annEmail), "password": .string(annPassword), "scopes": [.string(todo)],
        ]
        #expect(na_sign_in(h, request.serialized(), &out) == NA_OK)
        na_string_free(out)
        #expect(na_client_set_log_callback(h, 4, Self.log, nil) == NA_OK)
        _ = try emu.control("POST", "faults", ["path": "/oauth2/v2.0/token", "stage": "after", "hold": true])
        let cancelled = Completion()
        var op: OpaquePointer? = nil
        let refresh = JSONValue.object(["scopes": [.string(todo)], "force_refresh": true]).serialized()
        #expect(na_start(h, "get_access_token", refresh, Completion.done, cancelled.userData, &op) == NA_OK)
        #expect(try await eventually { try emu.control("GET", "faults")["held"]?.intValue == 1 })
        #expect(na_op_cancel(op) == NA_OK)
        #expect(try await cancelled.wait().doc.errorCode == "cancelled")
        na_op_free(op)
        // A started call held in its log callback until the refresh's log callback is freeing the client.
        let info = Completion()
        #expect(na_start(h, "client_info", "{}", Completion.done, info.userData, nil) == NA_OK)
        #expect(try await eventually(60) { Self.meet.count("in info") == 1 })
        _ = try emu.control("POST", "faults/release")
        #expect(try await eventually(60) { Self.meet.count("refresh freeing") == 1 })
        #expect(try await eventually(60) { Self.meet.count("returned") == 2 }, "a free waits for the other")
        #expect(try await eventually(60) { info.answers.count == 1 })
        #expect(try emu.control("GET", "counters")["refresh_token_reuse_detected"] == nil)
    }
}
