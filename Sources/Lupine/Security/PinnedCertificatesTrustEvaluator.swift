#if !canImport(Security)
import Foundation

/// Trusts a server that presents one of the pinned certificates (leaf, intermediate or root,
/// compared byte for byte), after optional default and host validation.
public final class PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    private let certificates: [SecCertificate]
    private let acceptSelfSignedCertificates: Bool
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// Creates the evaluator.
    ///
    /// - Parameters:
    ///   - certificates: The pinned certificates. Default: those in the main bundle's resources.
    ///   - acceptSelfSignedCertificates: Whether the pinned certificates become the only anchors
    ///     before validation (for self-signed servers and private CAs). Default false.
    ///   - performDefaultValidation: Whether the chain must lead to an anchor. Default true.
    ///   - validateHost: Whether the leaf must name the host. Default true.
    public init(certificates: [SecCertificate] = Bundle.main.af.certificates,
                acceptSelfSignedCertificates: Bool = false,
                performDefaultValidation: Bool = true,
                validateHost: Bool = true) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// - Throws: `AFError.serverTrustEvaluationFailed(reason:)` with `.noCertificatesFound` for an
    ///   empty pin list, `.trustEvaluationFailed(error:)` when validation fails, or
    ///   `.certificatePinningFailed(host:trust:pinnedCertificates:serverCertificates:)`.
    public func evaluate(_ trust: SecTrust, forHost host: String) throws {
        guard !certificates.isEmpty else {
            throw AFError.serverTrustEvaluationFailed(reason: .noCertificatesFound)
        }
        if acceptSelfSignedCertificates {
            try trust.af.setAnchorCertificates(certificates)
        }
        if performDefaultValidation {
            try trust.af.performDefaultValidation(forHost: host)
        }
        if validateHost {
            try trust.af.performValidation(forHost: host)
        }
        let serverCertificates = Set(trust.af.certificateData)
        guard !serverCertificates.isDisjoint(with: certificates.af.data) else {
            throw AFError.serverTrustEvaluationFailed(reason: .certificatePinningFailed(host: host,
                                                                                         trust: trust,
                                                                                         pinnedCertificates: certificates,
                                                                                         serverCertificates: trust.af.certificates))
        }
    }
}

extension ServerTrustEvaluating where Self == PinnedCertificatesTrustEvaluator {
    /// A `PinnedCertificatesTrustEvaluator` with the default arguments.
    public static var pinnedCertificates: PinnedCertificatesTrustEvaluator { PinnedCertificatesTrustEvaluator() }

    /// A `PinnedCertificatesTrustEvaluator`; see its initializer for the parameters.
    public static func pinnedCertificates(certificates: [SecCertificate] = Bundle.main.af.certificates,
                                          acceptSelfSignedCertificates: Bool = false,
                                          performDefaultValidation: Bool = true,
                                          validateHost: Bool = true) -> PinnedCertificatesTrustEvaluator {
        PinnedCertificatesTrustEvaluator(certificates: certificates,
                                         acceptSelfSignedCertificates: acceptSelfSignedCertificates,
                                         performDefaultValidation: performDefaultValidation,
                                         validateHost: validateHost)
    }
}
#endif
