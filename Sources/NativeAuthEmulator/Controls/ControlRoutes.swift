import NativeAuthJSON

/// The test controls (`/_emulator/…`, README "Test controls"): every call needs the ready document's control token.
extension Emulator {
    func controlRoutes() -> RouteTable {
        RouteTable(
            routes: [
                Route(["GET"], "health") { _ in .json(["ok": true]) },
                Route(["GET"], "info") { [unowned self] _ in .json(readyDocument(caFile: nil)) },
                Route(["GET"], "outbox") { [unowned self] call in
                    let to = call.request.query["to"]?.lowercased()
                    let msgs = store.withLock { s in s.outbox.filter { to == nil || $0.to == to }.map(\.json) }
                    return .json(["messages": .array(msgs)])
                },
                Route(["DELETE"], "outbox") { [unowned self] _ in
                    store.withLock { $0.outbox.removeAll() }
                    return .ok
                },
                Route(["GET"], "requests") { [unowned self] call in
                    let suffix = call.request.query["path"]
                    let entries = store.withLock { s in
                        s.log.filter { suffix == nil || $0.path.hasSuffix(suffix ?? "") }.map(\.json)
                    }
                    return .json(["requests": .array(entries)])
                },
                Route(["DELETE"], "requests") { [unowned self] _ in
                    store.withLock { $0.log.removeAll() }
                    return .ok
                },
                // A counter appears when it first counts.
                Route(["GET"], "counters") { [unowned self] _ in .json(counters.json) },
                Route(["POST"], "reset") { [unowned self] _ in
                    reset()
                    return .ok
                },
            ] + faultRoutes() + userRoutes() + deviceRoutes() + logRoutes() + [
                Route(["POST"], "clock") { [unowned self] call in
                    guard let secs = call.jsonBody["advance_seconds"]?.doubleValue, secs >= 0, secs < 1e8 else {
                        return .badControlRequest("advance_seconds is required")
                    }
                    clock.advance(secs)
                    return .json(["ok": true, "now": .double(clock.now())])
                },
                Route(["POST"], "settings") { [unowned self] call in settings(call.jsonBody) },
            ],
            fallback: { _ in
                .json(["error": "not_found", "error_description": "Unknown emulator control."], status: 404)
            },
            refuse: { [unowned self] call in
                // Without the ready document's token, nothing happens.
                guard let presented = call.request.headers["x-emulator-token"],
                    constantTimeStringEquals(presented, controlToken)
                else { return .controlTokenRequired }
                return nil
            }
        )
    }

    /// `faults`, `token_answers`, `token_errors`.
    private func faultRoutes() -> [Route] {
        var routes = [
            Route(["POST"], "faults") { [unowned self] call in
                do throws(JSONFieldError) {
                    let fault = try Fault(call.jsonBody)
                    store.withLock { $0.faults.append(fault) }
                    return .json(["ok": true, "fault": fault.json])
                } catch {
                    return .badControlRequest(error.description)
                }
            },
            Route(["GET"], "faults") { [unowned self] _ in
                .json(["faults": .array(store.withLock { $0.faults.map(\.json) })])
            },
            Route(["DELETE"], "faults") { [unowned self] _ in
                store.withLock { $0.faults.removeAll() }
                return .ok
            },
        ]
        for name in ["token_answers", "token_errors"] {
            routes.append(
                Route([], name) { [unowned self] call in
                    tokenRuleControl(name, call.request.method, call.jsonBody)
                }
            )
        }
        return routes
    }

    /// `users`, `users/<email>`, `users/revoke`, `tokens/expire`.
    private func userRoutes() -> [Route] {
        [
            Route(["POST"], "users") { [unowned self] call in updateUser(call.jsonBody) },
            Route(["DELETE"], "users/{email}") { [unowned self] call in
                let email = (call.parameters["email"] ?? "").lowercased()
                let removed = store.withLock { s -> Bool in
                    s.revokeSessions(of: email)
                    return s.users.removeValue(forKey: email) != nil
                }
                return .json(["ok": .bool(removed)], status: removed ? 200 : 404)
            },
            Route(["POST"], "users/revoke") { [unowned self] call in
                let body = call.jsonBody
                guard let email = body["email"]?.stringValue?.lowercased() else {
                    return .badControlRequest("email is required")
                }
                let refresh = body["refresh_tokens"]?.boolValue ?? true
                let browser = body["sessions"]?.boolValue ?? true
                let (families, sessions) = store.withLock { s in
                    (
                        refresh ? s.revokeRefreshTokens(of: email) : 0,
                        browser ? s.endBrowserSessions(of: email, idp: nil) : 0
                    )
                }
                return .json([
                    "ok": true, "refresh_token_families": .int(Int64(families)), "sessions": .int(Int64(sessions)),
                ])
            },
            Route(["POST"], "tokens/expire") { [unowned self] call in
                let email = call.jsonBody["email"]?.stringValue?.lowercased()
                let n = store.withLock { s -> Int in
                    let ids = s.accessTokenOwners.filter { email == nil || $0.value == email }.keys
                    let before = s.expiredAccessTokens.count
                    s.expiredAccessTokens.formUnion(ids)
                    return s.expiredAccessTokens.count - before
                }
                return .json(["ok": true, "expired": .int(Int64(n))])
            },
        ]
    }

    /// `device/approve`, `device/slow_down`.
    private func deviceRoutes() -> [Route] {
        [
            Route(["POST"], "device/approve") { [unowned self] call in
                let body = call.jsonBody
                guard let code = body["user_code"]?.stringValue else {
                    return .badControlRequest("user_code is required")
                }
                let deny = body["deny"]?.boolValue ?? false
                let ok = approveDevice(userCode: code, email: body["email"]?.stringValue, deny: deny)
                return .json(["ok": .bool(ok)], status: ok ? 200 : 404)
            },
            Route(["POST"], "device/slow_down") { [unowned self] call in
                guard let n = call.jsonBody["count"]?.intValue, n >= 0, n <= 1000 else {
                    return .badControlRequest("count (0-1000) is required")
                }
                store.withLock { $0.deviceSlowDowns = Int(n) }
                return .ok
            },
        ]
    }

    /// `authorize_log`, `end_session_log`, `sessions`.
    private func logRoutes() -> [Route] {
        [
            Route(["GET"], "authorize_log") { [unowned self] call in
                let idp = call.request.query["idp"]
                let entries = store.withLock { s in
                    s.authorizeLog.filter { idp == nil || $0.idp.rawValue == idp }.map(\.json)
                }
                return .json(["requests": .array(entries)])
            },
            Route(["DELETE"], "authorize_log") { [unowned self] _ in
                store.withLock { $0.authorizeLog.removeAll() }
                return .ok
            },
            Route(["GET"], "end_session_log") { [unowned self] call in
                let idp = call.request.query["idp"]
                let entries = store.withLock { s in
                    s.endSessionLog.filter { idp == nil || $0.idp.rawValue == idp }.map(\.json)
                }
                return .json(["requests": .array(entries)])
            },
            Route(["DELETE"], "end_session_log") { [unowned self] _ in
                store.withLock { $0.endSessionLog.removeAll() }
                return .ok
            },
            Route(["GET"], "sessions") { [unowned self] _ in
                let list = store.withLock { s in
                    s.sessions.sorted { $0.key < $1.key }.map { sid, session -> JSONValue in
                        [
                            "id": .string(sid), "idp": .string(session.idp.rawValue),
                            "users": .array(session.users.map { .string($0) }),
                        ]
                    }
                }
                return .json(["sessions": .array(list)])
            },
            Route(["DELETE"], "sessions") { [unowned self] _ in
                store.withLock { $0.sessions.removeAll() }
                return .ok
            },
        ]
    }

    /// `POST users`: adds or changes an account.
    private func updateUser(_ body: JSONValue) -> EmulatorResponse {
        guard let f = try? JSONFields(body), let email = try? f.string("email").lowercased() else {
            return .badControlRequest("email is required")
        }
        do throws(JSONFieldError) {
            let updated = try store.withLock { s throws(JSONFieldError) -> UserRecord in
                let fresh = try UserRecord.fresh(email)
                var u = s.users[email] ?? fresh
                try u.apply(f)
                s.users[email] = u
                return u
            }
            return .json(["ok": true, "user": updated.controlJSON])
        } catch {
            return .badControlRequest(error.description)
        }
    }

    /// `POST settings`: all or nothing (a refused member changes no setting); then `public_base_url`, the base URL
    /// the emulator names itself by (issuer, discovery endpoints, API URLs), e.g. a test's TCP forwarder in front of it.
    private func settings(_ body: JSONValue) -> EmulatorResponse {
        guard let f = try? JSONFields(body) else { return .badControlRequest("a JSON object is required") }
        do throws(JSONFieldError) {
            try store.withLock { st throws(JSONFieldError) in
                var config = st.config
                try config.applySettings(f)
                st.config = config
            }
            if let u = try f.optionalString("public_base_url") { baseURL = u }
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
