import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import NIOCore
import Testing

/// The engine's connections: one pool per origin with its limit, keep-alive reuse, idle
/// connections closed, one retry on a reused connection that proves dead, `Connection: close`.
@Suite struct EngineConnectionTests {
    @Test func sequentialRequestsReuseOneKeptAliveConnection() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        for _ in 0..<5 {
            let response = await session.request(server.url("/get")).serializingData().response
            #expect(response.response?.statusCode == 200)
        }
        #expect(server.acceptedConnections == 1)
        try await server.shutdown()
    }

    @Test func concurrentRequestsOpenNoMoreConnectionsThanTheHostLimit() async throws {
        let server = try await LupineTestServer.start()
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = 2
        let session = Session(configuration: configuration)
        let codes = await withTaskGroup(of: Int?.self) { group in
            for index in 0..<8 {
                group.addTask { await session.request(server.url("/delay/0.1?n=\(index)")).serializingData().response.response?.statusCode }
            }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        #expect(codes == Array(repeating: 200, count: 8))
        #expect(server.acceptedConnections == 2)
        try await server.shutdown()
    }

    @Test func idleConnectionIsClosedAfterTheIdleTimeout() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        var engineConfiguration = ConnectionEngine.Configuration(idleConnectionTimeout: 30)
        engineConfiguration.clock = clock
        let engine = ConnectionEngine(configuration: engineConfiguration)
        let session = Session(transport: engine)
        let response = await session.request(server.url("/get")).serializingData().response
        #expect(response.response?.statusCode == 200)
        #expect(engine.connectionCounts.open == 1)

        #expect(await clock.waitForTimers(dueWithin: .seconds(30)))
        clock.advance(by: .seconds(31))
        #expect(await waitUntil { engine.connectionCounts == ConnectionCounts(open: 0, opened: 1, closed: 1) })
        // The next request opens a new connection.
        #expect(await session.performsNormalRequest(on: server))
        #expect(server.acceptedConnections == 2)
        try await server.shutdown()
    }

    @Test func requestOnAReusedConnectionThatDiesBeforeAnsweringIsRetriedOnANewOne() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        // The server closes this connection, without a byte, when it is reused.
        let first = await session.request(server.url("/fault/drop-next")).serializingString().response
        #expect(first.value == "ok\n")
        let second = await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).response

        #expect(second.error == nil)
        #expect(second.response?.statusCode == 200)
        #expect(server.acceptedConnections == 2)
        #expect(server.hits(for: "/get") == 1)
        try await server.shutdown()
    }

    @Test func requestAskingConnectionCloseIsNotFollowedOnTheSameConnection() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let closing = await session.request(server.url("/get"), headers: ["Connection": "close"]).serializingData().response
        #expect(closing.response?.statusCode == 200)
        #expect(await session.performsNormalRequest(on: server))
        #expect(server.acceptedConnections == 2)
        try await server.shutdown()
    }

    @Test func requestsToTwoOriginsUseTwoPools() async throws {
        let first = try await LupineTestServer.start()
        let second = try await LupineTestServer.start()
        let session = Session()
        for _ in 0..<2 {
            #expect(await session.performsNormalRequest(on: first))
            #expect(await session.performsNormalRequest(on: second))
        }
        #expect(first.acceptedConnections == 1)
        #expect(second.acceptedConnections == 1)
        try await first.shutdown()
        try await second.shutdown()
    }

    @Test func connectionCountsFollowOpenedAndClosedConnections() async throws {
        let server = try await LupineTestServer.start()
        let engine = ConnectionEngine()
        let seen = Locked<[ConnectionCounts]>([])
        engine.observeConnectionCounts { counts in seen.withValue { $0.append(counts) } }
        let session = Session(transport: engine)
        #expect(await session.performsNormalRequest(on: server))
        _ = await session.request(server.url("/get"), headers: ["Connection": "close"]).serializingData().response
        #expect(await waitUntil { engine.connectionCounts.closed == 1 })
        #expect(engine.connectionCounts.opened == 1)
        #expect(seen.current.first == ConnectionCounts(open: 1, opened: 1, closed: 0))
        try await server.shutdown()
    }
}
