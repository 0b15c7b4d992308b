import Foundation
import Lupine
import Testing

/// The Linux stand-ins for the Security framework's types and functions.
@Suite struct SecurityStandInTests {
    @Test func certificateDataRoundTripsAndGarbageIsRejected() throws {
        let der = try TLSFixture.data("leaf.der")
        let certificate = try #require(SecCertificateCreateWithData(nil, der))
        #expect(SecCertificateCopyData(certificate) == der)
        #expect(SecCertificateCreateWithData(nil, Data("not a certificate".utf8)) == nil)
        #expect(SecCertificateCreateWithData(nil, Data()) == nil)
    }

    @Test func publicKeysCompareByValue() throws {
        let leaf = try TLSFixture.certificate("leaf.der")
        let samePEM = try TLSFixture.certificate("leaf.pem")
        #expect(leaf == samePEM)
        #expect(SecCertificateCopyKey(leaf) == samePEM.af.publicKey)
        #expect(SecCertificateCopyKey(leaf) != (try TLSFixture.certificate("ca.der")).af.publicKey)
        #expect([leaf, samePEM].af.publicKeys.count == 2)
    }

    @Test func bundleLoadsDERAndPEMCertificatesAndSkipsKeys() throws {
        let bundle = try #require(Bundle(path: try TLSFixture.directory().path))
        let certificates = bundle.af.certificates
        // ca.der, leaf.der; ca, chain (2), client, expired, leaf, selfsigned, wronghost PEM files: 6 distinct.
        #expect(certificates.count == 10)
        #expect(Set(certificates).count == 6)
        #expect(certificates.contains(try TLSFixture.certificate("client.pem")))
        #expect(bundle.af.publicKeys.count == 10)
        #expect(bundle.af.paths(forResourcesOfTypes: [".der", ".DER"]).count == 2)
    }

    /// Alamofire counts a .cer, .crt or .der file as a certificate only when it is DER: its own
    /// bundle test expects PEM text under those extensions to be skipped. PEM is read from .pem.
    @Test func bundleSkipsPEMTextUnderTheDERExtensionsAsAlamofireDoes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pem = try TLSFixture.data("leaf.pem")
        try TLSFixture.data("leaf.der").write(to: folder.appendingPathComponent("leafDER.cer"))
        try TLSFixture.data("ca.der").write(to: folder.appendingPathComponent("caDER.crt"))
        for name in ["leafPEM.cer", "leafPEM.crt", "leafPEM.der"] { try pem.write(to: folder.appendingPathComponent(name)) }
        try TLSFixture.data("ca.pem").write(to: folder.appendingPathComponent("ca.pem"))
        try Data("random gibberish".utf8).write(to: folder.appendingPathComponent("gibberish.crt"))
        let bundle = try #require(Bundle(path: folder.path))

        let certificates = bundle.af.certificates

        #expect(certificates == [try TLSFixture.certificate("ca.der"), try TLSFixture.certificate("leaf.der"),
                                 try TLSFixture.certificate("ca.pem")])
    }

    @Test func trustEvaluatesAgainstAnchorsAndHostOutsideAConnection() throws {
        let chain = [try TLSFixture.certificate("leaf.der"), try TLSFixture.certificate("ca.der")]
        var created: SecTrust?
        #expect(SecTrustCreateWithCertificates(chain, nil, &created).af.isSuccess)
        let trust = try #require(created)
        #expect(throws: AFError.self) { try trust.af.evaluate() }
        try trust.af.setAnchorCertificates([chain[1]])
        try trust.af.performDefaultValidation(forHost: "127.0.0.1")
        try trust.af.performValidation(forHost: "localhost")
        try trust.af.performValidation(forHost: "127.0.0.1")
        #expect(throws: AFError.self) { try trust.af.performValidation(forHost: "example.com") }
        #expect(trust.af.certificateData == chain.af.data)
        #expect(SecTrustResultType.unspecified.af.isSuccess)
        #expect(!SecTrustResultType.recoverableTrustFailure.af.isSuccess)
    }

    @Test func serverTrustManagerMatchesHostsExactly() throws {
        let manager = ServerTrustManager(evaluators: ["api.example.com": DisabledTrustEvaluator()])
        #expect(try manager.serverTrustEvaluator(forHost: "api.example.com") is DisabledTrustEvaluator)
        #expect(throws: AFError.self) { try manager.serverTrustEvaluator(forHost: "www.api.example.com") }
        #expect(manager.allHostsMustBeEvaluated)
    }

    @Test func serverTrustErrorsDescribeThemselves() {
        let error = AFError.serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host: "h.example"))
        #expect(error.isServerTrustEvaluationError)
        #expect(error.localizedDescription.contains("h.example"))
        #expect(error.underlyingError == nil)
    }
}
