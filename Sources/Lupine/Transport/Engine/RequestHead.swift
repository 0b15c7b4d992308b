import Foundation
import NIOHTTP1

/// The HTTP/1.1 request head the engine sends for a `TransportRequest` (HTTP/2 streams get the
/// same head, translated by swift-nio-http2).
enum RequestHead {
    /// The head: the request target from the URL's encoded path and query (the whole URL in
    /// absolute form for an HTTP proxy), the request's fields as given, plus `Host` and body
    /// framing when the request does not set them, and `Proxy-Authorization` for the proxy.
    /// - Parameter hostValue: `hostField(for: key)`, which the caller keeps for its connection.
    static func make(for request: TransportRequest, key: ConnectionKey, hostField hostValue: String,
                     upgrade: (any ProtocolUpgrade)? = nil) -> HTTPRequestHead {
        let url = request.url
        var target = url.path(percentEncoded: true)
        if target.isEmpty { target = "/" }
        if let query = url.query(percentEncoded: true) { target += "?" + query }
        if key.sendsAbsoluteForm {
            target = "\(key.usesTLS ? "https" : "http")://\(hostValue)" + target
        }
        var headers = NIOHTTP1.HTTPHeaders()
        headers.reserveCapacity(request.headerFields.count + 4)
        var hasHost = false
        var hasFraming = false
        var hasAcceptEncoding = false
        for field in request.headerFields {
            if !hasHost, field.name.lupineEqualsIgnoringASCIICase("Host") { hasHost = true }
            if !hasAcceptEncoding, field.name.lupineEqualsIgnoringASCIICase("Accept-Encoding") { hasAcceptEncoding = true }
            if !hasFraming, field.name.lupineEqualsIgnoringASCIICase("Content-Length")
                || field.name.lupineEqualsIgnoringASCIICase("Transfer-Encoding") { hasFraming = true }
            headers.add(name: field.name, value: field.value)
        }
        if !hasHost { headers.add(name: "Host", value: hostValue) }
        if !hasFraming {
            if let body = request.body {
                if let length = body.knownLength {
                    headers.add(name: "Content-Length", value: String(length))
                } else {
                    headers.add(name: "Transfer-Encoding", value: "chunked")
                }
            } else if !methodsWithoutBody.contains(request.method.rawValue) {
                headers.add(name: "Content-Length", value: "0")
            }
        }
        // The codings the exchange handler decodes, as `HTTPHeader.defaultAcceptEncoding` lists them.
        if !hasAcceptEncoding { headers.add(name: "Accept-Encoding", value: ContentDecoderRegistry.standard.acceptEncoding) }
        if key.sendsAbsoluteForm, let authorization = request.proxy?.authorization {
            headers.add(name: "Proxy-Authorization", value: authorization)
        }
        upgrade?.prepare(&headers)
        return HTTPRequestHead(version: .http1_1, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue),
                               uri: target, headers: headers)
    }

    /// The `Host` value: the host, bracketed when IPv6, with the port unless it is the scheme's default.
    static func hostField(for key: ConnectionKey) -> String {
        let host = key.hostIsIPv6 ? "[\(key.host)]" : key.host
        return key.port == (key.usesTLS ? 443 : 80) ? host : "\(host):\(key.port)"
    }

    private static let methodsWithoutBody: Set<String> = ["GET", "HEAD", "DELETE", "OPTIONS", "TRACE", "CONNECT"]
}
