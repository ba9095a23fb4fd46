import CNativeAuthHeader

// Every export, type-checked against its prototype in include/nativeauth.h (imported as the CNativeAuthHeader
// module): if a @_cdecl function's parameters or result drift from the header, this file stops compiling. The
// function is never called; the compiler's type check is the test. (The exported *names* are checked against the
// header by `make check-symbols`.)
private func exportsMatchTheHeader() {
    typealias Op = (OpaquePointer?, UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    let _: () -> UnsafePointer<CChar>? = CNativeAuthHeader.na_version
    let _: () -> UnsafePointer<CChar>? = NativeAuthCABI.na_version
    let _: () -> Int32 = CNativeAuthHeader.na_abi_version
    let _: () -> Int32 = NativeAuthCABI.na_abi_version
    let _: (Int32) -> UnsafePointer<CChar>? = CNativeAuthHeader.na_status_str
    let _: (Int32) -> UnsafePointer<CChar>? = NativeAuthCABI.na_status_str
    let _: (UnsafeMutablePointer<CChar>?) -> Void = CNativeAuthHeader.na_string_free
    let _: (UnsafeMutablePointer<CChar>?) -> Void = NativeAuthCABI.na_string_free
    typealias New = (
        UnsafePointer<CChar>?, UnsafeMutablePointer<OpaquePointer?>?,
        UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    ) -> Int32
    let _: New = CNativeAuthHeader.na_client_new
    let _: New = NativeAuthCABI.na_client_new
    let _: (OpaquePointer?) -> Void = CNativeAuthHeader.na_client_free
    let _: (OpaquePointer?) -> Void = NativeAuthCABI.na_client_free
    typealias SetLog = (OpaquePointer?, Int32, na_log_fn?, UnsafeMutableRawPointer?) -> Int32
    let _: SetLog = CNativeAuthHeader.na_client_set_log_callback
    let _: SetLog = NativeAuthCABI.na_client_set_log_callback
    typealias SetBrowser = (OpaquePointer?, na_browser_fn?, UnsafeMutableRawPointer?) -> Int32
    let _: SetBrowser = CNativeAuthHeader.na_client_set_browser_callback
    let _: SetBrowser = NativeAuthCABI.na_client_set_browser_callback
    let _: Op = CNativeAuthHeader.na_client_info
    let _: Op = NativeAuthCABI.na_client_info
    let _: Op = CNativeAuthHeader.na_sign_in
    let _: Op = NativeAuthCABI.na_sign_in
    let _: Op = CNativeAuthHeader.na_sign_up
    let _: Op = NativeAuthCABI.na_sign_up
    let _: Op = CNativeAuthHeader.na_reset_password
    let _: Op = NativeAuthCABI.na_reset_password
    let _: Op = CNativeAuthHeader.na_flow_submit
    let _: Op = NativeAuthCABI.na_flow_submit
    let _: Op = CNativeAuthHeader.na_get_access_token
    let _: Op = NativeAuthCABI.na_get_access_token
    let _: Op = CNativeAuthHeader.na_call_api
    let _: Op = NativeAuthCABI.na_call_api
    let _: Op = CNativeAuthHeader.na_get_account
    let _: Op = NativeAuthCABI.na_get_account
    let _: Op = CNativeAuthHeader.na_get_accounts
    let _: Op = NativeAuthCABI.na_get_accounts
    let _: Op = CNativeAuthHeader.na_sign_in_interactive
    let _: Op = NativeAuthCABI.na_sign_in_interactive
    let _: Op = CNativeAuthHeader.na_sign_in_device_code
    let _: Op = NativeAuthCABI.na_sign_in_device_code
    let _: Op = CNativeAuthHeader.na_sign_out
    let _: Op = NativeAuthCABI.na_sign_out
    let _: Op = CNativeAuthHeader.na_dpop_proof
    let _: Op = NativeAuthCABI.na_dpop_proof
    typealias Parse = (UnsafePointer<CChar>?, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32
    let _: Parse = CNativeAuthHeader.na_parse_www_authenticate
    let _: Parse = NativeAuthCABI.na_parse_www_authenticate
    typealias Start = (
        OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, na_done_fn?, UnsafeMutableRawPointer?,
        UnsafeMutablePointer<OpaquePointer?>?
    ) -> Int32
    let _: Start = CNativeAuthHeader.na_start
    let _: Start = NativeAuthCABI.na_start
    let _: (OpaquePointer?) -> Int32 = CNativeAuthHeader.na_op_cancel
    let _: (OpaquePointer?) -> Int32 = NativeAuthCABI.na_op_cancel
    let _: (OpaquePointer?) -> Void = CNativeAuthHeader.na_op_free
    let _: (OpaquePointer?) -> Void = NativeAuthCABI.na_op_free
    let _: (OpaquePointer?, UnsafeMutablePointer<Int32>?) -> Int32 = CNativeAuthHeader.na_client_event_fd
    let _: (OpaquePointer?, UnsafeMutablePointer<Int32>?) -> Int32 = NativeAuthCABI.na_client_event_fd
    let _: (OpaquePointer?) -> Int32 = CNativeAuthHeader.na_client_dispatch
    let _: (OpaquePointer?) -> Int32 = NativeAuthCABI.na_client_dispatch
}
