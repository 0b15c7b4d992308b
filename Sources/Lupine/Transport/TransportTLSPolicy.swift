import Foundation

/// How an https or wss exchange authenticates: the server-trust evaluator that runs during the
/// TLS handshake, and the client certificate to present if the server asks for one.
///
/// Session sets it from its `ServerTrustManager` and from the request's or the credential
/// storage's `ClientCertificateCredential`; a transport that cannot honour it must fail the
/// exchange rather than send the request without it.
public struct TransportTLSPolicy: Sendable {
    /// Decides whether the server is trusted; nil for the system's default validation (trusted
    /// roots and host name).
    public var evaluator: (any ServerTrustEvaluating)?
    /// The identity presented to a server that asks for a client certificate.
    public var clientCredential: ClientCertificateCredential?

    /// Creates a policy.
    public init(evaluator: (any ServerTrustEvaluating)? = nil, clientCredential: ClientCertificateCredential? = nil) {
        self.evaluator = evaluator
        self.clientCredential = clientCredential
    }

    /// Identifies the evaluator for connection reuse: connections are shared only by exchanges
    /// with the same evaluator instance. A value-type evaluator has no identity, so its
    /// connections are not reused (nil).
    var evaluatorIdentity: ObjectIdentifier?? {
        guard let evaluator else { return .some(nil) }
        guard type(of: evaluator) is AnyClass else { return nil }
        return .some(ObjectIdentifier(evaluator as AnyObject))
    }
}
