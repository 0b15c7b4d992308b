import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Which proxy an exchange goes through, and with which credentials: the configuration's
// `connectionProxyDictionary` when it has one, else the environment's http_proxy, https_proxy,
// all_proxy and no_proxy (read once per process).
extension Session {
    /// The proxy of the settings in force for `url`: the configuration is read on each request,
    /// as its headers are. The process's settings are asked in place: a copy of them (three
    /// proxies and the bypass list, retained and released) cost each GET some 0.3 µs.
    private func configuredProxy(for url: URL) -> TransportProxy? {
        if let dictionary = configuration.connectionProxyDictionary {
            return ProxySettings(connectionProxyDictionary: dictionary).proxy(for: url)
        }
        return ProxyEnvironment.process.proxy(for: url)
    }

    /// The proxy `url` goes through, and `headerFields` without their `Proxy-Authorization`
    /// field when there is a proxy.
    ///
    /// Through a tunnel that field would reach the origin, not the proxy: it is taken off and,
    /// when the proxy has no credentials of its own, sent to an HTTP proxy with its `CONNECT`.
    func proxy(for url: URL, headerFields: inout [HTTPHeader]) -> TransportProxy? {
        guard var proxy = configuredProxy(for: url) else { return nil }
        let isProxyAuthorization = { (field: HTTPHeader) in
            field.name.lupineEqualsIgnoringASCIICase("Proxy-Authorization")
        }
        if let given = headerFields.first(where: isProxyAuthorization), proxy.kind == .http, proxy.authorization == nil {
            proxy.authorization = given.value
        }
        headerFields.removeAll(where: isProxyAuthorization)
        return proxy
    }
}
