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

#if !canImport(Security)
/// The former name of `DisabledTrustEvaluator`, kept (deprecated, as in Alamofire 5.12) so that
/// older code keeps compiling.
@available(*, deprecated, renamed: "DisabledTrustEvaluator", message: "DisabledEvaluator has been renamed DisabledTrustEvaluator.")
public typealias DisabledEvaluator = DisabledTrustEvaluator
#endif
