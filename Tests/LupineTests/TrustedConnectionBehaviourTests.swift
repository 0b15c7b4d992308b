import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// https with a trust evaluator behaves as plain http does on the engine: decompression and its
/// limit, timeouts, redirects, HEAD framing, cancellation, the per-host limit and backpressure.
@Suite struct TrustedConnectionBehaviourTests {
    private struct GzipEcho: Decodable {
        let gzipped: Bool?
    }

    private func session() throws -> Session {
        trustingSession(PinnedCertificatesTrustEvaluator(certificates: [try TLSFixture.certificate("ca.der")],
                                                         acceptSelfSignedCertificates: true))
    }

    @Test func gzipBodyIsDecodedAndABombFailsWithCannotDecodeContentData() async throws {
        let server = try await TLSFixture.server()
        let session = try session()
        let response = await session.request(server.url("/gzip")).serializingDecodable(GzipEcho.self).response
        #expect(response.value?.gzipped == true)
        #expect(response.response?.headers["Content-Encoding"] == "gzip")
        let bomb = await session.request(server.url("/gzip-bomb?size=64")).serializingData().response
        #expect(bomb.error?.sessionTaskURLErrorCode == .cannotDecodeContentData)
        try await server.shutdown()
    }

    @Test func stalledServerFailsWithTimedOut() async throws {
        let server = try await TLSFixture.server()
        let session = try session()
        let response = await session.request(server.url("/fault/stall"), requestModifier: { $0.timeoutInterval = 0.5 })
            .serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(await session.request(server.url("/get")).serializingData().response.response?.statusCode == 200)
        try await server.shutdown()
    }

    @Test func redirectAndHeadRequestsReuseTheConnection() async throws {
        let server = try await TLSFixture.server()
        let session = try session()
        let redirected = await session.request(server.url("/redirect/1")).serializingData().response
        #expect(redirected.response?.statusCode == 200)
        #expect(redirected.response?.url?.path == "/get")
        let head = await session.request(server.url("/get"), method: .head).serializingData(emptyRequestMethods: [.head]).response
        #expect(head.response?.statusCode == 200)
        let after = await session.request(server.url("/get")).serializingData().response
        #expect(after.response?.statusCode == 200)
        #expect(server.acceptedConnections == 1)
        try await server.shutdown()
    }

    @Test func cancellingARequestOnAStalledServerEndsItAndTheSessionGoesOn() async throws {
        let server = try await TLSFixture.server()
        let session = try session()
        let request = session.request(server.url("/fault/stall"))
        let task = request.serializingData()
        request.cancel()
        let response = await task.response
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(await session.request(server.url("/get")).serializingData().response.response?.statusCode == 200)
        try await server.shutdown()
    }

    @Test func concurrentRequestsWaitForTheOneConnectionTheLimitAllows() async throws {
        let server = try await TLSFixture.server()
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = 1
        let session = trustingSession(PinnedCertificatesTrustEvaluator(certificates: [try TLSFixture.certificate("ca.der")],
                                                                       acceptSelfSignedCertificates: true),
                                      configuration: configuration)
        let statuses = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<6 {
                group.addTask { await session.request(server.url("/get")).serializingData().response.response?.statusCode }
            }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 6))
        #expect(server.acceptedConnections == 1)
        try await server.shutdown()
    }

    /// A handler that sleeps per chunk at first: with backpressure the connection stops reading
    /// within a few chunks of the handler instead of buffering the body; all of it still arrives.
    @Test func slowStreamHandlerHoldsBackTheSocket() async throws {
        let server = try await TLSFixture.server()
        let session = try session()
        let total = 8 << 20
        let queue = DispatchQueue(label: "test.slowTrustedConsumer")
        let consumed = Locked(0)
        let largestGap = Locked(0)
        let request = session.streamRequest(server.url("/bytes/\(total)"))
        let completion: DataStreamRequest.Completion = await withCheckedContinuation { continuation in
            request.responseStream(on: queue) { stream in
                guard let data = stream.value else {
                    if let completion = stream.completion { continuation.resume(returning: completion) }
                    return
                }
                let done = consumed.withValue { value -> Int in
                    value += data.count
                    return value
                }
                if done < total / 4 { Thread.sleep(forTimeInterval: 0.01) }
                let received = Int(request.downloadProgress.completedUnitCount)
                largestGap.withValue { $0 = max($0, received - done) }
            }
        }
        #expect(completion.error == nil)
        #expect(consumed.current == total)
        #expect(largestGap.current < 4 << 20, "received ran \(largestGap.current) bytes ahead of the handler")
        try await server.shutdown()
    }
}
