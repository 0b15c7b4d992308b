import Foundation
#if canImport(Security)
import Security
#endif

extension AFError {
    /// Why a server was not trusted.
    public enum ServerTrustFailureReason: Sendable {
        /// A trust evaluation's result.
        public struct Output: Sendable {
            /// The host evaluated.
            public let host: String
            /// The trust evaluated.
            public let trust: SecTrust
            /// The status of the evaluation.
            public let status: OSStatus
            /// The result of the evaluation.
            public let result: SecTrustResultType

            init(_ host: String, _ trust: SecTrust, _ status: OSStatus, _ result: SecTrustResultType) {
                self.host = host
                self.trust = trust
                self.status = status
                self.result = result
            }
        }

        /// The `ServerTrustManager` has no evaluator for the host and requires one.
        case noRequiredEvaluator(host: String)
        /// A `PinnedCertificatesTrustEvaluator` was given no certificates.
        case noCertificatesFound
        /// A `PublicKeysTrustEvaluator` was given no keys.
        case noPublicKeysFound
        /// A policy could not be applied to the trust.
        case policyApplicationFailed(trust: SecTrust, policy: SecPolicy, status: OSStatus)
        /// The anchor certificates could not be set.
        case settingAnchorCertificatesFailed(status: OSStatus, certificates: [SecCertificate])
        /// The revocation policy could not be created.
        case revocationPolicyCreationFailed
        /// Evaluation failed; on Linux the error is an `NSError` in `NSOSStatusErrorDomain` whose
        /// code says why (`errSecNotTrusted` -67843, `errSecCertificateExpired` -67818,
        /// `errSecHostNameMismatch` -67602) and whose description names the certificate.
        case trustEvaluationFailed(error: (any Error)?)
        /// Default validation failed.
        case defaultEvaluationFailed(output: Output)
        /// Host validation failed.
        case hostValidationFailed(output: Output)
        /// Revocation checking failed.
        case revocationCheckFailed(output: Output, options: RevocationTrustEvaluator.Options)
        /// No presented certificate equals a pinned one.
        case certificatePinningFailed(host: String, trust: SecTrust, pinnedCertificates: [SecCertificate], serverCertificates: [SecCertificate])
        /// No presented public key equals a pinned one.
        case publicKeyPinningFailed(host: String, trust: SecTrust, pinnedKeys: [SecKey], serverKeys: [SecKey])
        /// A custom evaluator threw an error that is not an `AFError`.
        case customEvaluationFailed(error: any Error)

        /// The error the reason carries.
        var underlyingError: (any Error)? {
            switch self {
            case let .customEvaluationFailed(error): error
            case let .trustEvaluationFailed(error): error
            default: nil
            }
        }

        /// What went wrong, in one sentence.
        var localizedDescription: String {
            switch self {
            case let .noRequiredEvaluator(host):
                "A ServerTrustEvaluating value is required for host \(host) but none was found."
            case .noCertificatesFound:
                "No certificates were found or provided for evaluation."
            case .noPublicKeysFound:
                "No public keys were found or provided for evaluation."
            case .policyApplicationFailed:
                "Attempting to set a SecPolicy failed."
            case .settingAnchorCertificatesFailed:
                "Attempting to set the provided certificates as anchor certificates failed."
            case .revocationPolicyCreationFailed:
                "Attempting to create a revocation policy failed."
            case let .trustEvaluationFailed(error):
                "SecTrust evaluation failed with error: \(error?.localizedDescription ?? "None")"
            case let .defaultEvaluationFailed(output):
                "Default evaluation failed for host \(output.host)."
            case let .hostValidationFailed(output):
                "Host validation failed for host \(output.host)."
            case let .revocationCheckFailed(output, _):
                "Revocation check failed for host \(output.host)."
            case let .certificatePinningFailed(host, _, _, _):
                "Certificate pinning failed for host \(host)."
            case let .publicKeyPinningFailed(host, _, _, _):
                "Public key pinning failed for host \(host)."
            case let .customEvaluationFailed(error):
                "Custom trust evaluation failed with error: \(error.localizedDescription)"
            }
        }
    }
}
