/// Where a client's requests go: straight to the server, or through one proxy — decided once, when the client is
/// made, from the configuration's `"proxy"` and `"no_proxy"` or from the environment, so that every request
/// (authority, discovery, JWKS, APIs) follows the same plan and every message can name the proxy it used.
///
/// The environment is read as libcurl reads it for `https` URLs: `https_proxy`, then `HTTPS_PROXY`, then `all_proxy`,
/// then `ALL_PROXY` (empty values count as unset); `no_proxy`, then `NO_PROXY`. `http_proxy` plays no part: plain
/// `http` goes only to `localhost`, `127.0.0.1` and `[::1]`, and those are never sent through a proxy.
public struct ProxyPlan: Sendable, Equatable {
    /// The proxy for every host the no-proxy list does not name: its address (or why the environment's value is not
    /// one) and where it came from ("config" or the variable's name). Nil: no proxy.
    public var proxy: Result<ProxyURL, ProxyURL.ParseError>?
    public var proxySource: String?
    public var noProxy: NoProxyList
    /// "config", "no_proxy" or "NO_PROXY"; nil when there is no list.
    public var noProxySource: String?

    public init(
        proxy: Result<ProxyURL, ProxyURL.ParseError>? = nil,
        proxySource: String? = nil,
        noProxy: NoProxyList = NoProxyList(""),
        noProxySource: String? = nil
    ) {
        self.proxy = proxy
        self.proxySource = proxySource
        self.noProxy = noProxy
        self.noProxySource = noProxySource
    }

    /// No proxy at all (`"proxy": ""`): the environment is not read.
    public static let direct = ProxyPlan()

    /// What a request to `url` does.
    public enum Route: Sendable, Equatable {
        case direct
        case proxy(ProxyURL, source: String)
        /// The environment names a proxy that is not a proxy address: the request is not sent.
        case invalid(ProxyURL.ParseError, source: String)
    }

    /// The route of a request to `url`: loopback hosts always directly, hosts of the no-proxy list directly, every
    /// other host through the proxy.
    public func route(for url: HTTPURL) -> Route {
        guard let proxy, !url.isLoopback, !noProxy.matches(host: url.host) else { return .direct }
        let source = proxySource ?? "config"
        switch proxy {
        case .success(let p): return .proxy(p, source: source)
        case .failure(let e): return .invalid(e, source: source)
        }
    }

    /// The plan of the environment.
    public static func environment(_ environment: (String) -> String?) -> ProxyPlan {
        var plan = ProxyPlan()
        for name in ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            guard let v = environment(name), !v.isEmpty else { continue }
            do throws(ProxyURL.ParseError) { plan.proxy = .success(try ProxyURL(v)) } catch {
                plan.proxy = .failure(error)
            }
            plan.proxySource = name
            break
        }
        plan.setNoProxy(fromEnvironment: environment)
        return plan
    }

    /// The plan of a configured proxy (`"proxy"`): `nil` is no proxy. `noProxy` is the configuration's list; without
    /// one the environment's `no_proxy` / `NO_PROXY` applies, as it does to `curl --proxy`.
    public static func configured(
        _ proxy: ProxyURL?,
        noProxy: String?,
        environment: (String) -> String?
    ) -> ProxyPlan {
        guard let proxy else { return .direct }
        var plan = ProxyPlan(proxy: .success(proxy), proxySource: "config")
        if let noProxy {
            plan.noProxy = NoProxyList(noProxy)
            plan.noProxySource = "config"
        } else {
            plan.setNoProxy(fromEnvironment: environment)
        }
        return plan
    }

    private mutating func setNoProxy(fromEnvironment environment: (String) -> String?) {
        for name in ["no_proxy", "NO_PROXY"] {
            guard let v = environment(name), !v.isEmpty else { continue }
            noProxy = NoProxyList(v)
            noProxySource = name
            return
        }
    }
}
