#if !canImport(Security)
import Foundation

/// Trusts a server whose chain leads to one of the system's trusted roots and, optionally, whose
/// certificate names the host.
public final class DefaultTrustEvaluator: ServerTrustEvaluating {
    private let validateHost: Bool

    /// Creates the evaluator.
    ///
    /// - Parameter validateHost: Whether the leaf must name the host. Default true.
    public init(validateHost: Bool = true) {
        self.validateHost = validateHost
    }

    /// - Throws: `AFError.serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error:))`.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        if validateHost {
            try trust.af.performValidation(forHost: host)
        }
        try trust.af.performDefaultValidation(forHost: host)
    }
}
#endif
