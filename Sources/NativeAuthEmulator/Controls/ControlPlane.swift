import NativeAuthJSON

/// The test controls (`/_emulator/…`, docs/emulator.md "Test controls"): a route table of small handlers over the
/// services. Every call needs the ready document's control token (`X-Emulator-Token`); without it, nothing happens.
struct ControlPlane: Sendable {
    let services: Services
    let controlToken: String

    var routes: RouteTable {
        RouteTable(
            routes: stateRoutes + faultRoutes + userRoutes + deviceRoutes + browserRoutes + settingsRoutes,
            fallback: { _ in
                .json(["error": "not_found", "error_description": "Unknown emulator control."], status: 404)
            },
            refuse: { [controlToken] call in
                guard let presented = call.request.headers["x-emulator-token"],
                    constantTimeStringEquals(presented, controlToken)
                else { return .controlTokenRequired }
                return nil
            }
        )
    }

    /// `health`, `info`, `outbox`, `requests`, `counters`, `reset`.
    private var stateRoutes: [Route] {
        let s = services
        return [
            Route(["GET"], "health") { _ in .ok },
            Route(["GET"], "info") { [controlToken] _ in
                .json(s.readyDocument(controlToken: controlToken, caFile: s.address.caFile))
            },
            Route(["GET"], "outbox") { call in
                .json(["messages": .array(s.outbox.json(to: call.request.query["to"]?.lowercased()))])
            },
            Route(["DELETE"], "outbox") { _ in
                s.outbox.clear()
                return .ok
            },
            Route(["GET"], "requests") { call in
                .json(["requests": .array(s.requestLog.json(pathSuffix: call.request.query["path"]))])
            },
            Route(["DELETE"], "requests") { _ in
                s.requestLog.clear()
                return .ok
            },
            // A counter appears when it first counts.
            Route(["GET"], "counters") { _ in .json(s.counters.json) },
            Route(["POST"], "reset") { _ in
                s.reset()
                return .ok
            },
        ]
    }

    /// `faults`, `faults/release`, `token_answers`, `token_errors`.
    private var faultRoutes: [Route] {
        let s = services
        var routes = [
            Route(["POST"], "faults") { call in
                do throws(JSONFieldError) {
                    let fault = try Fault(call.jsonBody)
                    s.faults.add(fault)
                    return .json(["ok": true, "fault": fault.json])
                } catch {
                    return .badControlRequest(error.description)
                }
            },
            Route(["GET"], "faults") { _ in
                .json(["faults": .array(s.faults.json), "held": .int(Int64(s.faults.held.count))])
            },
            Route(["DELETE"], "faults") { _ in
                s.faults.clear()
                return .ok
            },
            Route(["POST"], "faults/release") { _ in
                .json(["ok": true, "released": .int(Int64(s.faults.held.release()))])
            },
        ]
        routes += [
            Route(["POST"], "api_challenges") { call in s.apis.addChallenge(call.jsonBody, now: s.clock.now()) },
            Route(["DELETE"], "api_challenges") { _ in
                s.apis.clearChallenges()
                return .ok
            },
        ]
        for name in ["token_answers", "token_errors"] {
            routes += [
                Route(["POST"], name) { call in s.tokenRules.add(name, call.jsonBody) },
                Route(["GET"], name) { _ in s.tokenRules.list(name) },
                Route(["DELETE"], name) { _ in
                    s.tokenRules.clear(name)
                    return .ok
                },
                Route([], name) { _ in .methodNotAllowed },
            ]
        }
        return routes
    }

    /// `users`, `users/<email>`, `users/revoke`, `tokens/expire`.
    private var userRoutes: [Route] {
        let s = services
        return [
            Route(["POST"], "users") { call in updateUser(call.jsonBody) },
            Route(["DELETE"], "users/{email}") { call in
                let email = (call.parameters["email"] ?? "").lowercased()
                s.revocation.revoke(email)
                let removed = s.directory.removeUser(email)
                return .json(["ok": .bool(removed)], status: removed ? 200 : 404)
            },
            Route(["POST"], "users/revoke") { call in
                let body = call.jsonBody
                guard let email = body["email"]?.stringValue?.lowercased() else {
                    return .badControlRequest("email is required")
                }
                let (families, sessions) = s.revocation.revoke(
                    email,
                    refreshTokens: body["refresh_tokens"]?.boolValue ?? true,
                    sessions: body["sessions"]?.boolValue ?? true
                )
                return .json([
                    "ok": true, "refresh_token_families": .int(Int64(families)), "sessions": .int(Int64(sessions)),
                ])
            },
            Route(["POST"], "tokens/expire") { call in
                let email = call.jsonBody["email"]?.stringValue?.lowercased()
                let n = s.grants.withLock { $0.expireAccessTokens(of: email) }
                return .json(["ok": true, "expired": .int(Int64(n))])
            },
        ]
    }

    /// `device/approve`, `device/slow_down`, `clock`.
    private var deviceRoutes: [Route] {
        let s = services
        return [
            Route(["POST"], "device/approve") { call in
                let body = call.jsonBody
                guard let code = body["user_code"]?.stringValue else {
                    return .badControlRequest("user_code is required")
                }
                let deny = body["deny"]?.boolValue ?? false
                let ok = s.deviceCodes.approve(userCode: code, email: body["email"]?.stringValue, deny: deny)
                return .json(["ok": .bool(ok)], status: ok ? 200 : 404)
            },
            Route(["POST"], "device/slow_down") { call in
                guard let n = call.jsonBody["count"]?.intValue, n >= 0, n <= 1000 else {
                    return .badControlRequest("count (0-1000) is required")
                }
                s.deviceCodes.slowDown(next: Int(n))
                return .ok
            },
            Route(["POST"], "clock") { call in
                guard let secs = call.jsonBody["advance_seconds"]?.doubleValue, secs >= 0, secs < 1e8 else {
                    return .badControlRequest("advance_seconds is required")
                }
                s.clock.advance(secs)
                return .json(["ok": true, "now": .double(s.clock.now())])
            },
        ]
    }

    /// `authorize_log`, `end_session_log`, `sessions`.
    private var browserRoutes: [Route] {
        let b = services.browser
        return [
            Route(["GET"], "authorize_log") { call in
                .json(["requests": .array(b.authorizeLogJSON(idp: call.request.query["idp"]))])
            },
            Route(["DELETE"], "authorize_log") { _ in
                b.clearAuthorizeLog()
                return .ok
            },
            Route(["GET"], "end_session_log") { call in
                .json(["requests": .array(b.endSessionLogJSON(idp: call.request.query["idp"]))])
            },
            Route(["DELETE"], "end_session_log") { _ in
                b.clearEndSessionLog()
                return .ok
            },
            Route(["GET"], "sessions") { _ in .json(b.sessionsJSON) },
            Route(["DELETE"], "sessions") { _ in
                b.clearSessions()
                return .ok
            },
        ]
    }

    /// `settings`, `dpop` (the DPoP proofs received, and the nonces).
    private var settingsRoutes: [Route] {
        let s = services
        return [
            Route(["POST"], "settings") { call in settings(call.jsonBody) },
            Route(["GET"], "dpop") { _ in .json(s.dpop.json) },
        ]
    }

    /// `POST users`: adds or changes an account.
    private func updateUser(_ body: JSONValue) -> EmulatorResponse {
        guard let f = try? JSONFields(body), let email = try? f.string("email").lowercased() else {
            return .badControlRequest("email is required")
        }
        do throws(JSONFieldError) {
            let fresh = try UserRecord.fresh(email)
            let updated = try services.directory.updateUser(email) { user throws(JSONFieldError) -> UserRecord in
                var u = user ?? fresh
                try u.apply(f)
                user = u
                return u
            }
            return .json(["ok": true, "user": updated.controlJSON])
        } catch {
            return .badControlRequest(error.description)
        }
    }

    /// `POST settings`: all or nothing (a refused member changes no setting); then `public_base_url`, the base URL
    /// the emulator names itself by (issuer, discovery endpoints, API URLs), e.g. a test's TCP forwarder in front of
    /// it.
    private func settings(_ body: JSONValue) -> EmulatorResponse {
        guard let f = try? JSONFields(body) else { return .badControlRequest("a JSON object is required") }
        do throws(JSONFieldError) {
            try services.directory.updateConfig { config throws(JSONFieldError) in try config.applySettings(f) }
            if let u = try f.optionalString("public_base_url") { services.address.baseURL = u }
            return .ok
        } catch {
            return .badControlRequest(error.description)
        }
    }
}

extension EmulatorResponse {
    /// `{"ok":true}`.
    static let ok = EmulatorResponse.json(["ok": true])

    /// A control called without the ready document's token.
    static let controlTokenRequired: EmulatorResponse = {
        var r = EmulatorResponse.json(
            [
                "error": "unauthorized",
                "error_description": .string(
                    "The emulator's controls need the X-Emulator-Token header with the ready document's "
                        + "control_token."
                ),
            ],
            status: 401
        )
        r.headers.append(("WWW-Authenticate", "X-Emulator-Token"))
        return r
    }()
}
