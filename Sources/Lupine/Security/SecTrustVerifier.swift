#if !canImport(Security)
import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
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
    static func evaluate(certificates: [SecCertificate], anchors: [SecCertificate]?, hostname: String?) -> SecTrustOutcome {
        guard let leaf = certificates.first else {
            return SecTrustOutcome(status: errSecParam, result: .invalid, message: "The server presented no certificate.")
        }
        let now = Date()
        if let expired = certificates.first(where: { now < $0.certificate.notValidBefore || now > $0.certificate.notValidAfter }) {
            return SecTrustOutcome(status: errSecCertificateExpired, result: .recoverableTrustFailure,
                                   message: "The certificate \(expired.certificate.subject) is not valid now "
                                       + "(valid from \(expired.certificate.notValidBefore) to \(expired.certificate.notValidAfter)).")
        }
        let roots = CertificateStore(anchors.map { $0.map(\.certificate) } ?? SystemTrustRoots.candidates(for: certificates))
        let intermediates = CertificateStore(certificates.dropFirst().map(\.certificate))
        let leafCertificate = leaf.certificate
        let chainValid = blockingWait {
            var verifier = Verifier(rootCertificates: roots) { RFC5280Policy() }
            return await verifier.validate(leaf: leafCertificate, intermediates: intermediates)
        }
        guard case .validCertificate? = chainValid else {
            let source = anchors == nil ? "the system's trusted roots" : "the anchor certificates"
            return SecTrustOutcome(status: errSecNotTrusted, result: .recoverableTrustFailure,
                                   message: "The certificate chain of \(leafCertificate.subject) does not lead to \(source).")
        }
        guard let hostname else {
            return SecTrustOutcome(status: errSecSuccess, result: .unspecified, message: "Trusted.")
        }
        let isIPAddress = (try? SocketAddress(ipAddress: hostname, port: 0)) != nil
        let hostValid = blockingWait {
            var verifier = Verifier(rootCertificates: roots) {
                RFC5280Policy()
                ServerIdentityPolicy(serverHostname: isIPAddress ? nil : hostname, serverIP: isIPAddress ? hostname : nil)
            }
            return await verifier.validate(leaf: leafCertificate, intermediates: intermediates)
        }
        guard case .validCertificate? = hostValid else {
            return SecTrustOutcome(status: errSecHostNameMismatch, result: .recoverableTrustFailure,
                                   message: "The certificate \(leafCertificate.subject) does not name the host \(hostname).")
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
