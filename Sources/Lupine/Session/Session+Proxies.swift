import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Which proxy an exchange goes through, and with which credentials: the configuration's
// `connectionProxyDictionary` when it has one, else the environment's http_proxy, https_proxy,
// all_proxy and no_proxy (read once per process).
extension Session {
    /// The settings in force: the configuration is read on each request, as its headers are.
    var proxySettings: ProxySettings {
        if let dictionary = configuration.connectionProxyDictionary {
            return ProxySettings(connectionProxyDictionary: dictionary)
        }
        return ProxyEnvironment.process
    }

    /// The proxy `url` goes through, and `headerFields` without their `Proxy-Authorization`
    /// field when there is a proxy.
    ///
    /// Through a tunnel that field would reach the origin, not the proxy: it is taken off and,
    /// when the proxy has no credentials of its own, sent to an HTTP proxy with its `CONNECT`.
    func proxy(for url: URL, headerFields: inout [HTTPHeader]) -> TransportProxy? {
        guard var proxy = proxySettings.proxy(for: url) else { return nil }
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
