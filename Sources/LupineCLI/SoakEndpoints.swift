import Foundation
import Lupine
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where the soak's requests go and the Sessions that send them: the plain server, and when given,
/// a TLS server and an HTTP/2 server (judged by a pinned certificate), an HTTP proxy and a SOCKS5
/// proxy. A kind whose endpoint is missing is not sent (`isAvailable`).
struct SoakEndpoints: Sendable {
    /// The plain HTTP/1.1 server (`lupine serve`).
    let baseURL: String
    let tlsURL: String?
    let http2URL: String?
    /// One Session for the plain server, the faults and cancellations.
    let plain: Session
    /// For the TLS and HTTP/2 servers: the pinned certificate judges 127.0.0.1.
    let pinned: Session?
    /// Through the HTTP proxy: absolute-form requests for http, CONNECT tunnels for https.
    let httpProxied: Session?
    /// Through the SOCKS5 proxy.
    let socksProxied: Session?

    /// - Parameters:
    ///   - httpProxy: "host:port" of an HTTP proxy.
    ///   - socksProxy: "host:port" of a SOCKS5 proxy.
    ///   - pinnedCertificates: The certificates the TLS and HTTP/2 servers' chains must hold, and
    ///     lead to (a private CA's chain: the leaf and its CA).
    init(baseURL: String, tlsURL: String?, http2URL: String?, httpProxy: String?, socksProxy: String?,
         pinnedCertificates: [SecCertificate]) {
        self.baseURL = baseURL
        self.tlsURL = tlsURL
        self.http2URL = http2URL
        plain = Session()
        let trust = pinnedCertificates.isEmpty ? nil : ServerTrustManager(evaluators: [
            // The pinned certificates are the anchors too: the chain is validated up to them, host included.
            "127.0.0.1": PinnedCertificatesTrustEvaluator(certificates: pinnedCertificates, acceptSelfSignedCertificates: true,
                                                          performDefaultValidation: true, validateHost: true),
        ])
        pinned = trust.map { Session(serverTrustManager: $0) }
        httpProxied = httpProxy.flatMap(Self.hostAndPort).map { host, port in
            let configuration = URLSessionConfiguration.af.default
            configuration.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": host, "HTTPPort": port,
                                                       "HTTPSEnable": 1, "HTTPSProxy": host, "HTTPSPort": port]
            return Session(configuration: configuration, serverTrustManager: trust)
        }
        socksProxied = socksProxy.flatMap(Self.hostAndPort).map { host, port in
            let configuration = URLSessionConfiguration.af.default
            configuration.connectionProxyDictionary = ["SOCKSEnable": 1, "SOCKSProxy": host, "SOCKSPort": port]
            return Session(configuration: configuration)
        }
    }

    /// Whether requests of `kind` can be sent with these endpoints.
    func isAvailable(_ kind: SoakKind) -> Bool {
        switch kind {
        case .pinnedTLS: pinned != nil && tlsURL != nil
        case .http2: pinned != nil && http2URL != nil
        case .httpProxy, .faultThroughProxy: httpProxied != nil
        case .connectTunnel: httpProxied != nil && tlsURL != nil
        case .socksProxy: socksProxied != nil
        default: true
        }
    }

    /// The Sessions, for cancelling what they run on Ctrl-C.
    var sessions: [Session] {
        [plain] + [pinned, httpProxied, socksProxied].compactMap { $0 }
    }

    private static func hostAndPort(_ text: String) -> (String, Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        return (String(text[..<colon]), port)
    }
}
