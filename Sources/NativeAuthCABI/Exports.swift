// The exported C API (include/nativeauth.h). Each function hands off to the boundary helpers in Boundary.swift.
// Every function here must be `public`: a non-public @_cdecl silently vanishes from a release .so.
internal import Glibc
internal import CNativeAuthShims
import NativeAuthCore
import NativeAuthJSON

public typealias NALogFunction = @convention(c) (Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

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
    guard let s, s != nashim_oom_document() else { return }
    nashim_wipe(s, strlen(s))
    free(s)
}

@_cdecl("na_client_new")
public func na_client_new(_ config: UnsafePointer<CChar>?, _ outClient: UnsafeMutablePointer<OpaquePointer?>?,
                          _ outError: OutString?) -> Int32 {
    outError?.pointee = nil
    guard let outClient else {
        if let outError { _ = emit(NativeAuthError(.invalidArgument, "out_client is NULL").document, to: outError) }
        return NAStatus.invalidArgument.rawValue
    }
    outClient.pointee = nil
    do {
        let doc = try decodeDocument(config, name: "config_json", nullIsEmpty: false)
        let c = try NativeAuthClient(configuration: doc)
        outClient.pointee = registry.insert(c)
        return NAStatus.ok.rawValue
    } catch {
        if let outError, !emit(error.document, to: outError) { return NAStatus.noMemory.rawValue }
        return error.status.rawValue
    }
}

@_cdecl("na_client_free")
public func na_client_free(_ handle: OpaquePointer?) {
    registry.remove(handle)
}

@_cdecl("na_client_info")
public func na_client_info(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, _ in
        c.logger.log(.verbose, "na_client_info")
        return c.info()
    }
}

@_cdecl("na_client_set_log_callback")
public func na_client_set_log_callback(_ handle: OpaquePointer?, _ level: Int32, _ fn: NALogFunction?,
                                       _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let c = registry.lookup(handle), let lvl = LogLevel(rawValue: level) else {
        return NAStatus.invalidArgument.rawValue
    }
    guard let fn else {
        c.logger.configure(level: lvl, sink: nil)
        return NAStatus.ok.rawValue
    }
    let user = UnsafeSendablePointer(raw: userData)
    c.logger.configure(level: lvl) { level, message, correlation in
        message.withCString { m in
            if let correlation {
                correlation.withCString { cid in fn(level.rawValue, m, cid, user.raw) }
            } else {
                fn(level.rawValue, m, nil, user.raw)
            }
        }
    }
    return NAStatus.ok.rawValue
}

// MARK: - Native authentication

@_cdecl("na_sign_in")
public func na_sign_in(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, doc throws(NativeAuthError) in try c.signIn(doc) }
}

@_cdecl("na_sign_up")
public func na_sign_up(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, doc throws(NativeAuthError) in try c.signUp(doc) }
}

@_cdecl("na_reset_password")
public func na_reset_password(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, doc throws(NativeAuthError) in try c.resetPassword(doc) }
}

@_cdecl("na_flow_submit")
public func na_flow_submit(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, doc throws(NativeAuthError) in try c.submit(doc) }
}

// MARK: - Tokens, APIs, account

@_cdecl("na_get_access_token")
public func na_get_access_token(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, doc throws(NativeAuthError) in try c.getAccessToken(doc) }
}

@_cdecl("na_call_api")
public func na_call_api(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out) { c, doc throws(NativeAuthError) in try c.callAPI(doc) }
}

@_cdecl("na_get_account")
public func na_get_account(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, doc throws(NativeAuthError) in try c.getAccount(doc) }
}

@_cdecl("na_sign_out")
public func na_sign_out(_ handle: OpaquePointer?, _ request: UnsafePointer<CChar>?, _ out: OutString?) -> Int32 {
    operation(handle, request, out, nullRequestIsEmpty: true) { c, doc throws(NativeAuthError) in try c.signOut(doc) }
}
