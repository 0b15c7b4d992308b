#if !canImport(Security)
import Foundation

/// Trusts a server that presents a certificate with one of the pinned public keys, after
/// optional default and host validation.
public final class PublicKeysTrustEvaluator: ServerTrustEvaluating {
    private let keys: [SecKey]
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// Creates the evaluator.
    ///
    /// - Parameters:
    ///   - keys: The pinned keys. Default: the keys of the certificates in the main bundle's resources.
    ///   - performDefaultValidation: Whether the chain must lead to a system root. Default true.
    ///   - validateHost: Whether the leaf must name the host. Default true.
    public init(keys: [SecKey] = Bundle.main.af.publicKeys,
                performDefaultValidation: Bool = true,
                validateHost: Bool = true) {
        self.keys = keys
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// - Throws: `AFError.serverTrustEvaluationFailed(reason:)` with `.noPublicKeysFound` for an
    ///   empty key list, `.trustEvaluationFailed(error:)` when validation fails, or
    ///   `.publicKeyPinningFailed(host:trust:pinnedKeys:serverKeys:)`.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        guard !keys.isEmpty else {
            throw AFError.serverTrustEvaluationFailed(reason: .noPublicKeysFound)
        }
        if performDefaultValidation {
            try trust.af.performDefaultValidation(forHost: host)
        }
        if validateHost {
            try trust.af.performValidation(forHost: host)
        }
        let serverKeys = trust.af.publicKeys
        guard serverKeys.contains(where: keys.contains) else {
            throw AFError.serverTrustEvaluationFailed(reason: .publicKeyPinningFailed(host: host,
                                                                                       trust: trust,
                                                                                       pinnedKeys: keys,
                                                                                       serverKeys: serverKeys))
        }
    }
}

extension ServerTrustEvaluating where Self == PublicKeysTrustEvaluator {
    /// A `PublicKeysTrustEvaluator` with the default arguments.
    public static var publicKeys: PublicKeysTrustEvaluator { PublicKeysTrustEvaluator() }

    /// A `PublicKeysTrustEvaluator`; see its initializer for the parameters.
    public static func publicKeys(keys: [SecKey] = Bundle.main.af.publicKeys,
                                  performDefaultValidation: Bool = true,
                                  validateHost: Bool = true) -> PublicKeysTrustEvaluator {
        PublicKeysTrustEvaluator(keys: keys, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}
#endif
