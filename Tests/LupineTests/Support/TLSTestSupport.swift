import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// The committed TLS fixtures (Scripts/make-tls-fixtures.sh) and TLS test servers.
enum TLSFixture {
    /// The folder holding the fixtures.
    static func directory() throws -> URL {
        try #require(Bundle.module.url(forResource: "TLS", withExtension: nil))
    }

    static func path(_ name: String) throws -> String {
        try directory().appendingPathComponent(name).path
    }

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory().appendingPathComponent(name))
    }

    /// The certificate in a DER file, or the first one of a PEM file.
    static func certificate(_ name: String) throws -> SecCertificate {
        let data = try data(name)
        if let certificate = SecCertificateCreateWithData(nil, data) { return certificate }
        let text = String(decoding: data, as: UTF8.self)
        let begin = try #require(text.range(of: "-----BEGIN CERTIFICATE-----"))
        let end = try #require(text.range(of: "-----END CERTIFICATE-----"))
        let base64 = String(text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace })
        let der = try #require(Data(base64Encoded: base64))
        return try #require(SecCertificateCreateWithData(nil, der))
    }

    /// A new HTTPS server on 127.0.0.1 presenting `certificate` (chain.pem, expired.pem,
    /// wronghost.pem, selfsigned.pem) with its key.
    static func server(presenting certificate: String = "chain.pem", requireClientCertificate: Bool = false) async throws -> LupineTestServer {
        let key = certificate == "chain.pem" ? "leaf-key.pem" : certificate.replacingOccurrences(of: ".pem", with: "-key.pem")
        return try await LupineTestServer.start(tls: LupineTestServerTLS(certificateChainFile: path(certificate),
                                                                         privateKeyFile: path(key),
                                                                         clientCAFile: requireClientCertificate ? path("ca.pem") : nil))
    }
}

/// A Session that evaluates 127.0.0.1 with `evaluator`.
func trustingSession(_ evaluator: any ServerTrustEvaluating, configuration: URLSessionConfiguration = .af.default) -> Session {
    Session(configuration: configuration, serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": evaluator]))
}

/// Default validation against the test CA: a user-written evaluator, as the CA is not a system root.
struct TestCATrustEvaluator: ServerTrustEvaluating {
    let anchors: [SecCertificate]
    var validateHost = true

    func evaluate(_ trust: SecTrust, forHost host: String) throws {
        try trust.af.setAnchorCertificates(anchors)
        try DefaultTrustEvaluator(validateHost: validateHost).evaluate(trust, forHost: host)
    }
}

/// The trust failure of `error`, if it is one.
func trustFailureReason(_ error: AFError?) -> AFError.ServerTrustFailureReason? {
    guard case let .serverTrustEvaluationFailed(reason)? = error else { return nil }
    return reason
}

/// The OSStatus code of a `.trustEvaluationFailed` reason.
func trustEvaluationStatus(_ error: AFError?) -> Int? {
    guard case let .trustEvaluationFailed(underlying)? = trustFailureReason(error) else { return nil }
    return (underlying as? NSError)?.code
}
