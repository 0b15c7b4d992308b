import NIOConcurrencyHelpers
import NIOSSL

/// The TLS client contexts of Lupine's own TLS connections (https with a `TransportTLSPolicy`,
/// and wss), one per client credential, made on first use.
final class TLSClientContextCache: Sendable {
    static let shared = TLSClientContextCache()

    /// Keyed by the credential's identity; the credential is kept so that the identity stays unique.
    private let contexts = NIOLockedValueBox<[ObjectIdentifier?: (ClientCertificateCredential?, NIOSSLContext)]>([:])

    /// The context presenting `credential` (none for nil). Server certificates are verified by a
    /// `ServerTrustCheck` installed on each connection, so no trust roots are loaded.
    func context(for credential: ClientCertificateCredential?) throws -> NIOSSLContext {
        let identity = credential.map(ObjectIdentifier.init)
        if let cached = contexts.withLockedValue({ $0[identity] }) { return cached.1 }
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .certificates([])
        // Not `.none`, which would skip the custom callback; host names are the evaluator's to check.
        configuration.certificateVerification = .noHostnameVerification
        if let credential {
            configuration.certificateChain = credential.sslCertificates.map { .certificate($0) }
            configuration.privateKey = .privateKey(credential.sslPrivateKey)
        }
        let context = try NIOSSLContext(configuration: configuration)
        contexts.withLockedValue { $0[identity] = (credential, context) }
        return context
    }
}
