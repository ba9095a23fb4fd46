// The exported C API (include/nativeauth.h). Each function hands off to the boundary helpers in Boundary.swift and
// holds no logic of its own. Every function here must be `public` (a non-public @_cdecl silently vanishes from a
// release .so), and HeaderConformance.swift checks each one against its prototype in the header.
internal import Glibc
import NativeAuthCache
import NativeAuthCore
import NativeAuthJSON

public typealias NALogFunction =
    @convention(c) (Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

@_cdecl("na_version")
public func na_version() -> UnsafePointer<CChar> {
    UnsafeRawPointer(NativeAuthVersion.string.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("na_abi_version")
public func na_abi_version() -> Int32 { NativeAuthVersion.abi }

@_cdecl("na_status_str")
public func na_status_str(_ status: Int32) -> UnsafePointer<CChar> {
    let text: StaticString = NAStatus(rawValue: status)?.summary ?? "unknown status"
    return UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}

@_cdecl("na_string_free")
public func na_string_free(_ s: UnsafeMutablePointer<CChar>?) {
    guard let s, s != outOfMemoryPointer else { return }
    wipeMemory(s, strlen(s))
    free(s)
}

@_cdecl("na_client_new")
public func na_client_new(
    _ config: UnsafePointer<CChar>?,
    _ outClient: UnsafeMutablePointer<OpaquePointer?>?,
    _ outError: OutString?
) -> Int32 {
    outError?.pointee = nil
    let result = Result { () throws(NativeAuthError) -> OpaquePointer in
        guard let outClient else { throw .invalidArgument("out_client is NULL") }
        outClient.pointee = nil
        let client = try ClientFactory.make(decodeDocument(config, name: "config_json", nullIsEmpty: false))
        guard let handle = handles.insert(ClientBox(client)) else {
            throw NativeAuthError(.internal, "too many live clients (1,048,576)")
        }
        return handle
    }
    switch result {
    case .success(let handle):
        outClient?.pointee = handle
        return NAStatus.ok.rawValue
    case .failure(let error):
        if let outError, !emit(Encode.error(error), to: outError) { return NAStatus.noMemory.rawValue }
        return NAStatus(error).rawValue
    }
}

@_cdecl("na_client_free")
public func na_client_free(_ handle: OpaquePointer?) {
    // Calls still running on other threads stop waiting (answering "cancelled"); started calls are cancelled and
    // their done functions run; refreshes they had sent are finished and stored; then the handle goes.
    _ = handles.withObject(handle) { box in
        box.client.whileFreeing {
            box.client.close()
            box.calls.shutdown()
            box.client.waitForBackgroundRefreshes()
        }
    }
    handles.remove(handle)
}

@_cdecl("na_client_info")
public func na_client_info(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, _ in
        c.logger.log(.verbose, "na_client_info")
        return .document(ClientFactory.info(c.configuration, store: c.store as? FileTokenStore))
    }
}

@_cdecl("na_client_set_log_callback")
public func na_client_set_log_callback(
    _ handle: OpaquePointer?,
    _ level: Int32,
    _ fn: NALogFunction?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    guard let lvl = LogLevel(rawValue: level) else { return NAStatus.invalidArgument.rawValue }
    var sink: LogSink? = nil
    if let fn {
        let host = HostLogCallback(fn: fn, userData: userData)
        sink = { @Sendable (level: LogLevel, message: String, correlation: String?) -> Void in
            host.call(level.rawValue, message, correlation)
        }
    }
    let done = handles.withClient(handle) { c in c.logger.configure(level: lvl, sink: sink) }
    switch done {
    case true?: return NAStatus.ok.rawValue
    case false?: return NAStatus.state.rawValue  // called from inside this client's own log callback
    case nil: return NAStatus.invalidArgument.rawValue
    }
}

/// The host's log callback and its user data. The host promised (header) that the callback may be called from any
/// thread.
struct HostLogCallback: @unchecked Sendable {
    let fn: NALogFunction
    let userData: UnsafeMutableRawPointer?

    func call(_ level: Int32, _ message: String, _ correlation: String?) {
        message.withCString { m in
            if let correlation {
                correlation.withCString { cid in fn(level, m, cid, userData) }
            } else {
                fn(level, m, nil, userData)
            }
        }
    }
}

/// The host's browser callback: opens a URL, answers 0 when it did.
public typealias NABrowserFunction = @convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Int32

@_cdecl("na_client_set_browser_callback")
public func na_client_set_browser_callback(
    _ handle: OpaquePointer?,
    _ fn: NABrowserFunction?,
    _ userData: UnsafeMutableRawPointer?
) -> Int32 {
    let launcher: (any BrowserLauncher)? = fn.map { HostBrowserCallback(fn: $0, userData: userData) }
    let done = handles.withClient(handle) { c in c.setBrowserLauncher(launcher) }
    switch done {
    case true?: return NAStatus.ok.rawValue
    case false?: return NAStatus.state.rawValue  // called from inside this client's own browser callback
    case nil: return NAStatus.invalidArgument.rawValue
    }
}

/// The host's browser callback and its user data (called on the thread of the sign-in call).
struct HostBrowserCallback: BrowserLauncher, @unchecked Sendable {
    let fn: NABrowserFunction
    let userData: UnsafeMutableRawPointer?

    func open(_ url: String) -> Bool {
        url.withCString { fn($0, userData) } == 0
    }
}

// MARK: - Native authentication

@_cdecl("na_sign_in")
public func na_sign_in(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, f throws(NativeAuthError) in
        .document(Encode.flow(try c.signIn(Decode.signIn(f))))
    }
}

@_cdecl("na_sign_up")
public func na_sign_up(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, f throws(NativeAuthError) in
        .document(Encode.flow(try c.signUp(Decode.signUp(f))))
    }
}

@_cdecl("na_reset_password")
public func na_reset_password(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, f throws(NativeAuthError) in
        .document(Encode.flow(try c.resetPassword(Decode.resetPassword(f))))
    }
}

// MARK: - Browser and device code

@_cdecl("na_sign_in_interactive")
public func na_sign_in_interactive(
    _ handle: OpaquePointer?,
    _ request: UnsafePointer<CChar>?,
    _ out: OutString?
) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, f throws(NativeAuthError) in
        .document(Encode.flow(try c.signInInteractive(Decode.interactive(f))))
    }
}

@_cdecl("na_sign_in_device_code")
public func na_sign_in_device_code(
    _ handle: OpaquePointer?,
    _ request: UnsafePointer<CChar>?,
    _ out: OutString?
) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, f throws(NativeAuthError) in
        .document(Encode.flow(try c.signInDeviceCode(Decode.deviceCode(f))))
    }
}

@_cdecl("na_flow_submit")
public func na_flow_submit(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, f throws(NativeAuthError) in
        let flow: FlowID
        let action: FlowAction?
        do throws(NativeAuthError) { (flow, action) = try Decode.flowAction(f) } catch {
            throw error.flow.map { c.refused(error, flow: $0) } ?? error
        }
        guard let action else {
            try c.cancel(flow: flow)
            return .document(Encode.cancelled())
        }
        return .document(Encode.flow(try c.submit(flow: flow, action)))
    }
}

// MARK: - Tokens, APIs, account

@_cdecl("na_get_access_token")
public func na_get_access_token(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32
{
    operationOnText(handle, out) { (c, key) throws(NativeAuthError) -> Answer in
        let decode = { () throws(NativeAuthError) -> TokenRequest in
            try Decode.token(decodeDocument(request, name: "request_json", nullIsEmpty: false))
        }
        guard let request else { return Encode.token(try c.accessToken(decode())) }
        let bytes = UnsafeRawBufferPointer(start: request, count: strnlen(request, RequestMemo.maxBytes + 1))
        guard let memo = try RequestMemo.current.entry(client: key, bytes: bytes, decode: decode) else {
            return Encode.token(try c.accessToken(decode()))
        }
        return try cachedTokenAnswer(c, memo)
    }
}

@_cdecl("na_call_api")
public func na_call_api(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, f throws(NativeAuthError) in
        .document(Encode.apiResponse(try c.callAPI(Decode.callAPI(f))))
    }
}

@_cdecl("na_get_account")
public func na_get_account(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, f throws(NativeAuthError) in
        let include = try Decode.includeIDToken(f)
        return .document(Encode.accountResult(try c.account(Decode.accountSelection(f)), includeIDToken: include))
    }
}

@_cdecl("na_get_accounts")
public func na_get_accounts(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, f throws(NativeAuthError) in
        let include = try Decode.includeIDToken(f)
        return .document(Encode.accounts(c.accounts(), includeIDToken: include))
    }
}

@_cdecl("na_sign_out")
public func na_sign_out(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, f throws(NativeAuthError) in
        let result = try c.signOut(Decode.signOut(f))
        // Signed out in memory, but the cache file still holds the account: the app must know.
        if let failure = result.storeFailure { throw failure }
        return .document(Encode.signedOut(result))
    }
}

// MARK: - Headers (no client)

@_cdecl("na_parse_www_authenticate")
public func na_parse_www_authenticate(_ header: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    boundary(out) { () throws(NativeAuthError) -> Answer in
        .document(Encode.wwwAuthenticate(try Decode.wwwAuthenticate(header)))
    }
}

// MARK: - Started calls

@_cdecl("na_start")
public func na_start(
    _ handle: OpaquePointer?,
    _ call: UnsafePointer<CChar>?,
    _ request: UnsafePointer<CChar>?,
    _ done: NADoneFunction?,
    _ userData: UnsafeMutableRawPointer?,
    _ opOut: UnsafeMutablePointer<OpaquePointer?>?
) -> Int32 {
    opOut?.pointee = nil
    guard let handle, let call, let done, strnlen(call, 64) < 64,
        let export = StartableCall.export(named: String(cString: call))
    else { return NAStatus.invalidArgument.rawValue }
    let status = handles.withObject(handle) { box -> NAStatus in
        box.calls.start(export: export, client: handle, request: request, done: done, userData: userData, opOut: opOut)
    }
    return (status ?? .invalidArgument).rawValue
}

@_cdecl("na_op_cancel")
public func na_op_cancel(_ op: OpaquePointer?) -> Int32 {
    let cancelled = startedCalls.withObject(op) { call in call.pool.cancel(call) }
    switch cancelled {
    case true?: return NAStatus.ok.rawValue
    case false?: return NAStatus.state.rawValue
    case nil: return NAStatus.invalidArgument.rawValue
    }
}

@_cdecl("na_op_free")
public func na_op_free(_ op: OpaquePointer?) {
    startedCalls.remove(op)
}

@_cdecl("na_client_event_fd")
public func na_client_event_fd(_ handle: OpaquePointer?, _ fdOut: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let fdOut else { return NAStatus.invalidArgument.rawValue }
    let fd = handles.withObject(handle) { box in box.calls.eventDescriptor() }
    switch fd {
    case let fd??:
        fdOut.pointee = fd
        return NAStatus.ok.rawValue
    case .some(nil): return NAStatus.internal.rawValue
    case nil: return NAStatus.invalidArgument.rawValue
    }
}

@_cdecl("na_client_dispatch")
public func na_client_dispatch(_ handle: OpaquePointer?) -> Int32 {
    guard let ran = handles.withObject(handle, { box in box.calls.dispatch() }) else {
        return NAStatus.invalidArgument.rawValue
    }
    return Int32(clamping: ran)
}

// MARK: - DPoP

@_cdecl("na_dpop_proof")
public func na_dpop_proof(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, f throws(NativeAuthError) in
        .document(["v": 1, "proof": .string(try c.dpopProof(Decode.dpopProof(f)))])
    }
}
