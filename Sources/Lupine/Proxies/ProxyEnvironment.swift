import Foundation

/// The proxy settings of the usual environment variables, as curl and most tools read them.
///
/// - `http_proxy` for http URLs, `https_proxy` for https URLs, `all_proxy` for either when its
///   own variable is unset; the lowercase name wins over the uppercase one. `HTTP_PROXY` is
///   ignored when `REQUEST_METHOD` is set: in a CGI program it comes from the client's `Proxy:`
///   request header ("httpoxy").
/// - A value is `[scheme://][user:password@]host[:port][/]`. No scheme or `http://` is an HTTP
///   proxy (port 80 by default); `socks5://`, `socks5h://` or `socks://` is a SOCKS5 proxy (port
///   1080 by default). `https://` (TLS to the proxy itself) is not supported and is ignored, as
///   is any other scheme. A user and password (percent-decoded) are sent to an HTTP proxy as
///   Basic `Proxy-Authorization` from the first request on.
/// - `no_proxy` lists the hosts reached directly (see `ProxyBypassList`).
/// - Loopback hosts (`localhost`, `127.0.0.0/8`, `::1`) never go through these proxies.
enum ProxyEnvironment {
    /// The settings of the process environment, read once, when first used.
    static let process = settings(from: ProcessInfo.processInfo.environment)

    /// The settings `environment` describes.
    static func settings(from environment: [String: String]) -> ProxySettings {
        func variable(_ name: String) -> String? {
            let isCGI = environment["REQUEST_METHOD"] != nil
            let candidates = name == "http_proxy" && isCGI ? [name] : [name, name.uppercased()]
            return candidates.lazy.compactMap { environment[$0] }.first { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
        }
        let all = variable("all_proxy").flatMap(proxy(from:))
        var settings = ProxySettings()
        for (name, keyPath) in [("http_proxy", \ProxySettings.httpProxy), ("https_proxy", \ProxySettings.httpsProxy)] {
            let proxy = variable(name).flatMap(proxy(from:))
            // An explicit SOCKS URL in http_proxy applies to that scheme only.
            settings[keyPath: keyPath] = proxy ?? (all?.kind == .http ? all : nil)
        }
        if all?.kind == .socks { settings.socksProxy = all }
        settings.bypass = ProxyBypassList(variable("no_proxy") ?? "")
        settings.bypassesLoopback = true
        return settings
    }

    /// The proxy one variable's value names, or nil when it names none that Lupine can use.
    static func proxy(from value: String) -> TransportProxy? {
        var text = value.trimmingCharacters(in: .whitespaces)
        if !text.contains("://") { text = "http://" + text }
        guard let components = URLComponents(string: text),
              let host = components.host, !host.isEmpty else { return nil }
        let kind: TransportProxy.Kind
        let defaultPort: Int
        switch components.scheme?.lowercased() {
        case "http": (kind, defaultPort) = (.http, 80)
        case "socks5", "socks5h", "socks": (kind, defaultPort) = (.socks, 1080)
        default: return nil
        }
        let port = components.port ?? defaultPort
        // A port no connection can use makes the value name no proxy, like an unknown scheme.
        guard (1...65535).contains(port) else { return nil }
        var proxy = TransportProxy(kind: kind, host: host, port: port)
        if kind == .http, let user = components.user, !user.isEmpty {
            proxy.authorization = TransportProxy.basicAuthorization(user: user, password: components.password ?? "")
        }
        return proxy
    }
}
