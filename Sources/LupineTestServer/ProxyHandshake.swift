import NIOCore

/// Parses the start of a proxy connection: an HTTP `CONNECT` request head or a SOCKS5 greeting
/// and connect request (no authentication, RFC 1928).
enum ProxyHandshake {
    /// What the bytes received so far ask for.
    enum Outcome {
        /// More bytes are needed.
        case incomplete
        /// The client asks for a tunnel to `host:port`; `reply` is sent once it is open.
        case tunnel(host: String, port: Int, record: ProxyRecord, reply: ByteBuffer)
        /// An absolute-form request for `host:port`: `head` (rewritten to origin form, without
        /// the proxy's credentials, asking the origin to close after its response) is sent to the
        /// origin, then every byte after it, both ways.
        case forward(host: String, port: Int, record: ProxyRecord, head: ByteBuffer, consumed: Int)
        /// The SOCKS greeting was read: `reply` is sent and the connect request follows.
        case socksGreeting(reply: ByteBuffer, consumed: Int)
        /// The proxy refuses: `reply` is sent, then the connection closes.
        case refuse(record: ProxyRecord?, reply: ByteBuffer)
    }

    /// Largest HTTP request head accepted.
    static let maximumHeadBytes = 64 * 1024

    /// Reads an HTTP proxy request: a `CONNECT host:port` (a tunnel, refused to a port outside
    /// `connectPorts` when that is not nil, as squid refuses CONNECT except to 443 by default) or an
    /// absolute-form request such as `GET http://host:port/path HTTP/1.1`, forwarded to the origin.
    /// Host names under `loopbackDomains` are reached at 127.0.0.1 (see `loopbackAddress(for:loopbackDomains:)`).
    static func httpRequest(_ buffer: ByteBuffer, requiredAuthorization: String?, connectPorts: Set<Int>?,
                            loopbackDomains: Set<String> = []) -> Outcome {
        let bytes = Array(buffer.readableBytesView)
        guard let end = headEnd(in: bytes) else {
            return bytes.count > maximumHeadBytes ? .refuse(record: nil, reply: status(431, "Request Header Fields Too Large")) : .incomplete
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let requestLine = (lines.first ?? "").split(separator: " ").map(String.init)
        guard requestLine.count == 3 else { return .refuse(record: nil, reply: status(400, "Bad Request")) }
        let fields = lines.dropFirst().compactMap { line -> ProxyRecord.HeaderField? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return ProxyRecord.HeaderField(name: String(line[..<colon]),
                                           value: String(line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }))
        }
        let (method, target) = (requestLine[0], requestLine[1])
        func record(_ status: Int) -> ProxyRecord {
            ProxyRecord(method: method, target: target, headerFields: fields, status: status)
        }
        if let requiredAuthorization,
           record(0).header("Proxy-Authorization") != requiredAuthorization {
            return .refuse(record: record(407), reply: status(407, "Proxy Authentication Required",
                                                              extra: "Proxy-Authenticate: Basic realm=\"LupineTestProxy\"\r\n"))
        }
        guard method == "CONNECT" else {
            return forward(method: method, target: target, version: requestLine[2], fields: fields, consumed: end + 4,
                           loopbackDomains: loopbackDomains, record: record)
        }
        guard let colon = target.lastIndex(of: ":"), let port = Int(target[target.index(after: colon)...]),
              let address = loopbackAddress(for: String(target[..<colon]), loopbackDomains: loopbackDomains) else {
            // Only loopback targets: the proxy must not reach out of the test machine.
            return .refuse(record: record(403), reply: status(403, "Forbidden"))
        }
        if let connectPorts, !connectPorts.contains(port) {
            return .refuse(record: record(403), reply: status(403, "Forbidden"))
        }
        return .tunnel(host: address, port: port, record: record(200),
                       reply: ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n"))
    }

    /// An absolute-form request, rewritten for the origin.
    private static func forward(method: String, target: String, version: String, fields: [ProxyRecord.HeaderField],
                                consumed: Int, loopbackDomains: Set<String>, record: (Int) -> ProxyRecord) -> Outcome {
        guard target.hasPrefix("http://") else {
            // Origin-form is for servers, not proxies.
            return .refuse(record: record(400), reply: status(400, "Bad Request"))
        }
        let rest = target.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        var path = String(rest.dropFirst(authority.count))
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        let host: String
        let port: Int
        if let colon = authority.lastIndex(of: ":"), let parsed = Int(authority[authority.index(after: colon)...]) {
            host = String(authority[..<colon])
            port = parsed
        } else {
            host = String(authority)
            port = 80
        }
        guard let address = loopbackAddress(for: host, loopbackDomains: loopbackDomains) else {
            return .refuse(record: record(403), reply: status(403, "Forbidden"))
        }
        var head = "\(method) \(path) \(version)\r\n"
        for field in fields {
            let name = field.name.lowercased()
            if name == "proxy-authorization" || name == "connection" || name == "proxy-connection" { continue }
            head += "\(field.name): \(field.value)\r\n"
        }
        head += "Connection: close\r\n\r\n"
        return .forward(host: address, port: port, record: record(200), head: ByteBuffer(string: head), consumed: consumed)
    }

    static func socks(_ buffer: ByteBuffer, greeted: Bool, loopbackDomains: Set<String> = []) -> Outcome {
        let bytes = Array(buffer.readableBytesView)
        guard bytes.count >= 2 else { return .incomplete }
        guard bytes[0] == 5 else { return .refuse(record: nil, reply: ByteBuffer()) }
        if !greeted {
            let methodCount = Int(bytes[1])
            guard bytes.count >= 2 + methodCount else { return .incomplete }
            // Method 0: no authentication; 0xFF: none acceptable.
            let acceptsNoAuthentication = bytes[2..<(2 + methodCount)].contains(0)
            let reply = ByteBuffer(bytes: [5, acceptsNoAuthentication ? 0 : 0xFF])
            return acceptsNoAuthentication ? .socksGreeting(reply: reply, consumed: 2 + methodCount) : .refuse(record: nil, reply: reply)
        }
        guard bytes.count >= 5 else { return .incomplete }
        let host: String
        let addressEnd: Int
        switch bytes[3] {
        case 1:
            addressEnd = 4 + 4
            guard bytes.count >= addressEnd + 2 else { return .incomplete }
            host = bytes[4..<addressEnd].map(String.init).joined(separator: ".")
        case 3:
            addressEnd = 5 + Int(bytes[4])
            guard bytes.count >= addressEnd + 2 else { return .incomplete }
            host = String(decoding: bytes[5..<addressEnd], as: UTF8.self)
        default:
            // IPv6 and unknown address types: "address type not supported".
            return .refuse(record: nil, reply: socksReply(8))
        }
        let port = Int(bytes[addressEnd]) << 8 | Int(bytes[addressEnd + 1])
        let record = ProxyRecord(method: "SOCKS5", target: "\(host):\(port)", headerFields: [], status: 200)
        guard bytes[1] == 1, let address = loopbackAddress(for: host, loopbackDomains: loopbackDomains) else {
            // Only CONNECT to loopback targets: "connection not allowed by ruleset".
            return .refuse(record: record, reply: socksReply(2))
        }
        return .tunnel(host: address, port: port, record: record, reply: socksReply(0))
    }

    private static func socksReply(_ code: UInt8) -> ByteBuffer {
        ByteBuffer(bytes: [5, code, 0, 1, 0, 0, 0, 0, 0, 0])
    }

    private static func status(_ code: Int, _ reason: String, extra: String = "") -> ByteBuffer {
        ByteBuffer(string: "HTTP/1.1 \(code) \(reason)\r\n\(extra)Content-Length: 0\r\nConnection: close\r\n\r\n")
    }

    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }

    /// Where the proxy connects for `host`: a loopback host as it is, a name equal to or under one
    /// of `loopbackDomains` at 127.0.0.1 (as if a resolver answered so for the whole domain); nil
    /// for any other host, which the proxy refuses: it must not reach out of the test machine.
    private static func loopbackAddress(for host: String, loopbackDomains: Set<String>) -> String? {
        if host == "localhost" || host.hasPrefix("127.") { return host }
        let name = host.lowercased()
        let routed = loopbackDomains.contains { domain in
            let domain = domain.lowercased()
            return name == domain || name.hasSuffix("." + domain)
        }
        return routed ? "127.0.0.1" : nil
    }
}
