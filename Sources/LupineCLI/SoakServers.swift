import LupineTestServer

/// The servers `lupine serve --tls-certificate` runs beside the plain one, for `lupine soak`: a
/// TLS server and an HTTP/2 server presenting the certificate, an HTTP proxy (CONNECT to any
/// port) and a SOCKS5 proxy.
struct SoakServers {
    let tls: LupineTestServer
    let http2: LupineHTTP2TestServer
    let httpProxy: LupineTestProxy
    let socksProxy: LupineTestProxy

    static func start(certificateChainFile: String, privateKeyFile: String) async throws -> SoakServers {
        let identity = LupineTestServerTLS(certificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile)
        return SoakServers(tls: try await LupineTestServer.start(port: 0, tls: identity),
                           http2: try await LupineHTTP2TestServer.start(tls: identity),
                           httpProxy: try await LupineTestProxy.start(connectPorts: nil),
                           socksProxy: try await LupineTestProxy.start(kind: .socks5))
    }

    /// The lines `lupine serve` prints after its base URL: `tls URL`, `h2 URL`, `http-proxy
    /// host:port`, `socks-proxy host:port`.
    var lines: [String] {
        ["tls \(tls.baseURL)", "h2 \(http2.url(""))", "http-proxy 127.0.0.1:\(httpProxy.port)",
         "socks-proxy 127.0.0.1:\(socksProxy.port)"]
    }

    func shutdown() async throws {
        try await tls.shutdown()
        try await http2.shutdown()
        try await httpProxy.shutdown()
        try await socksProxy.shutdown()
    }
}
