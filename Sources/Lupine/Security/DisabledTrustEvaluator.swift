#if !canImport(Security)
import Foundation

/// Trusts every server, whatever its certificate. For tests and development only: it turns TLS
/// into encryption without authentication.
public final class DisabledTrustEvaluator: ServerTrustEvaluating {
    /// Creates the evaluator.
    public init() {}

    /// Never throws.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {}
}
#endif
