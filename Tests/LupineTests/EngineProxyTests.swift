import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// https through an HTTP proxy's `CONNECT` tunnel: the trust evaluator and the client
/// certificate work inside the tunnel, and a proxy that never answers is bounded by the
/// handshake deadline.
@Suite struct EngineProxyTests {
    private static func configuration(httpsProxyPort port: Int) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.af.default
        configuration.connectionProxyDictionary = ["HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": port]
        return configuration
    }

    private static func pinnedCA() throws -> PinnedCertificatesTrustEvaluator {
        PinnedCertificatesTrustEvaluator(certificates: [try TLSFixture.certificate("ca.der")], acceptSelfSignedCertificates: true)
    }

    @Test func httpsWithATrustPolicyAndAClientCertificateGoesThroughTheTunnel() async throws {
        let server = try await TLSFixture.server(requireClientCertificate: true)
        let proxy = try await LupineTestProxy.start(connectPorts: [server.port])
        let session = trustingSession(try Self.pinnedCA(), configuration: Self.configuration(httpsProxyPort: proxy.port))
        let credential = try ClientCertificateCredential(certificateChain: [try TLSFixture.certificate("client.pem")],
                                                         privateKey: try TLSFixture.data("client-key.pem"))
        for _ in 0..<2 {
            let response = await session.request(server.url("/get")).authenticate(with: credential)
                .serializingDecodable(HTTPBinResponse.self).response
            #expect(response.error == nil)
            #expect(response.response?.statusCode == 200)
        }
        try await proxy.shutdown()
        try await server.shutdown()

        // One tunnel, kept alive for both requests.
        #expect(proxy.records.map(\.method) == ["CONNECT"])
        #expect(proxy.records.first?.target == "127.0.0.1:\(server.port)")
        #expect(server.hits(for: "/get") == 2)
    }

    @Test func untrustedServerBehindTheTunnelIsRejectedBeforeTheRequest() async throws {
        let server = try await TLSFixture.server()
        let proxy = try await LupineTestProxy.start(connectPorts: [server.port])
        let session = trustingSession(DefaultTrustEvaluator(), configuration: Self.configuration(httpsProxyPort: proxy.port))
        let response = await session.request(server.url("/get")).serializingData().response
        try await proxy.shutdown()
        try await server.shutdown()

        #expect(response.error?.isServerTrustEvaluationError == true)
        #expect(server.hits(for: "/get") == 0)
    }

    @Test func proxyThatNeverAnswersTheTunnelRequestFailsWithTimedOut() async throws {
        let silentProxy = try await LupineSilentServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock, configuration: Self.configuration(httpsProxyPort: silentProxy.port)) {
            $0.connectTimeout = 5
        }
        let task = session.request("https://127.0.0.1:1/get", requestModifier: { $0.timeoutInterval = 600 }).serializingData()
        #expect(await waitUntil { silentProxy.acceptedConnections == 1 })
        #expect(await clock.waitForTimers(dueWithin: .seconds(5)))
        clock.advance(by: .seconds(5))
        let response = await task.response
        try await silentProxy.shutdown()

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
    }
}
