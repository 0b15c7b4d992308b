import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Every evaluator accepting and rejecting real servers over loopback TLS.
@Suite struct ServerTrustEvaluatorTests {
    private static let notTrusted = -67843
    private static let expired = -67818
    private static let hostMismatch = -67602

    private func get(_ server: LupineTestServer, _ evaluator: any ServerTrustEvaluating) async -> AFDataResponse<Data> {
        let session = trustingSession(evaluator)
        let response = await session.request(server.url("/get")).serializingData().response
        withExtendedLifetime(session) {}
        return response
    }

    // MARK: DefaultTrustEvaluator

    @Test func defaultEvaluationAcceptsAChainToItsAnchorsWithTheRightHost() async throws {
        let server = try await TLSFixture.server()
        let response = await get(server, TestCATrustEvaluator(anchors: [try TLSFixture.certificate("ca.der")]))
        #expect(response.error == nil)
        #expect(response.response?.statusCode == 200)
        try await server.shutdown()
    }

    @Test func defaultTrustEvaluatorRejectsALeafThatNoSystemRootIssued() async throws {
        let server = try await TLSFixture.server()
        let response = await get(server, DefaultTrustEvaluator())
        #expect(trustEvaluationStatus(response.error) == Self.notTrusted)
        #expect(response.error?.isServerTrustEvaluationError == true)
        try await server.shutdown()
    }

    @Test func defaultEvaluationRejectsAnExpiredLeaf() async throws {
        let server = try await TLSFixture.server(presenting: "expired.pem")
        let response = await get(server, TestCATrustEvaluator(anchors: [try TLSFixture.certificate("ca.der")]))
        #expect(trustEvaluationStatus(response.error) == Self.expired)
        try await server.shutdown()
    }

    @Test func defaultEvaluationRejectsALeafForAnotherHostUnlessHostValidationIsOff() async throws {
        let server = try await TLSFixture.server(presenting: "wronghost.pem")
        let ca = try TLSFixture.certificate("ca.der")
        let rejected = await get(server, TestCATrustEvaluator(anchors: [ca]))
        #expect(trustEvaluationStatus(rejected.error) == Self.hostMismatch)
        let accepted = await get(server, TestCATrustEvaluator(anchors: [ca], validateHost: false))
        #expect(accepted.error == nil)
        try await server.shutdown()
    }

    @Test func revocationCheckingEvaluatorValidatesLikeTheDefaultOne() async throws {
        let server = try await TLSFixture.server()
        let response = await get(server, .revocationChecking(options: [.ocsp, .crl]))
        #expect(trustEvaluationStatus(response.error) == Self.notTrusted)
        try await server.shutdown()
    }

    // MARK: PinnedCertificatesTrustEvaluator

    @Test func pinnedLeafIsAcceptedWithoutDefaultOrHostValidation() async throws {
        let server = try await TLSFixture.server()
        let leaf = try TLSFixture.certificate("leaf.der")
        let response = await get(server, .pinnedCertificates(certificates: [leaf], performDefaultValidation: false, validateHost: false))
        #expect(response.error == nil)
        // As on Apple platforms, host validation evaluates the chain too: a private CA fails it.
        let hostValidated = await get(server, .pinnedCertificates(certificates: [leaf], performDefaultValidation: false))
        #expect(trustEvaluationStatus(hostValidated.error) == Self.notTrusted)
        try await server.shutdown()
    }

    @Test func pinnedCAThatBecomesTheAnchorIsAccepted() async throws {
        let server = try await TLSFixture.server()
        let ca = try TLSFixture.certificate("ca.pem")
        let response = await get(server, PinnedCertificatesTrustEvaluator(certificates: [ca], acceptSelfSignedCertificates: true))
        #expect(response.error == nil)
        try await server.shutdown()
    }

    @Test func pinnedCAWithoutAcceptingSelfSignedFailsDefaultValidation() async throws {
        let server = try await TLSFixture.server()
        let ca = try TLSFixture.certificate("ca.pem")
        let response = await get(server, PinnedCertificatesTrustEvaluator(certificates: [ca]))
        #expect(trustEvaluationStatus(response.error) == Self.notTrusted)
        try await server.shutdown()
    }

    @Test func selfSignedServerIsAcceptedWhenPinnedAsItsOwnAnchor() async throws {
        let server = try await TLSFixture.server(presenting: "selfsigned.pem")
        let selfSigned = try TLSFixture.certificate("selfsigned.pem")
        let response = await get(server, PinnedCertificatesTrustEvaluator(certificates: [selfSigned], acceptSelfSignedCertificates: true))
        #expect(response.error == nil)
        try await server.shutdown()
    }

    @Test func certificateNotInTheServerChainFailsPinning() async throws {
        let server = try await TLSFixture.server()
        let other = try TLSFixture.certificate("selfsigned.pem")
        let response = await get(server, PinnedCertificatesTrustEvaluator(certificates: [other], performDefaultValidation: false,
                                                                           validateHost: false))
        guard case let .certificatePinningFailed(host, _, pinned, presented)? = trustFailureReason(response.error) else {
            Issue.record("expected certificatePinningFailed, got \(String(describing: response.error))")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(pinned == [other])
        #expect(presented == [try TLSFixture.certificate("leaf.der"), try TLSFixture.certificate("ca.der")])
        try await server.shutdown()
    }

    @Test func pinnedLeafWithHostValidationRejectsTheWrongHost() async throws {
        let server = try await TLSFixture.server(presenting: "wronghost.pem")
        let pinned = try TLSFixture.certificate("wronghost.pem")
        let response = await get(server, PinnedCertificatesTrustEvaluator(certificates: [pinned], performDefaultValidation: false))
        // Host validation builds the chain too, against the system roots here.
        #expect(response.error?.isServerTrustEvaluationError == true)
        let accepted = await get(server, PinnedCertificatesTrustEvaluator(certificates: [pinned], performDefaultValidation: false,
                                                                           validateHost: false))
        #expect(accepted.error == nil)
        try await server.shutdown()
    }

    @Test func emptyPinListFailsWithNoCertificatesFound() async throws {
        let server = try await TLSFixture.server()
        let response = await get(server, PinnedCertificatesTrustEvaluator(certificates: []))
        guard case .noCertificatesFound? = trustFailureReason(response.error) else {
            Issue.record("expected noCertificatesFound, got \(String(describing: response.error))")
            return
        }
        try await server.shutdown()
    }

    // MARK: PublicKeysTrustEvaluator

    @Test func pinnedPublicKeyOfTheLeafIsAccepted() async throws {
        let server = try await TLSFixture.server()
        let key = try #require(SecCertificateCopyKey(try TLSFixture.certificate("leaf.der")))
        let response = await get(server, .publicKeys(keys: [key], performDefaultValidation: false, validateHost: false))
        #expect(response.error == nil)
        try await server.shutdown()
    }

    @Test func publicKeyNotInTheChainFailsKeyPinning() async throws {
        let server = try await TLSFixture.server()
        let other = try #require(try TLSFixture.certificate("selfsigned.pem").af.publicKey)
        let response = await get(server, PublicKeysTrustEvaluator(keys: [other], performDefaultValidation: false, validateHost: false))
        guard case let .publicKeyPinningFailed(_, _, pinned, serverKeys)? = trustFailureReason(response.error) else {
            Issue.record("expected publicKeyPinningFailed, got \(String(describing: response.error))")
            return
        }
        #expect(pinned == [other])
        #expect(serverKeys.count == 2)
        try await server.shutdown()
    }

    @Test func emptyKeyListFailsWithNoPublicKeysFound() async throws {
        let server = try await TLSFixture.server()
        let response = await get(server, PublicKeysTrustEvaluator(keys: []))
        guard case .noPublicKeysFound? = trustFailureReason(response.error) else {
            Issue.record("expected noPublicKeysFound, got \(String(describing: response.error))")
            return
        }
        try await server.shutdown()
    }

    // MARK: Composite, disabled, custom

    @Test func compositeEvaluatorPassesWhenAllPassAndReportsTheFirstFailure() async throws {
        let server = try await TLSFixture.server()
        let leaf = try TLSFixture.certificate("leaf.der")
        let passing: [any ServerTrustEvaluating] = [PinnedCertificatesTrustEvaluator(certificates: [leaf], performDefaultValidation: false,
                                                                                     validateHost: false),
                                                    DisabledTrustEvaluator()]
        let accepted = await get(server, .composite(evaluators: passing))
        #expect(accepted.error == nil)
        let failing: [any ServerTrustEvaluating] = [DisabledTrustEvaluator(), PublicKeysTrustEvaluator(keys: []),
                                                    PinnedCertificatesTrustEvaluator(certificates: [])]
        let rejected = await get(server, CompositeTrustEvaluator(evaluators: failing))
        guard case .noPublicKeysFound? = trustFailureReason(rejected.error) else {
            Issue.record("expected the first failure, noPublicKeysFound, got \(String(describing: rejected.error))")
            return
        }
        try await server.shutdown()
    }

    @Test func disabledEvaluatorAcceptsAnExpiredCertificateForAnotherHost() async throws {
        let server = try await TLSFixture.server(presenting: "expired.pem")
        let response = await get(server, DisabledTrustEvaluator())
        #expect(response.error == nil)
        #expect(response.response?.statusCode == 200)
        try await server.shutdown()
    }

    private struct Refusal: Error, Equatable { let code: Int }

    private struct RefusingEvaluator: ServerTrustEvaluating {
        func evaluate(_ trust: SecTrust, forHost host: String) throws {
            throw Refusal(code: trust.af.certificates.count)
        }
    }

    @Test func userEvaluatorErrorIsWrappedAsCustomEvaluationFailed() async throws {
        let server = try await TLSFixture.server()
        let response = await get(server, RefusingEvaluator())
        guard case let .customEvaluationFailed(error)? = trustFailureReason(response.error) else {
            Issue.record("expected customEvaluationFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error as? Refusal == Refusal(code: 2))
        #expect(response.error?.underlyingError as? Refusal == Refusal(code: 2))
        try await server.shutdown()
    }
}
