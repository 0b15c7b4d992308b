import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// Where and when trust is decided: during the handshake of the connection that carries the
/// request, on pooled connections, for every kind of request and for wss.
@Suite struct ServerTrustTransportTests {
    private func pinnedCA() throws -> PinnedCertificatesTrustEvaluator {
        PinnedCertificatesTrustEvaluator(certificates: [try TLSFixture.certificate("ca.der")], acceptSelfSignedCertificates: true)
    }

    @Test func rejectedServerNeverReceivesTheRequest() async throws {
        let server = try await TLSFixture.server()
        let session = trustingSession(DefaultTrustEvaluator())
        let response = await session.request(server.url("/get")).serializingData().response
        withExtendedLifetime(session) {}
        #expect(response.error?.isServerTrustEvaluationError == true)
        #expect(response.response == nil)
        // The handshake happened on a real connection, and no request came through it.
        #expect(server.acceptedConnections == 1)
        #expect(server.hits(for: "/get") == 0)
        try await server.shutdown()
    }

    @Test func hostWithoutEvaluatorFailsBeforeConnectingWhenAllHostsMustBeEvaluated() async throws {
        let server = try await TLSFixture.server()
        let session = Session(serverTrustManager: ServerTrustManager(evaluators: ["example.invalid": DisabledTrustEvaluator()]))
        let response = await session.request(server.url("/get")).serializingData().response
        guard case let .noRequiredEvaluator(host)? = trustFailureReason(response.error) else {
            Issue.record("expected noRequiredEvaluator, got \(String(describing: response.error))")
            return
        }
        #expect(host == "127.0.0.1")
        #expect(server.acceptedConnections == 0)
        try await server.shutdown()
    }

    @Test func hostWithoutEvaluatorGetsSystemValidationWhenNotAllHostsMustBeEvaluated() async throws {
        let server = try await TLSFixture.server()
        let manager = ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: ["example.invalid": DisabledTrustEvaluator()])
        #expect(try manager.serverTrustEvaluator(forHost: "127.0.0.1") == nil)
        let session = Session(serverTrustManager: manager)
        let response = await session.request(server.url("/get")).serializingData().response
        withExtendedLifetime(session) {}
        // The test CA is no system root: system validation refuses the server.
        #expect(response.error?.isSessionTaskError == true)
        #expect(server.hits(for: "/get") == 0)
        try await server.shutdown()
    }

    @Test func sequentialRequestsWithOneEvaluatorShareOneConnection() async throws {
        let server = try await TLSFixture.server()
        let session = trustingSession(try pinnedCA())
        for _ in 0..<3 {
            let response = await session.request(server.url("/get")).serializingData().response
            #expect(response.response?.statusCode == 200)
        }
        #expect(server.hits(for: "/get") == 3)
        #expect(server.acceptedConnections == 1)
        try await server.shutdown()
    }

    /// A subclass that decides per request, as a wildcard manager would: alternately two evaluators.
    private final class AlternatingManager: ServerTrustManager, @unchecked Sendable {
        private let candidates: [any ServerTrustEvaluating]
        private let calls = Locked(0)

        init(_ candidates: [any ServerTrustEvaluating]) {
            self.candidates = candidates
            super.init(evaluators: [:])
        }

        override func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
            let call = calls.withValue { count in
                defer { count += 1 }
                return count
            }
            return candidates[call % candidates.count]
        }
    }

    @Test func connectionsAreNotSharedAcrossEvaluators() async throws {
        let server = try await TLSFixture.server()
        let session = Session(serverTrustManager: AlternatingManager([try pinnedCA(), try pinnedCA()]))
        for _ in 0..<4 {
            #expect(await session.request(server.url("/get")).serializingData().response.error == nil)
        }
        // One connection per evaluator, each reused once.
        #expect(server.hits(for: "/get") == 4)
        #expect(server.acceptedConnections == 2)
        try await server.shutdown()
    }

    @Test func serverTrustFailureIsNotRetried() async throws {
        let server = try await TLSFixture.server()
        let session = Session(interceptor: RetryPolicy(retryLimit: 3, exponentialBackoffBase: 2, exponentialBackoffScale: 0),
                              serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": DefaultTrustEvaluator()]))
        let request = session.request(server.url("/get"))
        let response = await request.serializingData().response
        #expect(response.error?.isServerTrustEvaluationError == true)
        #expect(request.retryCount == 0)
        #expect(server.acceptedConnections == 1)
        try await server.shutdown()
    }

    // MARK: Bodies through trusted connections

    @Test func uploadsDataFileAndStreamBodies() async throws {
        let server = try await TLSFixture.server()
        let session = trustingSession(try pinnedCA())
        let body = patternedBytes(count: 300_000)
        let data = try await session.upload(body, to: server.url("/upload")).serializingDecodable(SinkReport.self).value
        #expect(data.bytes == body.count)
        #expect(data.sha256 == sha256Hex(body))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("lupine-tls-\(UUID().uuidString)")
        try body.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let fromFile = try await session.upload(file, to: server.url("/upload")).serializingDecodable(SinkReport.self).value
        #expect(fromFile.sha256 == sha256Hex(body))
        #expect(fromFile.contentLength == "300000")
        let stream = InputStream(data: body)
        let fromStream = try await session.upload(stream, to: server.url("/upload")).serializingDecodable(SinkReport.self).value
        #expect(fromStream.sha256 == sha256Hex(body))
        try await server.shutdown()
    }

    @Test func downloadsToAFileAndStreamsLines() async throws {
        let server = try await TLSFixture.server()
        let session = trustingSession(try pinnedCA())
        let download = await session.download(server.url("/bytes/200000?seed=3")).serializingDownloadedFileURL().response
        let fileURL = try #require(download.value)
        defer { try? FileManager.default.removeItem(at: fileURL) }
        #expect(try Data(contentsOf: fileURL).count == 200_000)
        var lines = 0
        for await chunk in session.streamRequest(server.url("/stream/10")).streamTask().streamingStrings() {
            if case let .stream(.success(text)) = chunk.event { lines += text.split(separator: "\n").count }
        }
        #expect(lines == 10)
        try await server.shutdown()
    }

    // MARK: WebSocket

    @Test func wssEchoesThroughATrustedConnectionAndFailsOnAnUntrustedOne() async throws {
        let server = try await TLSFixture.server()
        let url = "wss://127.0.0.1:\(server.port)/websocket/echo?messages=2&close-after=2"
        let trustedSession = trustingSession(try pinnedCA())
        let trusted = await webSocketEvents(of: trustedSession.webSocketRequest(to: url))
        #expect(trusted.map(\.summary).prefix(3) == ["connected(nil)", "text:message 1", "text:message 2"])
        #expect(trusted.last?.completion?.error == nil)
        let rejectingSession = trustingSession(DefaultTrustEvaluator())
        let rejected = await webSocketEvents(of: rejectingSession.webSocketRequest(to: url))
        #expect(rejected.last?.completion?.error?.isServerTrustEvaluationError == true)
        withExtendedLifetime((trustedSession, rejectingSession)) {}
        try await server.shutdown()
    }
}
