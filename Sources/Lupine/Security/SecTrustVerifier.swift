#if !canImport(Security)
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import SwiftASN1
import X509

/// The result of evaluating a `SecTrust`.
struct SecTrustOutcome: Sendable {
    var status: OSStatus
    var result: SecTrustResultType
    var message: String

    var isSuccess: Bool { status == errSecSuccess }

    /// The error the Security framework would report, in `NSOSStatusErrorDomain`.
    var error: NSError {
        NSError(domain: NSOSStatusErrorDomain, code: Int(status), userInfo: [NSLocalizedDescriptionKey: message])
    }
}

/// Builds and checks a certificate chain with swift-certificates: RFC 5280 path validation to
/// the anchors (or the system roots, see `SystemTrustRoots`), validity dates, and RFC 6125 host name / IP address
/// matching of the leaf.
///
/// swift-certificates was chosen over NIOSSL's own parsing because NIOSSL can only verify inside
/// a handshake, against its configured roots, while an evaluator must verify a chain it is
/// handed, against anchors chosen per evaluator (`acceptSelfSignedCertificates`,
/// `setAnchorCertificates`), as `SecTrustEvaluateWithError` does.
enum SecTrustVerifier {
    /// Evaluates `certificates` (leaf first).
    ///
    /// - Parameters:
    ///   - anchors: The anchor certificates set on the trust, if any.
    ///   - includesSystemRoots: Whether the system's roots are trusted too (no anchors set, or
    ///     `SecTrustSetAnchorCertificatesOnly(trust, false)`).
    ///   - hostnames: The hosts the leaf must name (each SSL policy's); empty for none.
    static func evaluate(certificates: [SecCertificate],
                         anchors: [SecCertificate]?,
                         includesSystemRoots: Bool,
                         hostnames: [String]) -> SecTrustOutcome {
        guard let leaf = certificates.first else {
            return SecTrustOutcome(status: errSecParam, result: .invalid, message: "The server presented no certificate.")
        }
        let now = Date()
        if let expired = certificates.first(where: { now < $0.certificate.notValidBefore || now > $0.certificate.notValidAfter }) {
            return SecTrustOutcome(status: errSecCertificateExpired, result: .recoverableTrustFailure,
                                   message: "The certificate \(expired.certificate.subject) is not valid now "
                                       + "(valid from \(expired.certificate.notValidBefore) to \(expired.certificate.notValidAfter)).")
        }
        // A leaf that is itself an anchor is trusted as it is, as with the Security framework
        // (pinned certificates accepted as self-signed). swift-certificates wants a CA at the top
        // of every chain, so such a chain is not handed to its path validation.
        let leafIsAnchor = anchors?.contains(leaf) ?? false
        var rootCertificates = (anchors ?? []).map(\.certificate)
        if includesSystemRoots { rootCertificates += SystemTrustRoots.candidates(for: certificates) }
        let roots = CertificateStore(rootCertificates)
        let intermediates = CertificateStore(certificates.dropFirst().map(\.certificate))
        let leafCertificate = leaf.certificate
        if !leafIsAnchor {
            let chainValid = blockingWait {
                var verifier = Verifier(rootCertificates: roots) { RFC5280Policy() }
                return await verifier.validate(leaf: leafCertificate, intermediates: intermediates)
            }
            guard case .validCertificate? = chainValid else {
                let source = switch (anchors, includesSystemRoots) {
                case (nil, _): "the system's trusted roots"
                case (_, false): "the anchor certificates"
                case (_, true): "the anchor certificates or the system's trusted roots"
                }
                return SecTrustOutcome(status: errSecNotTrusted, result: .recoverableTrustFailure,
                                       message: "The certificate chain of \(leafCertificate.subject) does not lead to \(source).")
            }
        }
        for hostname in hostnames {
            let mismatch = SecTrustOutcome(status: errSecHostNameMismatch, result: .recoverableTrustFailure,
                                           message: "The certificate \(leafCertificate.subject) does not name the host \(hostname).")
            // Apple platforms match the host against the subject alternative names only, never the
            // common name; swift-certificates falls back to the common name without them.
            guard leaf.namesHostsInSubjectAlternativeNames else { return mismatch }
            let isIPAddress = (try? SocketAddress(ipAddress: hostname, port: 0)) != nil
            let identity = ServerIdentityPolicy(serverHostname: isIPAddress ? nil : hostname, serverIP: isIPAddress ? hostname : nil)
            let hostValid = blockingWait {
                if leafIsAnchor {
                    var verifier = Verifier(rootCertificates: CertificateStore([leafCertificate])) {
                        AnchoredLeafPolicy()
                        identity
                    }
                    return await verifier.validate(leaf: leafCertificate, intermediates: CertificateStore())
                }
                var verifier = Verifier(rootCertificates: roots) {
                    RFC5280Policy()
                    identity
                }
                return await verifier.validate(leaf: leafCertificate, intermediates: intermediates)
            }
            guard case .validCertificate? = hostValid else { return mismatch }
        }
        return SecTrustOutcome(status: errSecSuccess, result: .unspecified, message: "Trusted.")
    }

    /// Runs `operation` and waits for it: `ServerTrustEvaluating.evaluate(_:forHost:)` is
    /// synchronous, as in Alamofire, while swift-certificates' `Verifier` is async.
    ///
    /// The operation runs on `verificationExecutor`'s own threads, so that waiting here never
    /// holds up the thread it needs, even when the caller is a thread of a shared pool.
    private static func blockingWait<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T? {
        let result = NIOLockedValueBox<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task(executorPreference: verificationExecutor) {
            let value = await operation()
            result.withLockedValue { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLockedValue { $0 }
    }

    private static let verificationExecutor = VerificationExecutor()
}

/// Runs the jobs of chain verifications on two threads of their own. Callers block while they
/// wait (see `blockingWait`); on a shared pool (Swift concurrency's, or Dispatch's, which grows
/// slowly on Linux) the jobs could wait behind the very threads blocked on them.
/// The chain of a leaf that is itself an anchor: trusted as it is (its dates are checked before).
/// It takes charge of the critical extensions a server certificate carries, so that the host
/// policy beside it can run on the leaf alone.
private struct AnchoredLeafPolicy: VerifierPolicy {
    let verifyingCriticalExtensions: [ASN1ObjectIdentifier] = [
        .X509ExtensionID.basicConstraints, .X509ExtensionID.keyUsage, .X509ExtensionID.extendedKeyUsage,
        .X509ExtensionID.nameConstraints,
    ]

    func chainMeetsPolicyRequirements(chain: UnverifiedCertificateChain) -> PolicyEvaluationResult {
        .meetsPolicy
    }
}

extension SecCertificate {
    /// Whether the certificate has subject alternative names a host can match (DNS names or IP
    /// addresses).
    var namesHostsInSubjectAlternativeNames: Bool {
        guard let names = (try? certificate.extensions.subjectAlternativeNames) ?? nil else { return false }
        return names.contains { name in
            switch name {
            case .dnsName, .ipAddress: true
            default: false
            }
        }
    }
}

private final class VerificationExecutor: TaskExecutor {
    private let threads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 2)
        pool.start()
        return pool
    }()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        threads.submit { _ in
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
#endif
