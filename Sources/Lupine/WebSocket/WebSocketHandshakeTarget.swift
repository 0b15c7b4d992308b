import Foundation
import NIOCore
import NIOHTTP1

/// Where a WebSocket connection goes and the opening request it sends (RFC 6455 section 4.1).
///
/// `ws` and `http` URLs connect in the clear, `wss` and `https` with TLS (a redirect may lead a
/// WebSocket request to an http URL).
struct WebSocketHandshakeTarget {
    let host: String
    let port: Int
    let usesTLS: Bool
    /// The request target: path and query, as sent on the request line.
    let requestTarget: String
    /// The value of the Host header.
    let hostHeader: String

    /// Header fields the upgrade machinery sets itself, or that would contradict it.
    static let reservedFields: Set<String> = [
        "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version",
        "sec-websocket-extensions", "content-length", "transfer-encoding",
    ]

    init?(url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: true),
              let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else { return nil }
        switch scheme {
        case "ws", "http": usesTLS = false
        case "wss", "https": usesTLS = true
        default: return nil
        }
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        self.host = bareHost
        let defaultPort = usesTLS ? 443 : 80
        port = components.port ?? defaultPort
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        requestTarget = components.percentEncodedQuery.map { path + "?" + $0 } ?? path
        let hostForHeader = bareHost.contains(":") ? "[\(bareHost)]" : bareHost
        hostHeader = port == defaultPort ? hostForHeader : "\(hostForHeader):\(port)"
    }

    /// The name sent for SNI: none for an IP address, which TLS does not allow there.
    var serverNameIndication: String? {
        let isIPAddress = host.contains(":") || host.allSatisfy { $0.isNumber || $0 == "." }
        return isIPAddress ? nil : host
    }

    /// The opening request: GET with the request's header fields, minus those the upgrade sets.
    func requestHead(for request: TransportRequest) -> HTTPRequestHead {
        var headers = NIOHTTP1.HTTPHeaders()
        headers.add(name: "Host", value: hostHeader)
        for field in request.headerFields where !Self.reservedFields.contains(field.name.lowercased()) {
            headers.add(name: field.name, value: field.value)
        }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: requestTarget, headers: headers)
    }
}
