import NIOConcurrencyHelpers
import NIOSSL

/// The TLS client contexts of the engine, made on first use and shared by its connections.
///
/// Server certificates are judged by a `ServerTrustCheck` installed on each connection (the
/// policy's evaluator, or default validation against the system's roots), so the context itself
/// trusts no root. A client certificate, when given, is part of the context.
/// ALPN offers h2 and http/1.1, or http/1.1 alone for WebSocket upgrades.
final class TLSContexts: Sendable {
    static let shared = TLSContexts()

    private struct Key: Hashable {
        var credential: ObjectIdentifier?
        var offersHTTP2: Bool
    }

    /// The credential is kept with its context so that its identity stays unique.
    private let contexts = NIOLockedValueBox<[Key: (ClientCertificateCredential?, NIOSSLContext)]>([:])

    func context(credential: ClientCertificateCredential?, offersHTTP2: Bool) throws -> NIOSSLContext {
        let key = Key(credential: credential.map(ObjectIdentifier.init), offersHTTP2: offersHTTP2)
        if let cached = contexts.withLockedValue({ $0[key] }) { return cached.1 }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        configuration.trustRoots = .certificates([])
        // Not `.none`, which would skip the callback; the evaluator checks the host name.
        configuration.certificateVerification = .noHostnameVerification
        // A connection Lupine closes (a timeout, a failure, an idle one) is done with: its socket
        // closes at once, as URLSession's does, instead of waiting up to swift-nio-ssl's default
        // 5 s for a silent peer's close_notify (the fault matrix saw a tunnel's socket outlive its
        // timed-out request by those 5 s).
        configuration.shutdownTimeout = .milliseconds(100)
        if let credential {
            configuration.certificateChain = credential.sslCertificates.map { .certificate($0) }
            configuration.privateKey = .privateKey(credential.sslPrivateKey)
        }
        let context = try NIOSSLContext(configuration: configuration)
        contexts.withLockedValue { $0[key] = (credential, context) }
        return context
    }
}
