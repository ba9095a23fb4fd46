// One started call (na_start) and the exports that can be started; the pool that runs them is StartedCalls.
internal import Glibc
import NativeAuthCore
import NativeAuthJSON

/// The host's completion function.
public typealias NADoneFunction = @convention(c) (Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void

/// A blocking export, as a started call runs it.
typealias BlockingExport = @Sendable (OpaquePointer?, UnsafePointer<CChar>?, OutString?) -> Int32

/// The exports that can be started, by the name `na_start` takes (the export's name without `na_`): exactly the
/// header's operations, `int na_<name>(na_client *client, const char *request_json, char **out_json)`, which its
/// na_start comment lists too (StartableCallTests compares the three).
enum StartableCall {
    static let exports: [String: BlockingExport] = [
        "client_info": na_client_info,
        "sign_in": na_sign_in,
        "sign_up": na_sign_up,
        "reset_password": na_reset_password,
        "flow_submit": na_flow_submit,
        "sign_in_interactive": na_sign_in_interactive,
        "sign_in_device_code": na_sign_in_device_code,
        "get_access_token": na_get_access_token,
        "call_api": na_call_api,
        "get_account": na_get_account,
        "get_accounts": na_get_accounts,
        "sign_out": na_sign_out,
        "dpop_proof": na_dpop_proof,  // local and fast, but an operation like the others: startable too
    ]

    static func export(named name: String) -> BlockingExport? { exports[name] }
}

/// One started call: what to run, the host's completion, and the answer once there is one.
/// Handles of started calls (`na_op`), detected when freed like client handles.
let startedCalls = HandleTable<StartedCall>(tag: 1)

final class StartedCall: @unchecked Sendable {  // mutable state is guarded by the owning pool's mutex
    enum Phase { case queued, running, finished, delivering, delivered }

    let export: BlockingExport
    let client: OpaquePointer
    let pool: StartedCalls
    /// A copy of the request (it may hold a password): wiped and freed once the call ran or was cancelled.
    var request: UnsafeMutablePointer<CChar>?
    let done: NADoneFunction
    let userData: UnsafeMutableRawPointer?
    let cancellation = CallCancellation()
    var phase = Phase.queued
    /// In event-fd mode, the call's place in the order of completions (set when its answer waits for dispatch).
    var serial: UInt64 = 0
    var status: Int32 = 0
    var result: UnsafeMutablePointer<CChar>?

    init(
        export: @escaping BlockingExport,
        client: OpaquePointer,
        pool: StartedCalls,
        request: UnsafeMutablePointer<CChar>?,
        done: NADoneFunction,
        userData: UnsafeMutableRawPointer?
    ) {
        self.export = export
        self.client = client
        self.pool = pool
        self.request = request
        self.done = done
        self.userData = userData
    }

    /// Copies a request document for a call that runs later (at most one byte past the size limit, so the call
    /// still refuses an oversized one); nil when `text` is NULL. `false` when memory ran out.
    static func copy(_ text: UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?? {
        guard let text else { return .some(nil) }
        let n = strnlen(text, maxRequestBytes + 1)
        guard let p = malloc(n + 1)?.assumingMemoryBound(to: CChar.self) else { return nil }
        memcpy(p, text, n)
        p[n] = 0
        return .some(p)
    }

    /// Wipes and frees the request copy.
    func dropRequest() {
        if let r = request {
            wipeMemory(r, strlen(r))
            free(r)
            request = nil
        }
    }

    /// Runs the export on this thread with the call's cancellation current, and keeps its answer — or, when the
    /// call was cancelled (before it ran, or before it finished), the `cancelled` error instead.
    func run() {
        var out: UnsafeMutablePointer<CChar>? = nil
        let rc = CallCancellation.with(cancellation) { export(client, request, &out) }
        dropRequest()
        // From here a cancel is too late — unless it came first, and then the answer is "cancelled" whatever it was:
        // the call's own "cancelled" (which names a flow kept for a retry), else one made here.
        if cancellation.commitNow() || (rc == NAStatus.state.rawValue && Self.saysCancelled(out)) {
            status = rc
            result = out
        } else {
            na_string_free(out)
            setCancelled()
        }
    }

    /// Whether an answer is the error "cancelled".
    private static func saysCancelled(_ text: UnsafeMutablePointer<CChar>?) -> Bool {
        guard let text, let doc = try? JSONValue.parse(Array(UnsafeRawBufferPointer(start: text, count: strlen(text))))
        else { return false }
        return doc["error"]?["code"]?.stringValue == "cancelled"
    }

    func setCancelled() {
        let error = NativeAuthError.callCancelled("The call was cancelled.")
        var out: UnsafeMutablePointer<CChar>? = nil
        status = emit(Encode.error(error), to: &out) ? NAStatus(error).rawValue : NAStatus.noMemory.rawValue
        result = out
    }

    /// Calls the host's completion with the answer, then wipes and frees it.
    func deliver() {
        let r = result
        result = nil
        if let r {
            done(status, r, userData)
        } else {
            done(NAStatus.noMemory.rawValue, outOfMemoryPointer, userData)
        }
        na_string_free(r)
    }
}
