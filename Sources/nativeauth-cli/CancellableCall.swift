internal import Glibc
import NativeAuthCABI
import NativeAuthJSON

/// A library operation started with `na_start` and waited for on the calling thread, so that another thread (the
/// Ctrl-C thread) can end its wait with `na_op_cancel`: a blocking call such as `na_sign_in_interactive` with the
/// system browser has no flow to cancel until it returns.
final class CancellableCall: @unchecked Sendable {  // a na_op may be used from any thread
    /// What the done function hands over: set on the library's worker, read after the semaphore was posted.
    private final class Completion {
        let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
        var status: Int32 = 0
        var text = ""
        init() { sem_init(semaphore, 0, 0) }
        deinit {
            sem_destroy(semaphore)
            semaphore.deallocate()
        }
    }

    private let completion = Completion()
    private let op: OpaquePointer?

    /// Starts `call` (the operation's name without "na_") with `request` on `client`.
    init(_ client: Library, _ call: String, _ request: JSONValue) throws(CLIError) {
        let box = Unmanaged.passRetained(completion).toOpaque()
        var op: OpaquePointer? = nil
        let rc = request.serialized().withCString { json in
            na_start(
                client.handle,
                call,
                json,
                { rc, result, userData in
                    guard let userData else { return }
                    let completion = Unmanaged<Completion>.fromOpaque(userData).takeRetainedValue()
                    completion.status = rc
                    completion.text = result.map { String(cString: $0) } ?? "null"
                    sem_post(completion.semaphore)
                },
                box,
                &op
            )
        }
        guard rc == 0 else {
            Unmanaged<Completion>.fromOpaque(box).release()  // done never runs
            throw CLIError("internal", "the library did not start \(call) (\(rc))")
        }
        self.op = op
    }

    deinit { na_op_free(op) }

    /// Asks the operation to end with "cancelled" (from any thread; a finished one is left as it is).
    func cancel() { _ = na_op_cancel(op) }

    /// Waits for the operation: its result document, or the error it answered.
    func wait() throws(CLIError) -> JSONValue {
        while sem_wait(completion.semaphore) != 0 && errno == EINTR {}
        let document = (try? JSONValue.parse(completion.text)) ?? .null
        guard completion.status == 0 else { throw CLIError(library: document, status: completion.status) }
        return document
    }
}
