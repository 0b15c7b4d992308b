import Foundation
import Lupine

/// The Sessions of the Lupine clients: a plain `Session()` for the http scenarios, as an Alamofire
/// user makes one, and for S9's https URLs a second one whose `ServerTrustManager` pins the
/// benchmark's certificate (`BenchmarkCertificate`) for 127.0.0.1, as Alamofire's documentation
/// does for a self-signed server. Two Sessions rather than one with a trust manager, so that S1-S7
/// run exactly as they did before S9.
struct LupineSessions: Sendable {
    let plain = Session()
    /// Nil when no certificate is named: S9 then fails with `ScenarioError.noTrustedCertificate`.
    let pinned: Session? = {
        guard let path = BenchmarkCertificate.path else { return nil }
        let certificates = BenchmarkCertificate.derCertificates(atPath: path).compactMap { SecCertificateCreateWithData(nil, $0) }
        guard !certificates.isEmpty else { return nil }
        let evaluator = PinnedCertificatesTrustEvaluator(certificates: certificates, acceptSelfSignedCertificates: true)
        return Session(serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": evaluator]))
    }()

    /// The Session for `url`: the pinned one for https.
    func session(for url: String) throws -> Session {
        guard url.hasPrefix("https:") else { return plain }
        guard let pinned else { throw ScenarioError.noTrustedCertificate }
        return pinned
    }
}
