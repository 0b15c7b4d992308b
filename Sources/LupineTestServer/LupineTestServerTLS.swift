import NIOSSL

/// The TLS identity of a LupineTestServer, read from PEM files.
public struct LupineTestServerTLS: Sendable {
    /// The server's certificate chain (leaf first), PEM.
    public var certificateChainFile: String
    /// The leaf's private key, PEM.
    public var privateKeyFile: String
    /// When set, clients must present a certificate signed by this CA (PEM); the handshake fails otherwise.
    public var clientCAFile: String?

    /// Creates the settings.
    public init(certificateChainFile: String, privateKeyFile: String, clientCAFile: String? = nil) {
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.clientCAFile = clientCAFile
    }

    func configuration() throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(certificateChainFile).map { NIOSSLCertificateSource.certificate($0) }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain,
                                                                     privateKey: .privateKey(try NIOSSLPrivateKey(file: privateKeyFile, format: .pem)))
        if let clientCAFile {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(clientCAFile))
        }
        return configuration
    }
}
