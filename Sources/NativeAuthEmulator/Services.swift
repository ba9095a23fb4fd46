import Synchronization

/// The base URL the emulator names itself by ("http://127.0.0.1:PORT", "https://…", or a test's forwarder), and
/// with `--tls` the CA file clients must trust.
final class PublicAddress: Sendable {
    private let base = Mutex<String>("http://127.0.0.1")
    private let ca = Mutex<String?>(nil)

    var baseURL: String {
        get { base.withLock { $0 } }
        set { base.withLock { $0 = newValue } }
    }

    var caFile: String? {
        get { ca.withLock { $0 } }
        set { ca.withLock { $0 = newValue } }
    }
}

/// Everything the emulator is made of, wired once: the shared stores (users and settings, the clock, grants and
/// token minting, the outbox, the request log, counters) and the services that own their own state.
///
/// Lock order (a handler that needs two takes them in this order, never the reverse): native-auth flows → browser
/// state → device codes → grants → the leaves (directory, outbox, request log, counters, faults, token rules, API
/// items), which never take another lock while holding their own — but the faults, which read the held answers'
/// release count under their own lock (faults → held answers; `HeldAnswers` takes no other).
struct Services: Sendable {
    let initialConfig: EmulatorConfig
    let clock = EmulatorClock()
    let address = PublicAddress()
    let counters: Counters
    let directory: Directory
    let outbox: Outbox
    let requestLog: RequestLog
    let grants: Grants
    let minter: TokenMinter
    let faults = FaultInjector()
    let tokenRules: TokenRules
    let browser: BrowserService
    let revocation: Revocation
    let nativeAuth: NativeAuthService
    let deviceCodes: DeviceCodeService
    let tokens: TokenEndpoint
    let oidc: OIDCProvider
    let apis: ProtectedAPIs
    let dpop: DPoPVerifier

    init(config: EmulatorConfig) throws {
        initialConfig = config
        counters = Counters()
        directory = Directory(config: config)
        outbox = Outbox(counters: counters)
        requestLog = RequestLog(counters: counters)
        grants = Grants()
        minter = try TokenMinter(config: config, directory: directory, counters: counters)
        tokenRules = TokenRules(directory: directory, minter: minter, counters: counters)
        browser = BrowserService(
            directory: directory,
            outbox: outbox,
            grants: grants,
            minter: minter,
            counters: counters,
            requestLog: requestLog
        )
        revocation = Revocation(grants: grants, browser: browser)
        nativeAuth = NativeAuthService(
            directory: directory,
            outbox: outbox,
            grants: grants,
            minter: minter,
            counters: counters,
            revocation: revocation
        )
        deviceCodes = DeviceCodeService(directory: directory, counters: counters)
        tokens = TokenEndpoint(
            directory: directory,
            grants: grants,
            minter: minter,
            counters: counters,
            nativeAuth: nativeAuth,
            deviceCodes: deviceCodes,
            tokenRules: tokenRules
        )
        dpop = DPoPVerifier(counters: counters)
        oidc = OIDCProvider(
            directory: directory,
            grants: grants,
            minter: minter,
            counters: counters,
            deviceCodes: deviceCodes,
            dpop: dpop
        )
        apis = ProtectedAPIs(directory: directory, grants: grants, minter: minter, dpop: dpop)
    }

    /// Back to the starting configuration: users, settings, flows, sessions, codes, tokens, outbox, logs, faults,
    /// rules and counters (TCP connections stay counted; the clock and base URL stay).
    func reset() {
        directory.reset(to: initialConfig)
        nativeAuth.reset()
        browser.reset()
        deviceCodes.reset()
        grants.reset()
        outbox.clear()
        requestLog.reset()
        faults.reset()
        tokenRules.reset()
        apis.reset()
        dpop.reset()
        counters.reset()
    }

    /// The tenant segment must name this tenant (domain or id, case-insensitive).
    func isTenant(_ segment: Substring) -> Bool {
        let s = segment.lowercased()
        return s == initialConfig.tenantDomain.lowercased() || s == initialConfig.tenantID.lowercased()
    }
}
