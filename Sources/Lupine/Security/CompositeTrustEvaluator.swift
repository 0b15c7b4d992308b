#if !canImport(Security)
import Foundation

/// Runs several evaluators in order; the server is trusted when none throws.
public final class CompositeTrustEvaluator: ServerTrustEvaluating {
    private let evaluators: [any ServerTrustEvaluating]

    /// Creates the evaluator.
    ///
    /// - Parameter evaluators: The evaluators, run in this order.
    public init(evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    /// - Throws: The error of the first evaluator that throws.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        try evaluators.evaluate(trust, forHost: host)
    }
}

extension ServerTrustEvaluating where Self == CompositeTrustEvaluator {
    /// A `CompositeTrustEvaluator` of `evaluators`.
    public static func composite(evaluators: [any ServerTrustEvaluating]) -> CompositeTrustEvaluator {
        CompositeTrustEvaluator(evaluators: evaluators)
    }
}
#endif
