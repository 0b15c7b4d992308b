import Foundation

/// Which proxy, if any, each URL goes through: read from a `connectionProxyDictionary` or from the
/// environment (see `ProxyEnvironment`). A pure value, tested on its own.
///
/// An http URL goes through the HTTP proxy, an https URL through the HTTPS proxy (a WebSocket's ws
/// and wss URLs as http and https); a URL whose scheme has none goes through the SOCKS proxy when
/// there is one. Hosts on the bypass list are
/// reached directly, and so are loopback hosts when `bypassesLoopback` is set (the environment's
/// settings do that, as Go and many tools do, so a machine-wide `http_proxy` never captures
/// requests to a local server).
struct ProxySettings: Sendable, Equatable {
    /// For http URLs.
    var httpProxy: TransportProxy?
    /// For https URLs.
    var httpsProxy: TransportProxy?
    /// For URLs whose scheme has no HTTP proxy above.
    var socksProxy: TransportProxy?
    /// Hosts reached directly.
    var bypass: ProxyBypassList = .empty
    /// Whether loopback hosts are reached directly whatever the lists say.
    var bypassesLoopback = false

    /// No proxy at all.
    static let direct = ProxySettings()

    /// The proxy for `url`, or nil for a direct connection.
    func proxy(for url: URL) -> TransportProxy? {
        // Without any proxy the URL is not even read (its parts cost a Foundation call each).
        guard httpProxy != nil || httpsProxy != nil || socksProxy != nil else { return nil }
        guard let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else { return nil }
        let port = url.port ?? (scheme == "https" || scheme == "wss" ? 443 : 80)
        if bypassesLoopback, ProxyBypassList.isLoopback(host) { return nil }
        if bypass.bypasses(host: host, port: port) { return nil }
        switch scheme {
        case "http", "ws": return httpProxy ?? socksProxy
        case "https", "wss": return httpsProxy ?? socksProxy
        default: return nil
        }
    }
}

extension ProxySettings {
    /// Reads URLSession's proxy dictionary keys: `HTTPEnable`, `HTTPProxy`, `HTTPPort`,
    /// `HTTPSEnable`, `HTTPSProxy`, `HTTPSPort`, `SOCKSEnable`, `SOCKSProxy`, `SOCKSPort`, and the
    /// `ExceptionsList` of hosts reached directly.
    ///
    /// A proxy counts when its `...Enable` value is true (a Bool, a non-zero number or "1"/"true")
    /// and its host is not empty. A missing port is 80 for HTTP and HTTPS proxies and 1080 for SOCKS.
    init(connectionProxyDictionary dictionary: [AnyHashable: Any]) {
        func value(_ key: String) -> Any? { dictionary[AnyHashable(key)] }
        func isEnabled(_ key: String) -> Bool {
            switch value(key) {
            case let flag as Bool: flag
            case let number as NSNumber: number.intValue != 0
            case let number as Int: number != 0
            case let text as String: ["1", "true", "yes"].contains(text.lowercased())
            default: false
            }
        }
        func port(_ key: String, default fallback: Int) -> Int {
            let port: Int? = switch value(key) {
            case let number as Int: number
            case let number as NSNumber: number.intValue
            case let text as String: Int(text)
            default: nil
            }
            return port.flatMap { (1...65535).contains($0) ? $0 : nil } ?? fallback
        }
        func proxy(_ prefix: String, kind: TransportProxy.Kind, defaultPort: Int) -> TransportProxy? {
            guard isEnabled(prefix + "Enable"),
                  let host = (value(prefix + "Proxy") as? String)?.trimmingCharacters(in: .whitespaces),
                  !host.isEmpty else { return nil }
            return TransportProxy(kind: kind, host: host, port: port(prefix + "Port", default: defaultPort))
        }
        self.init(httpProxy: proxy("HTTP", kind: .http, defaultPort: 80),
                  httpsProxy: proxy("HTTPS", kind: .http, defaultPort: 80),
                  socksProxy: proxy("SOCKS", kind: .socks, defaultPort: 1080),
                  bypass: ProxyBypassList(entries: (value("ExceptionsList") as? [String]) ?? []))
    }
}
