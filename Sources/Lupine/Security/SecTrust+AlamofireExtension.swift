#if !canImport(Security)
import Foundation

extension SecTrust: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == SecTrust {
    /// Applies `policy`, then evaluates.
    ///
    /// - Throws: `AFError.serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error:))`
    ///   with an `NSOSStatusErrorDomain` error (`errSecNotTrusted`, `errSecCertificateExpired`,
    ///   `errSecHostNameMismatch`).
    public func evaluate(afterApplying policy: SecPolicy) throws {
        try apply(policy: policy).af.evaluate()
    }

    /// Replaces the trust's policies with `policy` and returns the same trust.
    public func apply(policy: SecPolicy) throws -> SecTrust {
        type.policies = [policy]
        return type
    }

    /// Evaluates the chain against the trust's policies and anchors (the system roots until
    /// `setAnchorCertificates(_:)` is called). Blocks the calling thread while the chain is built.
    ///
    /// - Throws: `AFError.serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error:))`.
    public func evaluate() throws {
        let outcome = type.evaluateNow()
        guard outcome.isSuccess else {
            throw AFError.serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error: outcome.error))
        }
    }

    /// Makes `certificates` the only anchors the trust accepts (the system roots no longer count).
    public func setAnchorCertificates(_ certificates: [SecCertificate]) throws {
        type.anchors = certificates
    }

    /// The public keys of the presented certificates.
    public var publicKeys: [SecKey] {
        certificates.af.publicKeys
    }

    /// The presented certificates, leaf first.
    public var certificates: [SecCertificate] {
        type.certificates
    }

    /// The DER bytes of the presented certificates, leaf first.
    public var certificateData: [Data] {
        certificates.af.data
    }

    /// Evaluates with the SSL policy without host-name validation.
    ///
    /// - Throws: as `evaluate()`.
    public func performDefaultValidation(forHost host: String) throws {
        try evaluate(afterApplying: SecPolicy.af.default)
    }

    /// Evaluates with the SSL policy that validates `host` (a name or an IP address).
    ///
    /// - Throws: as `evaluate()`.
    public func performValidation(forHost host: String) throws {
        try evaluate(afterApplying: SecPolicy.af.hostname(host))
    }
}
#endif
