internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

extension Library {
    /// A call started with na_start and waited for here, which Ctrl-C cancels at once (na_op_cancel): for a call
    /// that has no flow to cancel while it waits (a browser sign-in before it answers). Shows `label` as
    /// `Interrupts.whileWaiting` does. The result as `call` gives it.
    func started(_ name: String, _ request: JSONValue, waiting label: String) throws(CLIError) -> JSONValue {
        let result = StartedResult()
        let box = Unmanaged.passRetained(result).toOpaque()
        var op: OpaquePointer? = nil
        let rc = request.serialized().withCString { text in
            name.withCString { call in
                na_start(
                    handle,
                    call,
                    text,
                    { rc, json, user in
                        guard let user else { return }
                        let result = Unmanaged<StartedResult>.fromOpaque(user).takeRetainedValue()
                        result.finish(rc, json.map { String(cString: $0) } ?? "null")
                    },
                    box,
                    &op
                )
            }
        }
        guard rc == 0 else {
            Unmanaged<StartedResult>.fromOpaque(box).release()  // done will never run
            throw CLIError("internal", "the library did not start \(name) (\(rc))")
        }
        let operation = OperationHandle(op)
        defer { na_op_free(op) }
        let (status, text) = try Interrupts.whileWaiting(label, cancel: { _ = na_op_cancel(operation.op) }) {
            () throws(CLIError) -> (Int32, String) in result.wait()
        }
        let document = (try? JSONValue.parse(text)) ?? .null
        guard status == 0 else { throw CLIError(library: document, status: status) }
        return document
    }
}

/// An operation handle for the Ctrl-C thread (na_op_cancel may be called from any thread; a freed one is detected).
private struct OperationHandle: @unchecked Sendable {
    let op: OpaquePointer?
    init(_ op: OpaquePointer?) { self.op = op }
}

/// A started call's result, handed from the library's worker to the waiting thread.
private final class StartedResult: @unchecked Sendable {  // rc and text are written before the post, read after
    private var rc: Int32 = 0
    private var text = "null"
    private let posted = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    init() { sem_init(posted, 0, 0) }

    deinit {
        sem_destroy(posted)
        posted.deallocate()
    }

    func finish(_ rc: Int32, _ text: String) {
        self.rc = rc
        self.text = text
        sem_post(posted)
    }

    func wait() -> (Int32, String) {
        while sem_wait(posted) != 0 && errno == EINTR {}
        return (rc, text)
    }
}
