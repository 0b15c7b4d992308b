import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOSSL

/// A client certificate and its private key, presented to servers that ask for one (mutual TLS).
///
/// Apple's `URLCredential(identity:certificates:persistence:)` does not exist on Linux; this
/// subclass takes its place. Use it in either of two ways:
/// - per request: `session.request(url).authenticate(with: credential)`;
/// - per server: store it in the configuration's `urlCredentialStorage` as the default credential
///   of `URLProtectionSpace(host:port:protocol: "https", realm: nil,
///   authenticationMethod: ClientCertificateCredential.authenticationMethod)`.
///
/// The request's credential wins over the stored one. An https request with a client
/// certificate runs on Lupine's own TLS connections (see `TransportTLSPolicy`).
public final class ClientCertificateCredential: URLCredential, @unchecked Sendable {
    /// `NSURLAuthenticationMethodClientCertificate`, which corelibs-foundation marks unavailable.
    public static let authenticationMethod = "NSURLAuthenticationMethodClientCertificate"

    /// The certificates presented, leaf first.
    public let certificateChain: [SecCertificate]
    let sslCertificates: [NIOSSLCertificate]
    let sslPrivateKey: NIOSSLPrivateKey

    /// Creates a credential from certificates and a private key.
    ///
    /// - Parameters:
    ///   - certificateChain: The client certificate first, then any intermediates.
    ///   - privateKey: The private key of the first certificate, PEM or DER (PKCS#8, PKCS#1 or SEC1).
    ///   - passphrase: The passphrase of an encrypted PEM key, or nil.
    ///   - persistence: As for any URLCredential. Default `.forSession`.
    /// - Throws: The parsing error when a certificate or the key cannot be read.
    public init(certificateChain: [SecCertificate], privateKey: Data, passphrase: String? = nil,
                persistence: URLCredential.Persistence = .forSession) throws {
        self.certificateChain = certificateChain
        self.sslCertificates = try certificateChain.map { try NIOSSLCertificate(bytes: Array($0.derData), format: .der) }
        self.sslPrivateKey = try Self.privateKey(Array(privateKey), passphrase: passphrase)
        super.init(user: "", password: "", persistence: persistence)
    }

    /// Creates a credential from a PKCS#12 archive (.p12, .pfx).
    ///
    /// - Parameters:
    ///   - pkcs12Data: The archive.
    ///   - passphrase: Its passphrase.
    ///   - persistence: As for any URLCredential. Default `.forSession`.
    /// - Throws: The parsing error when the archive cannot be read with `passphrase`.
    public init(pkcs12Data: Data, passphrase: String, persistence: URLCredential.Persistence = .forSession) throws {
        let bundle = try NIOSSLPKCS12Bundle(buffer: Array(pkcs12Data), passphrase: Array(passphrase.utf8))
        self.sslCertificates = bundle.certificateChain
        self.sslPrivateKey = bundle.privateKey
        self.certificateChain = bundle.certificateChain.compactMap { try? SecCertificate(derData: Data($0.toDERBytes())) }
        super.init(user: "", password: "", persistence: persistence)
    }

    /// Not supported: a client identity is not archived.
    public required init?(coder: NSCoder) {
        return nil
    }

    private static func privateKey(_ bytes: [UInt8], passphrase: String?) throws -> NIOSSLPrivateKey {
        if let passphrase {
            return try NIOSSLPrivateKey(bytes: bytes, format: .pem) { $0(passphrase.utf8) }
        }
        if let pem = try? NIOSSLPrivateKey(bytes: bytes, format: .pem) { return pem }
        return try NIOSSLPrivateKey(bytes: bytes, format: .der)
    }
}
