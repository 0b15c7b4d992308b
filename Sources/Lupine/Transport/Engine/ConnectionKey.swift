import Foundation

/// What makes two exchanges able to share a connection: the origin (TLS or not, host, port), the
/// proxy they go through (with its credentials), and for TLS the identity of the trust evaluator
/// and of the client certificate that judged and answered the handshake.
struct ConnectionKey: Hashable, Sendable {
    /// https and wss.
    var usesTLS: Bool
    /// The host as written in the URL, lowercased, without IPv6 brackets.
    var host: String
    var port: Int
    var proxy: TransportProxy?
    /// The evaluator instance, or nil for the system's default validation.
    var evaluator: ObjectIdentifier?
    /// The client credential instance, or nil for none.
    var clientCredential: ObjectIdentifier?
    /// WebSocket upgrades need HTTP/1.1: ALPN does not offer h2 on their connections.
    var http1Only: Bool

    /// The key of `request`, or nil when its URL has no host or no scheme the engine speaks.
    /// `shareable` is false for a value-type evaluator, which has no identity: such a request runs
    /// on a connection of its own.
    static func make(for request: TransportRequest, http1Only: Bool = false) -> (key: ConnectionKey, shareable: Bool)? {
        let url = request.url
        guard let scheme = url.scheme, let rawHost = host(of: url), !rawHost.isEmpty else { return nil }
        let usesTLS: Bool
        switch scheme.lowercased() {
        case "http", "ws": usesTLS = false
        case "https", "wss": usesTLS = true
        default: return nil
        }
        var host = rawHost
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        // A plain connection never speaks h2 (no h2c), so a ws:// upgrade shares the http pool
        // unless it must tunnel through a proxy.
        let needsOwnConnections = http1Only && (usesTLS || request.proxy?.kind == .http)
        var key = ConnectionKey(usesTLS: usesTLS, host: lowercased(host), port: url.port ?? (usesTLS ? 443 : 80),
                                proxy: request.proxy, evaluator: nil, clientCredential: nil, http1Only: needsOwnConnections)
        var shareable = true
        if usesTLS, let policy = request.tlsPolicy {
            switch policy.evaluatorIdentity {
            case let .some(identity): key.evaluator = identity
            case .none: shareable = false
            }
            key.clientCredential = policy.clientCredential.map(ObjectIdentifier.init)
        }
        return (key, shareable)
    }

    /// The host of `url`, percent escapes decoded. Decoding parses the host again and copies it, on
    /// every request: skipped when the host as written holds no escape (nearly always).
    private static func host(of url: URL) -> String? {
        guard let written = url.host(percentEncoded: true), !written.utf8.contains(UInt8(ascii: "%")) else { return url.host }
        return written
    }

    /// The host, lowercased: a copy only when it has an uppercase letter.
    private static func lowercased(_ host: String) -> String {
        host.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") || $0 >= 0x80 } ? host.lowercased() : host
    }

    /// "host:port", with brackets around an IPv6 address: how descriptions and logs name it.
    var authority: String {
        hostIsIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// Whether `host` is an IPv6 address literal. (A byte search: `String.contains(String)` goes
    /// through NSString on Linux, two allocations per request.)
    var hostIsIPv6: Bool {
        host.utf8.contains(UInt8(ascii: ":"))
    }

    /// Whether `host` is an IP address literal (which TLS does not allow as SNI).
    var hostIsIPAddress: Bool {
        hostIsIPv6 || (!host.isEmpty && host.utf8.allSatisfy { ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: ".") })
    }

    /// Whether the engine reaches the origin through a `CONNECT` tunnel of an HTTP proxy: for TLS,
    /// and for WebSocket upgrades, which a proxy cannot forward as an absolute-form request.
    var tunnelsThroughProxy: Bool {
        guard let proxy, proxy.kind == .http else { return false }
        return usesTLS || http1Only
    }

    /// Whether requests are sent in absolute form to an HTTP proxy (plain http through it).
    var sendsAbsoluteForm: Bool {
        guard let proxy, proxy.kind == .http else { return false }
        return !tunnelsThroughProxy
    }
}
