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

    /// Validates the trust after applying `policy`, handing a failure's status and result to
    /// `errorProducer` (the Security framework's older evaluation, kept as in Alamofire).
    ///
    /// - Throws: What `apply(policy:)` throws, or the error `errorProducer` makes.
    @available(iOS, introduced: 10, deprecated: 12, renamed: "evaluate(afterApplying:)")
    @available(macOS, introduced: 10.12, deprecated: 10.14, renamed: "evaluate(afterApplying:)")
    @available(tvOS, introduced: 10, deprecated: 12, renamed: "evaluate(afterApplying:)")
    @available(watchOS, introduced: 3, deprecated: 5, renamed: "evaluate(afterApplying:)")
    public func validate(policy: SecPolicy, errorProducer: (_ status: OSStatus, _ result: SecTrustResultType) -> any Error) throws {
        try apply(policy: policy).af.validate(errorProducer: errorProducer)
    }

    /// Replaces the trust's policies with `policy` and returns the same trust.
    ///
    /// - Throws: `AFError.serverTrustEvaluationFailed(reason: .policyApplicationFailed(trust:policy:status:))`
    ///   when the policy cannot be applied.
    public func apply(policy: SecPolicy) throws -> SecTrust {
        let status = SecTrustSetPolicies(type, policy)
        guard status.af.isSuccess else {
            throw AFError.serverTrustEvaluationFailed(reason: .policyApplicationFailed(trust: type, policy: policy, status: status))
        }
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

    /// Validates the trust with its policies, handing a failure's status and result to
    /// `errorProducer` (the Security framework's older evaluation, kept as in Alamofire). Blocks
    /// the calling thread while the chain is built.
    ///
    /// - Throws: The error `errorProducer` makes from the evaluation's `OSStatus` (for example
    ///   `errSecNotTrusted`) and `SecTrustResultType` (`.recoverableTrustFailure`).
    @available(iOS, introduced: 10, deprecated: 12, renamed: "evaluate()")
    @available(macOS, introduced: 10.12, deprecated: 10.14, renamed: "evaluate()")
    @available(tvOS, introduced: 10, deprecated: 12, renamed: "evaluate()")
    @available(watchOS, introduced: 3, deprecated: 5, renamed: "evaluate()")
    public func validate(errorProducer: (_ status: OSStatus, _ result: SecTrustResultType) -> any Error) throws {
        let outcome = type.evaluateNow()
        guard outcome.status.af.isSuccess, outcome.result.af.isSuccess else {
            throw errorProducer(outcome.status, outcome.result)
        }
    }

    /// Makes `certificates` the only anchors the trust accepts (the system roots no longer count).
    ///
    /// - Throws: `AFError.serverTrustEvaluationFailed(reason: .settingAnchorCertificatesFailed(status:certificates:))`.
    public func setAnchorCertificates(_ certificates: [SecCertificate]) throws {
        let status = SecTrustSetAnchorCertificates(type, certificates)
        guard status.af.isSuccess else {
            throw AFError.serverTrustEvaluationFailed(reason: .settingAnchorCertificatesFailed(status: status, certificates: certificates))
        }
        let onlyStatus = SecTrustSetAnchorCertificatesOnly(type, true)
        guard onlyStatus.af.isSuccess else {
            throw AFError.serverTrustEvaluationFailed(reason: .settingAnchorCertificatesFailed(status: onlyStatus, certificates: certificates))
        }
    }

    /// The public keys of the certificates of the trust's chain.
    public var publicKeys: [SecKey] {
        certificates.af.publicKeys
    }

    /// The trust's certificate chain, leaf first, as the Security framework's
    /// `SecTrustCopyCertificateChain` reports it: see `SecTrustCopyCertificateChain(_:)`.
    public var certificates: [SecCertificate] {
        type.builtChain
    }

    /// The DER bytes of the certificates of the trust's chain, leaf first.
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
