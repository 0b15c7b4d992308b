import Foundation

/// Chooses the `ServerTrustEvaluating` for each host a Session connects to over TLS.
///
/// The Session asks `serverTrustEvaluator(forHost:)` before it opens a connection; the evaluator
/// returned then runs during that connection's TLS handshake. Hosts are matched exactly; subclass
/// and override `serverTrustEvaluator(forHost:)` for wildcards.
open class ServerTrustManager: @unchecked Sendable {
    /// Whether a host without an evaluator fails (true) or gets the system's default validation
    /// (false).
    public let allHostsMustBeEvaluated: Bool
    /// Evaluators by exact host name.
    public let evaluators: [String: any ServerTrustEvaluating]

    /// Creates a manager.
    ///
    /// - Parameters:
    ///   - allHostsMustBeEvaluated: Whether a host without an evaluator fails. Default true.
    ///   - evaluators: Evaluators by exact host name (or IP address as written in the URL).
    public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: any ServerTrustEvaluating]) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.evaluators = evaluators
    }

    /// The evaluator for `host`, or nil for the system's default validation.
    ///
    /// - Parameter host: The host of the request's URL.
    /// - Throws: `AFError.serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host:))` when
    ///   `allHostsMustBeEvaluated` is true and no evaluator is registered for `host`.
    open func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        guard let evaluator = evaluators[host] else {
            if allHostsMustBeEvaluated {
                throw AFError.serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host: host))
            }
            return nil
        }
        return evaluator
    }
}
