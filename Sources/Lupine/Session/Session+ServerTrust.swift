import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// How a Session decides the TLS side of an exchange: the server-trust evaluator from its
// `ServerTrustManager`, and the client certificate from the request or the credential storage.
extension Session {
    /// The TLS policy for a hop to `url`, or nil for the default (system validation, no client
    /// certificate). Plain http and ws get nil.
    ///
    /// - Throws: The manager's error, such as
    ///   `AFError.serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host:))`: the request
    ///   then fails before anything is sent. A non-AFError is wrapped as `.customEvaluationFailed`.
    func tlsPolicy(for url: URL, requestCredential: URLCredential?) throws -> TransportTLSPolicy? {
        try tlsPolicy(for: url, scheme: url.scheme?.lowercased(), requestCredential: requestCredential)
    }

    /// `tlsPolicy(for:requestCredential:)` for a caller that has read `url`'s scheme, lowercased,
    /// already (each read of `URL.scheme` makes the string anew).
    func tlsPolicy(for url: URL, scheme: String?, requestCredential: URLCredential?) throws -> TransportTLSPolicy? {
        guard let scheme, scheme == "https" || scheme == "wss", let host = url.host else { return nil }
        var evaluator: (any ServerTrustEvaluating)?
        if let serverTrustManager {
            do {
                ThreadContract.userCode("a server trust manager")
                evaluator = try serverTrustManager.serverTrustEvaluator(forHost: host)
            } catch {
                throw error.asAFError ?? .serverTrustEvaluationFailed(reason: .customEvaluationFailed(error: error))
            }
        }
        let requestClientCredential = requestCredential as? ClientCertificateCredential
        let clientCredential = requestClientCredential ?? storedClientCredential(host: host, port: url.port ?? 443)
        guard evaluator != nil || clientCredential != nil else { return nil }
        return TransportTLSPolicy(evaluator: evaluator, clientCredential: clientCredential)
    }

    /// The default credential of the configuration's credential storage for client-certificate
    /// authentication with `host` and `port` over https.
    private func storedClientCredential(host: String, port: Int) -> ClientCertificateCredential? {
        guard let storage = configuration.urlCredentialStorage else { return nil }
        let space = URLProtectionSpace(host: host, port: port, protocol: "https", realm: nil,
                                       authenticationMethod: ClientCertificateCredential.authenticationMethod)
        // Matched field by field: corelibs' URLProtectionSpace lookups only find the same instance.
        return Request.storedCredential(for: space, in: storage) as? ClientCertificateCredential
    }
}
