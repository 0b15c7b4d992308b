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
                "The ServerTrustManager has no evaluator for \(host) and requires every host to be evaluated."
            case .noCertificatesFound:
                "Certificate pinning was given no certificates to pin."
            case .noPublicKeysFound:
                "Public key pinning was given no keys to pin."
            case .policyApplicationFailed:
                "A trust policy could not be applied."
            case .settingAnchorCertificatesFailed:
                "The pinned certificates could not be made the trust's anchors."
            case .revocationPolicyCreationFailed:
                "The revocation policy could not be created."
            case let .trustEvaluationFailed(error):
                "The server's certificate chain was not trusted: \(error?.localizedDescription ?? "no reason was given.")"
            case let .defaultEvaluationFailed(output):
                "The certificate chain of \(output.host) did not pass default validation."
            case let .hostValidationFailed(output):
                "The certificate of \(output.host) does not name that host."
            case let .revocationCheckFailed(output, _):
                "A certificate of \(output.host) is revoked or its revocation status is unknown."
            case let .certificatePinningFailed(host, _, _, _):
                "\(host) presented none of the pinned certificates."
            case let .publicKeyPinningFailed(host, _, _, _):
                "\(host) presented none of the pinned public keys."
            case let .customEvaluationFailed(error):
                "The trust evaluator rejected the server: \(error.localizedDescription)"
            }
        }
    }
}
