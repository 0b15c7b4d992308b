#if !canImport(Security)
import Foundation

/// Default validation, optional host validation, then a revocation policy.
///
/// On Linux Lupine has no CRL or OCSP client: the options are accepted and the revocation step
/// checks the chain as default validation does, so this evaluator trusts exactly what
/// `DefaultTrustEvaluator` with the same `validateHost` trusts. It exists so that code written
/// for Apple platforms compiles and keeps its other checks.
public final class RevocationTrustEvaluator: ServerTrustEvaluating {
    /// How revocation is checked (on Linux: recorded, not acted on).
    public struct Options: OptionSet, Sendable {
        /// Use CRLs.
        public static let crl = Options(rawValue: kSecRevocationCRLMethod)
        /// Do not use the network.
        public static let networkAccessDisabled = Options(rawValue: kSecRevocationNetworkAccessDisabled)
        /// Use OCSP.
        public static let ocsp = Options(rawValue: kSecRevocationOCSPMethod)
        /// Prefer CRLs to OCSP.
        public static let preferCRL = Options(rawValue: kSecRevocationPreferCRL)
        /// Require a positive response.
        public static let requirePositiveResponse = Options(rawValue: kSecRevocationRequirePositiveResponse)
        /// Any available method.
        public static let any = Options(rawValue: kSecRevocationUseAnyAvailableMethod)

        /// The flags.
        public let rawValue: CFOptionFlags

        /// Creates options from flags.
        public init(rawValue: CFOptionFlags) {
            self.rawValue = rawValue
        }
    }

    private let performDefaultValidation: Bool
    private let validateHost: Bool
    private let options: Options

    /// Creates the evaluator.
    ///
    /// - Parameters:
    ///   - performDefaultValidation: Whether the chain must lead to a system root. Default true.
    ///   - validateHost: Whether the leaf must name the host. Default true.
    ///   - options: Revocation options (not acted on, see the type's documentation). Default `.any`.
    public init(performDefaultValidation: Bool = true, validateHost: Bool = true, options: Options = .any) {
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.options = options
    }

    /// - Throws: `AFError.serverTrustEvaluationFailed(reason:)` with `.trustEvaluationFailed(error:)`.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        if performDefaultValidation {
            try trust.af.performDefaultValidation(forHost: host)
        }
        if validateHost {
            try trust.af.performValidation(forHost: host)
        }
        try trust.af.evaluate(afterApplying: SecPolicy.af.revocation(options: options))
    }
}

extension ServerTrustEvaluating where Self == RevocationTrustEvaluator {
    /// A `RevocationTrustEvaluator` with the default arguments.
    public static var revocationChecking: RevocationTrustEvaluator { RevocationTrustEvaluator() }

    /// A `RevocationTrustEvaluator`; see its initializer for the parameters.
    public static func revocationChecking(performDefaultValidation: Bool = true,
                                          validateHost: Bool = true,
                                          options: RevocationTrustEvaluator.Options = .any) -> RevocationTrustEvaluator {
        RevocationTrustEvaluator(performDefaultValidation: performDefaultValidation, validateHost: validateHost, options: options)
    }
}
#endif
