import NIOHTTP1

extension TransportResponseHead {
    /// The head of `head`, as the transport reports it.
    init(_ head: HTTPResponseHead) {
        let fields: [HTTPHeader]
        if head.version.major >= 2 {
            // swift-nio-http2's HTTP/1 codec adds `transfer-encoding: chunked` to a response without
            // content-length, for HTTP/1 handlers. HTTP/2 has no transfer-encoding (RFC 9113 section
            // 8.2.2; swift-nio-http2 refuses one from the peer), so any here is the codec's: the
            // caller sees the fields the server sent, as URLSession shows them.
            fields = head.headers.compactMap { name, value in
                name.lupineEqualsIgnoringASCIICase("transfer-encoding") ? nil : HTTPHeader(name: name, value: value)
            }
        } else {
            fields = head.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        }
        self.init(statusCode: Int(head.status.code), httpVersion: Self.versionText(head.version), headerFields: fields)
    }

    private static func versionText(_ version: HTTPVersion) -> String {
        switch (version.major, version.minor) {
        case (1, 1): "HTTP/1.1"
        case (2, 0): "HTTP/2.0"
        case (1, 0): "HTTP/1.0"
        default: "HTTP/\(version.major).\(version.minor)"
        }
    }
}
