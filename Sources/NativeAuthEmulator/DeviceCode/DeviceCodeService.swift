import NativeAuthJSON
import Synchronization

/// A device code (RFC 8628) of either identity provider.
struct DeviceCodeRecord {
    var userCode: String
    var clientID: String
    var scope: String
    var expires: Double
    var interval: Double
    var lastPoll: Double = 0
    var approvedUser: String? = nil
    var denied = false
    var redeemed = false
    var idp: IdP = .entra
}

/// What a poll of the token endpoint finds for a device code.
enum DevicePoll {
    case invalid, expired, denied, slowDown, pending
    /// Approved by `user`: the code is now redeemed; tokens for `scope` are due.
    case approved(UserRecord, scope: String)
}

/// The device authorization grant (RFC 8628) of both identity providers: codes, polls, approval (the verification
/// page, or `POST /_emulator/device/approve`) and `slow_down`.
///
/// Locking: its own lock, taken after the native flows and browser state (never with them), before grants and the
/// leaves (directory, counters).
final class DeviceCodeService: Sendable {
    private struct State {
        var codes: [String: DeviceCodeRecord] = [:]
        /// The next polls answered `slow_down` (`POST /_emulator/device/slow_down`).
        var slowDowns = 0
    }

    private let state = Mutex(State())
    let directory: Directory
    let counters: Counters

    init(directory: Directory, counters: Counters) {
        self.directory = directory
        self.counters = counters
    }

    func reset() { state.withLock { $0 = State() } }

    /// The next `n` polls (either provider) answer `slow_down`.
    func slowDown(next n: Int) { state.withLock { $0.slowDowns = n } }

    /// A new device code of `idp` for `client`; returns the device code and the user code.
    func issue(
        idp: IdP,
        client: String,
        scope: String,
        deviceCodePrefix: String,
        userCode: String,
        _ config: EmulatorConfig,
        _ ctx: RequestContext
    ) -> String {
        let device = Ids.token(deviceCodePrefix, bytes: 24)
        let record = DeviceCodeRecord(
            userCode: userCode,
            clientID: client,
            scope: scope,
            expires: ctx.now + Double(config.lifetimes.deviceCode),
            interval: Double(config.deviceCodeInterval),
            idp: idp
        )
        state.withLock { $0.codes[device] = record }
        return device
    }

    /// A poll of device code `code` by `client` at `idp`'s token endpoint. Approved codes are redeemed (once).
    func poll(_ code: String?, idp: IdP, client: String, _ ctx: RequestContext) -> DevicePoll {
        let config = directory.config
        return state.withLock { s -> DevicePoll in
            guard let code, var rec = s.codes[code], rec.idp == idp, rec.clientID == client, !rec.redeemed else {
                return .invalid
            }
            guard rec.expires > ctx.now else { return .expired }
            if rec.denied { return .denied }
            counters.add(.devicePolls)
            defer { s.codes[code] = rec }
            if pollTooFast(&rec, &s.slowDowns, config, ctx) { return .slowDown }
            guard let email = rec.approvedUser, let user = directory.user(email) else { return .pending }
            rec.redeemed = true
            return .approved(user, scope: rec.scope)
        }
    }

    /// A poll sooner than the code's interval after the previous one, or one `device/slow_down` asked for: the
    /// answer is `slow_down`, and the interval grows by the configured increment (RFC 8628 §3.5). Records the poll.
    private func pollTooFast(
        _ rec: inout DeviceCodeRecord,
        _ slowDowns: inout Int,
        _ config: EmulatorConfig,
        _ ctx: RequestContext
    ) -> Bool {
        let tooFast = ctx.now - rec.lastPoll < rec.interval && rec.approvedUser == nil && !rec.denied
        let forced = slowDowns > 0
        rec.lastPoll = ctx.now
        guard tooFast || forced else { return false }
        if forced { slowDowns -= 1 }
        rec.interval += Double(config.deviceSlowDownIncrement)
        counters.add(.slowDownAnswers)
        return true
    }

    /// Approves (or denies) a pending device code by its user code on behalf of `email`.
    func approve(userCode: String, email: String?, deny: Bool) -> Bool {
        let wanted = userCode.uppercased().filter { $0 != "-" && $0 != " " }
        return state.withLock { s in
            guard let (key, found) = s.codes.first(where: { $0.value.userCode == wanted && !$0.value.redeemed })
            else { return false }
            var rec = found
            if deny {
                rec.denied = true
            } else {
                guard let email, directory.user(email.lowercased()) != nil else { return false }
                rec.approvedUser = email.lowercased()
            }
            s.codes[key] = rec
            return true
        }
    }

    // MARK: - The verification page

    /// The verification page of the device flow (`/devicelogin`, `/oidc/device`): a user code (prefilled from the
    /// `user_code` query parameter), then the account's email and password; or deny.
    func page(_ call: Call) -> EmulatorResponse {
        let form = call.form
        func show(_ error: String?) -> EmulatorResponse {
            PageRenderer.deviceCode(action: call.request.path, userCode: form["user_code"] ?? "", error: error)
        }
        guard call.request.method == "POST" else { return show(nil) }
        if form["action"] == "deny" {
            guard approve(userCode: form["user_code"] ?? "", email: nil, deny: true) else {
                return show("That code is not valid or has expired.")
            }
            return PageRenderer.deviceDenied
        }
        let email = (form["username"] ?? "").lowercased()
        guard let user = directory.user(email), let pw = user.password,
            constantTimeStringEquals(pw, form["password"] ?? "")
        else { return show("Your account or password is incorrect.") }
        guard approve(userCode: form["user_code"] ?? "", email: email, deny: false) else {
            return show("That code is not valid or has expired.")
        }
        return PageRenderer.deviceDone
    }
}
