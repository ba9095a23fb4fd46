// Target "start": started calls (na_start, na_op_cancel, na_op_free, na_client_event_fd, na_client_dispatch) on a
// client in one of the "requests" target's sixteen states, against the scripted server.
//
// Input: byte 0 chooses the call ((b - '0') mod 14: the twelve names na_start takes, and two it must refuse),
// byte 1 the client's state ((b - 'a') mod 16, `RequestSetup`), byte 2 what the host does ((b - '0'): bit 0 asks for
// the event fd first, bit 1 cancels right after starting, bit 2 frees the client before waiting, bit 3 frees the op
// at once), the rest is request_json ("$flow" replaced by the open flow's id). The oracle: a refused start never
// completes; an accepted one completes exactly once with a valid answer (`checkAnswer`) — in event-fd mode only
// inside na_client_dispatch, on this thread; a cancel answered NA_OK ends "cancelled"; after na_client_free every
// done has run.
import Glibc
import NativeAuthJSON
import Synchronization

@testable import NativeAuthCABI

private let startableNames = [
    "client_info", "sign_in", "sign_up", "reset_password", "flow_submit", "sign_in_interactive",
    "sign_in_device_code", "get_access_token", "call_api", "get_account", "get_accounts", "sign_out", "dpop_proof",
    "parse_www_authenticate", "na_sign_in",
]

/// What done received, and where.
private final class Received: Sendable {
    struct Answer: Sendable {
        let rc: Int32
        let text: String
        let thread: UInt
    }
    let answers = Mutex<[Answer]>([])

    static let done: NADoneFunction = { rc, text, user in
        guard let user else { return }
        let me = Unmanaged<Received>.fromOpaque(user).takeUnretainedValue()
        guard let text else { finding("done received a NULL document") }
        let answer = Answer(rc: rc, text: String(cString: text), thread: UInt(pthread_self()))
        me.answers.withLock { $0.append(answer) }
    }
}

func fuzzStart(_ data: UnsafeRawBufferPointer) {
    guard data.count >= 3 else { return }
    let name = startableNames[Int(data[0] &- UInt8(ascii: "0")) % startableNames.count]
    let setup = RequestSetup.allCases[Int(data[1] &- UInt8(ascii: "a")) % RequestSetup.allCases.count]
    let mode = Int(data[2] &- UInt8(ascii: "0"))
    let client = FuzzClient(transport: HappyServer.transport(), apiTransport: HappyServer.apiTransport())
    var request = Array(data[3...])
    if let flow = setup.reach(client) { request = replacing("$flow", with: flow, in: request) }
    request.append(0)

    var fd: Int32 = -1
    if mode & 1 != 0, na_client_event_fd(client.handle, &fd) != 0 { finding("no event fd") }
    let received = Received()
    var op: OpaquePointer? = nil
    let rc = request.withUnsafeBufferPointer { r in
        r.baseAddress!.withMemoryRebound(to: CChar.self, capacity: r.count) {
            na_start(client.handle, name, $0, Received.done, Unmanaged.passUnretained(received).toOpaque(), &op)
        }
    }
    let refusable = name == "parse_www_authenticate" || name == "na_sign_in"
    guard rc == 0 else {
        guard refusable, rc == NAStatus.invalidArgument.rawValue, op == nil else {
            finding("na_start(\(name)) answered \(rc)")
        }
        na_client_free(client.handle)
        if !received.answers.withLock({ $0.isEmpty }) { finding("a refused start completed") }
        return
    }
    if refusable { finding("na_start accepted \(name)") }
    let cancelled = mode & 2 != 0 ? na_op_cancel(op) : NAStatus.state.rawValue
    if mode & 8 != 0 { na_op_free(op) }
    if mode & 4 != 0 {
        na_client_free(client.handle)
        guard received.answers.withLock({ $0.count }) == 1 else {
            finding("done had not run exactly once when na_client_free returned")
        }
    } else {
        let me = UInt(pthread_self())
        var waited = 0
        while received.answers.withLock({ $0.isEmpty }) {
            if fd >= 0 {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                if poll(&p, 1, 10) > 0 { _ = na_client_dispatch(client.handle) }
            } else {
                usleep(100)
            }
            waited += 1
            if waited > 50_000 { finding("done did not run") }
        }
        if fd >= 0, received.answers.withLock({ $0.first?.thread }) != me {
            finding("in event-fd mode done ran on another thread")
        }
    }
    let answers = received.answers.withLock { $0 }
    guard answers.count == 1, let answer = answers.first else { finding("done ran \(answers.count) times") }
    checkAnswer(answer.rc, answer.text, request: request)
    if cancelled == 0 && !(answer.rc == NAStatus.state.rawValue && has(answer.text, "\"cancelled\"")) {
        finding("a cancel answered NA_OK but the call did not end cancelled", answer.text)
    }
    if mode & 8 == 0 {
        if na_op_cancel(op) != NAStatus.state.rawValue { finding("a finished call could still be cancelled") }
        na_op_free(op)
    }
    if na_op_cancel(op) != NAStatus.invalidArgument.rawValue { finding("a freed op was not detected") }
}
