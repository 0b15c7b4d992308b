import Foundation
import NIOHTTP1

/// The HTTP/1.1 request head Lupine's TLS connections send for a `TransportRequest`.
enum TLSRequestHead {
    /// The head: target from the URL's encoded path and query, the request's fields as given,
    /// plus `Host` and body framing when the request does not set them.
    static func make(for request: TransportRequest) -> HTTPRequestHead {
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        var headers = NIOHTTP1.HTTPHeaders(request.headerFields.map { ($0.name, $0.value) })
        if !headers.contains(name: "Host") {
            var host = request.url.host ?? ""
            if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
            if let port = request.url.port, port != 443 { host += ":\(port)" }
            headers.add(name: "Host", value: host)
        }
        if !headers.contains(name: "Content-Length"), !headers.contains(name: "Transfer-Encoding") {
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
        return HTTPRequestHead(version: .http1_1, method: NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue),
                               uri: target, headers: headers)
    }

    private static let methodsWithoutBody: Set<String> = ["GET", "HEAD", "DELETE", "OPTIONS", "TRACE", "CONNECT"]
}
