import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// HTTP/1.1 servers that behave like real ones: interim responses, trailers, connections closed
/// after a number of requests, responses that trickle in. (The HTTP/2 counterparts are in
/// HTTP2LifecycleTests.)
@Suite struct HTTP1ServerBehaviourTests {
    private static func get(_ session: Session, _ url: String, timeout: TimeInterval = 10) async -> DataResponse<String, AFError> {
        await session.request(url, requestModifier: { $0.timeoutInterval = timeout }).serializingString().response
    }

    @Test(arguments: [100, 102, 103])
    func interimResponsesBeforeTheResponseAreSkipped(code: Int) async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let response = await Self.get(session, server.url("/fault/informational?code=\(code)&count=2"))
        let next = await Self.get(session, server.url("/get"))
        try await server.shutdown()

        #expect(response.response?.statusCode == 200)
        #expect(response.value == "ok\n")
        #expect(next.response?.statusCode == 200)
        #expect(server.acceptedConnections == 1)
    }

    @Test func aChunkedResponseWithTrailersIsDeliveredWholeAndTheConnectionReused() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let response = await Self.get(session, server.url("/fault/trailers"))
        let next = await Self.get(session, server.url("/get"))
        try await server.shutdown()

        #expect(response.value == "ok\n")
        #expect(next.response?.statusCode == 200)
        #expect(server.acceptedConnections == 1)
    }

    /// nginx closes a connection after `keepalive_requests`, saying `Connection: close` on the last
    /// response: the next request goes on a new connection.
    @Test func aServerThatClosesAfterNRequestsGetsANewConnection() async throws {
        let server = try await LupineTestServer.start(maximumRequestsPerConnection: 2)
        let session = Session()
        for index in 0..<5 {
            let response = await Self.get(session, server.url("/get?n=\(index)"))
            #expect(response.response?.statusCode == 200, "request \(index)")
        }
        try await server.shutdown()

        #expect(server.acceptedConnections == 3)
    }

    /// URLSession's request timeout restarts whenever data arrives: a head that trickles in one
    /// byte every 40 ms, for more than twice the timeout in all, is no quiet server.
    @Test func aResponseHeadTricklingInFasterThanTheTimeoutSucceeds() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        // The connection first, outside the short timeout.
        _ = await Self.get(session, server.url("/get"))
        let response = await Self.get(session, server.url("/fault/dribble-head?interval-ms=40"), timeout: 1.5)
        try await server.shutdown()

        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.value == "ok\n")
    }

    @Test func aResponseHeadTricklingInSlowerThanTheTimeoutTimesOut() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let response = await Self.get(session, server.url("/fault/dribble-head?interval-ms=1000"), timeout: 0.3)
        try await server.shutdown()

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
    }

    /// Twenty bytes over 4 s, 200 ms apart, with a 3 s timeout: a timeout counted over the whole
    /// body would fire a second before its end, while each gap leaves 2.8 s of margin, so a
    /// loaded machine stalling the server's event loop for a second or two is not a quiet server.
    @Test func aThrottledBodyWithGapsShorterThanTheTimeoutSucceeds() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        _ = await Self.get(session, server.url("/get"))
        let response = await Self.get(session, server.url("/drip?numbytes=20&duration=4"), timeout: 3)
        try await server.shutdown()

        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.value?.count == 20)
    }
}
