import Foundation
#if canImport(Security)
import Security
#endif

/// Decides whether a server is trusted, during the TLS handshake of the connection that will
/// carry the request.
///
/// Lupine evaluates server trust on Linux too: `evaluate(_:forHost:)` receives a `SecTrust` made
/// from the certificates the server presented. It is called on a thread of Lupine's own
/// (never on the main queue, a Dispatch queue, an event loop or a Swift concurrency thread),
/// and may block.
public protocol ServerTrustEvaluating: Sendable {
    /// Throws to reject the server: the handshake fails and the request is never sent. The
    /// request fails with the thrown `AFError`, or with
    /// `AFError.serverTrustEvaluationFailed(reason: .customEvaluationFailed(error:))` wrapping any
    /// other error.
    ///
    /// - Parameters:
    ///   - trust: The presented chain (leaf first), evaluated against the system roots until
    ///     anchors are set.
    ///   - host: The host of the request's URL.
    func evaluate(_ trust: SecTrust, forHost host: String) throws
}

extension Array where Element == any ServerTrustEvaluating {
    /// Runs each evaluator in order; the first that throws ends the evaluation.
    ///
    /// - Throws: The error of the first evaluator that throws.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        for evaluator in self {
            try evaluator.evaluate(trust, forHost: host)
        }
    }
}
