import Foundation

/// The proxy one exchange goes through, chosen by the Session from its configuration.
public struct TransportProxy: Sendable, Hashable {
    /// How the proxy is spoken to.
    public enum Kind: Sendable, Hashable {
        /// An HTTP proxy: plain http requests go to it in absolute form (`GET http://origin/path`),
        /// https and wss (and ws) through a `CONNECT` tunnel.
        case http
        /// A SOCKS5 proxy, without authentication.
        case socks
    }

    /// How the proxy is spoken to.
    public var kind: Kind
    /// Host name or address of the proxy.
    public var host: String
    /// TCP port of the proxy.
    public var port: Int
    /// The `Proxy-Authorization` value sent to an HTTP proxy with its `CONNECT` request or its
    /// absolute-form requests, such as `Basic dXNlcjpwYXNz`; nil sends none. SOCKS proxies ignore it.
    public var authorization: String?

    /// Creates a proxy description.
    public init(kind: Kind, host: String, port: Int, authorization: String? = nil) {
        self.kind = kind
        self.host = host
        self.port = port
        self.authorization = authorization
    }

    /// `Basic` credentials as a `Proxy-Authorization` value (RFC 7617).
    static func basicAuthorization(user: String, password: String) -> String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
