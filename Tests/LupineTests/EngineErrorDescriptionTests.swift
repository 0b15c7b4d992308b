import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// What a user reads when the connection fails: the `URLError`'s description names the server
/// (host and port) in Lupine's words, and never carries SwiftNIO's or BoringSSL's text, an errno,
/// or a build path.
@Suite struct EngineErrorDescriptionTests {
    /// Text that belongs to the libraries under the engine, never to a user-facing description.
    private static let internals = ["NIO", "BoringSSL", "SSL_", "errno", "IOError", "ChannelError", "(error set)",
                                    ".swift", "/work/", "/home/", "Connection refused", "Error("]

    private func check(_ error: AFError?, code: URLError.Code, names authority: String,
                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.sessionTaskURLErrorCode == code, sourceLocation: sourceLocation)
        let description = (error?.underlyingError as? URLError)?.localizedDescription ?? ""
        #expect(description.contains(authority), "\(description)", sourceLocation: sourceLocation)
        for text in Self.internals {
            #expect(!description.contains(text), "\(description)", sourceLocation: sourceLocation)
        }
    }

    @Test func refusedPortNamesTheHostAndPort() async throws {
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let session = Session()
        let response = await session.request(refusing.url("/get")).serializingData().response
        withExtendedLifetime(session) {}
        check(response.error, code: .cannotConnectToHost, names: "127.0.0.1:\(refusing.port)")
    }

    @Test func unknownHostNamesTheHost() async throws {
        let session = Session()
        let response = await session.request("http://nonexistent.invalid/get").serializingData().response
        withExtendedLifetime(session) {}
        check(response.error, code: .cannotFindHost, names: "nonexistent.invalid:80")
    }

    @Test func failedTLSHandshakeNamesTheServer() async throws {
        // The test server speaks plain HTTP: the handshake fails.
        let server = try await testServer()
        let session = Session()
        let response = await session.request("https://127.0.0.1:\(server.port)/get").serializingData().response
        withExtendedLifetime(session) {}
        check(response.error, code: .secureConnectionFailed, names: "127.0.0.1:\(server.port)")
    }

    @Test func resetAndMalformedResponsesNameTheServer() async throws {
        let server = try await testServer()
        let session = Session()
        let reset = await session.request(server.url("/fault/reset")).serializingData().response
        check(reset.error, code: .networkConnectionLost, names: "127.0.0.1:\(server.port)")
        let malformed = await session.request(server.url("/fault/malformed-status")).serializingData().response
        check(malformed.error, code: .badServerResponse, names: "127.0.0.1:\(server.port)")
    }

    @Test func timeoutNamesTheServer() async throws {
        let silent = try await LupineSilentServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let task = session.request("http://127.0.0.1:\(silent.port)/get", requestModifier: { $0.timeoutInterval = 2 })
            .serializingData()
        #expect(await waitUntil { clock.requestsSent == 1 })
        clock.advance(by: .seconds(2))
        check(await task.response.error, code: .timedOut, names: "127.0.0.1:\(silent.port)")
        try await silent.shutdown()
    }

    @Test func proxyRefusingTheTunnelNamesTheOrigin() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start()
        let configuration = URLSessionConfiguration.af.default
        configuration.connectionProxyDictionary = ["HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": proxy.port]
        let session = Session(configuration: configuration)
        let response = await session.request("https://127.0.0.1:\(server.port)/get").serializingData().response
        withExtendedLifetime(session) {}
        try await proxy.shutdown()
        check(response.error, code: .cannotConnectToHost, names: "127.0.0.1:\(server.port)")
    }

    @Test func everyCodeTheEngineReportsIsDescribedWithTheServer() {
        let codes: [URLError.Code] = [.cancelled, .timedOut, .cannotFindHost, .cannotConnectToHost, .networkConnectionLost,
                                      .badServerResponse, .cannotDecodeContentData, .secureConnectionFailed,
                                      .serverCertificateUntrusted, .notConnectedToInternet, .userAuthenticationRequired, .unknown]
        for code in codes {
            #expect(EngineErrors.description(of: code, authority: "example.com:8443").contains("example.com:8443"), "\(code)")
        }
    }
}
