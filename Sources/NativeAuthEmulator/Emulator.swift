import Foundation
import NativeAuthCrypto
import NativeAuthJSON

/// The emulated tenant: a facade over its services (`Services`), its route table and its control token.
/// Thread-safe; `handle` is the whole server logic (the HTTP adapter in `EmulatorServer` only moves bytes and applies
/// injected faults' delays and spoiled deliveries).
public final class Emulator: Sendable {
    let services: Services
    private let router: Router
    /// The secret every `/_emulator/*` request must carry in `X-Emulator-Token` (32 random bytes, base64url). It is
    /// in the ready document only, so that only whoever started the emulator can drive its controls.
    public let controlToken: String

    public init(config: EmulatorConfig = .demo) throws {
        services = try Services(config: config)
        controlToken = Base64.urlEncode(try SecureRandom.bytes(32))
        router = services.router(controls: ControlPlane(services: services, controlToken: controlToken))
    }

    /// The externally visible base URL ("http://127.0.0.1:PORT" or "https://…"). Set by the server once bound.
    /// The CA file of `--tls` (reported by `GET /_emulator/info` as by the ready line).
    public var caFile: String? {
        get { services.address.caFile }
        set { services.address.caFile = newValue }
    }

    public var baseURL: String {
        get { services.address.baseURL }
        set { services.address.baseURL = newValue }
    }

    /// The configuration now (settings change it at run time).
    public var config: EmulatorConfig { services.directory.config }

    /// Resets users, flows, tokens, outbox, request log, faults and counters to the starting configuration.
    public func reset() { services.reset() }

    /// Hands `write` one line for each one-time code the emulator "sends" from now on: the channel, the address
    /// masked, the code and its purpose (the foreground executable prints them on its terminal; nil: no more).
    public func announceCodes(_ write: (@Sendable (String) -> Void)?) {
        guard let write else { return services.outbox.announce(nil) }
        services.outbox.announce { message in write(message.announcement) }
    }

    // MARK: - Dispatch

    /// Handles one request. Never throws, never traps on input.
    public func handle(_ req: EmulatorRequest) -> EmulatorResponse { handle(req, fault: nil) }

    /// Handles one request under an injected fault: a stage-"before" fault with an answer of its own replaces the
    /// service; a stage-"after" one answers over it. The request log says what the fault did.
    func handle(_ req: EmulatorRequest, fault: Fault?) -> EmulatorResponse {
        let ctx = RequestContext(
            correlationID: req.headers["client-request-id"] ?? Ids.uuid(),
            traceID: Ids.uuid(),
            now: services.clock.now(),
            baseURL: baseURL
        )
        var response: EmulatorResponse
        var handledStatus: Int? = nil
        if let fault, fault.stage == .before, fault.replacesAnswer {
            response = FaultInjector.answer(fault, ctx, handled: nil)
        } else {
            response = serve(req, ctx)
            if let fault, fault.stage == .after, fault.replacesAnswer || fault.drop {
                handledStatus = response.status
                if fault.replacesAnswer { response = FaultInjector.answer(fault, ctx, handled: response) }
            }
        }
        if let fault { response = FaultInjector.reshape(response, fault) }
        response.headers.append(("client-request-id", ctx.correlationID))
        response.headers.append(("x-ms-request-id", ctx.traceID))
        if !req.path.hasPrefix("/_emulator") {
            let delivered = fault?.drop == true ? 0 : response.status
            services.requestLog.record(
                req,
                status: delivered,
                time: ctx.now,
                fault: fault?.kind,
                handledStatus: handledStatus
            )
        }
        return response
    }

    /// The route's answer; a `ServiceError` in the service's envelope, anything else as AADSTS50000.
    private func serve(_ req: EmulatorRequest, _ ctx: RequestContext) -> EmulatorResponse {
        do {
            return try router.handle(Call(request: req, context: ctx))
        } catch let e as ServiceError {
            return e.response(ctx)
        } catch {
            return ServiceError.serverError.response(ctx)
        }
    }

    // MARK: - For the HTTP adapter

    /// Records a request answered by an injected fault (the adapter calls this).
    func recordFault(_ req: EmulatorRequest, status: Int, kind: String) {
        services.requestLog.record(req, status: status, time: services.clock.now(), fault: kind)
    }

    /// The next injected fault for `path`, if any (consumes one use).
    func takeFault(for path: String) -> Fault? { services.faults.take(for: path) }

    func countConnection() { services.counters.add(.connections) }

    /// What the emulator prints when ready: enough for scripts and tests to need no second source of truth.
    public func readyDocument(caFile: String?) -> JSONValue {
        services.readyDocument(controlToken: controlToken, caFile: caFile)
    }
}
