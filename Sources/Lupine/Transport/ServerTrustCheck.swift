import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// Runs a `ServerTrustEvaluating` as the custom verification callback of one TLS connection, and
/// remembers why it rejected the server.
///
/// An evaluator must decide during the handshake of the connection that carries the request:
/// swift-nio-ssl's `NIOSSLClientHandler(context:serverHostname:customVerificationCallback:)` hands
/// over the presented chain and waits for this answer before any application data is sent. The
/// engine installs one on every TLS connection (system validation when no evaluator is given).
final class ServerTrustCheck: Sendable {
    private let evaluator: any ServerTrustEvaluating
    private let host: String
    /// Whether a rejection is reported as the evaluator's AFError (a policy the user chose) rather
    /// than as URLSession's `URLError(.serverCertificateUntrusted)` (system validation).
    let reportsEvaluatorError: Bool
    private let failure = NIOLockedValueBox<AFError?>(nil)
    /// Evaluators may block (chain building waits), so they run on threads of their own: never on
    /// an event loop, nor on Dispatch's or Swift concurrency's shared threads, which other work needs.
    private static let evaluationThreads: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 4)
        pool.start()
        return pool
    }()

    /// - Parameters:
    ///   - evaluator: The evaluator; nil means system default validation with host validation.
    ///   - host: The host of the URL, as the evaluator receives it.
    init(evaluator: (any ServerTrustEvaluating)?, host: String) {
        self.evaluator = evaluator ?? Self.systemDefault
        self.host = host
        reportsEvaluatorError = evaluator != nil
    }

    /// Default validation (system roots, host name) for connections without an evaluator.
    private static let systemDefault = DefaultTrustEvaluator()

    /// The AFError the evaluator threw, once it rejected the server.
    var rejection: AFError? {
        failure.withLockedValue { $0 }
    }

    /// The custom verification callback.
    func verify(_ presented: [NIOSSLCertificate], promise: EventLoopPromise<NIOSSLVerificationResult>) {
        let chain = presented.compactMap { try? SecCertificate(derData: Data($0.toDERBytes())) }
        let (evaluator, host) = (evaluator, host)
        Self.evaluationThreads.submit { _ in
            let trust = SecTrust(certificates: chain, policies: [SecPolicyCreateSSL(true, host)])
            do {
                try evaluator.evaluate(trust, forHost: host)
                promise.succeed(.certificateVerified)
            } catch {
                let afError = error.asAFError ?? .serverTrustEvaluationFailed(reason: .customEvaluationFailed(error: error))
                self.failure.withLockedValue { $0 = afError }
                promise.succeed(.failed)
            }
        }
    }

    /// `URLError(.serverCertificateUntrusted)` with `afError` as its underlying error, which
    /// `URLError.lupineServerTrustError` reads back where the request fails.
    static func untrusted(_ afError: AFError, url: URL) -> URLError {
        URLError(.serverCertificateUntrusted, userInfo: [
            NSURLErrorFailingURLErrorKey: url,
            NSUnderlyingErrorKey: afError,
            NSLocalizedDescriptionKey: afError.localizedDescription,
        ])
    }
}

extension URLError {
    /// The server-trust AFError a transport carried out in this error, if any.
    var lupineServerTrustError: AFError? {
        guard code == .serverCertificateUntrusted, let afError = userInfo[NSUnderlyingErrorKey] as? AFError,
              afError.isServerTrustEvaluationError else { return nil }
        return afError
    }
}
