import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import NIOCore
import NIOEmbedded
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

    /// The pool's one wait sweep: a waiter with a short timeout that queued behind one with a long
    /// timeout still times out on time, and the other keeps its place and runs.
    @Test func waitersForAPooledConnectionTimeOutEachAtItsOwnDeadline() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = 1
        let session = Session.onManualClock(clock, configuration: configuration)
        // Holds the only connection until it is cancelled.
        let holder = session.request(server.url("/delay/30")).serializingData()
        #expect(await waitUntil { clock.requestsSent == 1 })
        let patient = session.request(server.url("/get?n=patient")) { $0.timeoutInterval = 30 }.serializingData()
        #expect(await clock.waitForTimers(dueWithin: .seconds(30)))
        let hasty = session.request(server.url("/get?n=hasty")) { $0.timeoutInterval = 5 }.serializingData()
        #expect(await clock.waitForTimers(dueWithin: .seconds(5)))

        clock.advance(by: .seconds(6))
        let hastyResponse = await hasty.response
        #expect((hastyResponse.error?.underlyingError as? URLError)?.code == .timedOut)
        // The connection frees up: the patient waiter, still in line, takes it.
        holder.cancel()
        #expect(await holder.response.error?.isExplicitlyCancelledError == true)
        #expect(await patient.response.response?.statusCode == 200)
        #expect(server.hits(for: "/get") == 1)
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

    /// The pool chose a kept-alive connection that the server had closed a moment before, and it
    /// was inactive when the exchange came to start on it: the exchange goes out on a new
    /// connection. It failed with networkConnectionLost instead (its retry wanted an exchange
    /// already running), 1 run in 5 of ConnectionReuseFaultTests' pooled-connection test.
    @Test func exchangeHandedAConnectionThatClosedBeforeItStartedIsSentOnANewOne() async throws {
        let server = try await LupineTestServer.start()
        let pool = ConnectionPool(configuration: ConnectionEngine.Configuration())
        let request = TransportRequest(url: try #require(URL(string: server.url("/get"))), method: .get, headerFields: [])
        let events = EngineBodyTests.Recorder()
        let (key, shareable) = try #require(ConnectionKey.make(for: request))
        let exchange = EngineExchange(request: request, events: events, key: key, shareable: shareable, pool: pool)

        try Self.startOnAReusedConnectionThatJustClosed(exchange)

        #expect(await waitUntil { events.isComplete })
        #expect(events.error == nil)
        #expect(events.statusCode == 200)
        #expect(server.acceptedConnections == 1)
        await withCheckedContinuation { continuation in pool.shutdown { continuation.resume() } }
        try await server.shutdown()
    }

    /// Starts `exchange`, waiting as the pool hands it over, on the handler of a connection that
    /// carried exchanges before and has just closed (its handler not yet out of the pipeline).
    private static func startOnAReusedConnectionThatJustClosed(_ exchange: EngineExchange) throws {
        let channel = EmbeddedChannel()
        let handler = ExchangeHandler(clock: SystemEngineClock())
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        channel.close(promise: nil)
        #expect(exchange.beginWaiting())
        handler.start(exchange, reused: true)
        channel.embeddedEventLoop.run()
    }

    /// The retry on a new connection happens once: when that connection fails too, the request
    /// fails.
    @Test func requestIsRetriedOnlyOnceAfterADeadReusedConnection() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        #expect(await session.request(server.url("/fault/drop-next")).serializingString().response.value == "ok\n")
        // Dropped on the reused connection, then reset on the new one.
        let response = await session.request(server.url("/fault/reset")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(server.acceptedConnections == 2)
        #expect(server.hits(for: "/fault/reset") == 1)
        try await server.shutdown()
    }

    /// A streamed body cannot be produced twice: it is not retried on a new connection.
    @Test func streamedBodyOnADeadReusedConnectionIsNotRetried() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        #expect(await session.request(server.url("/fault/drop-next")).serializingString().response.value == "ok\n")
        let stream = InputStream(data: Data("streamed".utf8))
        let response = await session.upload(stream, to: server.url("/upload")).serializingData().response

        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(server.acceptedConnections == 1)
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

    /// The server sends a second response nobody asked for right behind the first: the connection
    /// is dropped for it before the next request could be sent on it.
    @Test func bytesPastTheResponseCloseTheConnectionBeforeTheNextRequest() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let first = await session.request(server.url("/fault/extra-bytes")).serializingString().response
        #expect(first.value == "hello")
        for _ in 0..<3 {
            let next = await session.request(server.url("/get")).serializingDecodable(HTTPBinResponse.self).response
            #expect(next.error == nil)
            #expect(next.response?.statusCode == 200)
        }
        #expect(server.acceptedConnections == 2)
        try await server.shutdown()
    }

    /// Through an HTTP proxy each response says `Connection: close` (the test proxy relays one
    /// response per connection): the next request opens a new connection instead of failing on
    /// the closed one.
    @Test func responseAskingConnectionCloseIsNotFollowedOnTheSameConnection() async throws {
        let server = try await LupineTestServer.start()
        let proxy = try await LupineTestProxy.start()
        let engine = ConnectionEngine()
        let configuration = URLSessionConfiguration.af.default
        configuration.connectionProxyDictionary = ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port]
        let session = Session(transport: engine, configuration: configuration)
        for _ in 0..<3 {
            let response = await session.request(server.url("/get")).serializingData().response
            #expect(response.error == nil)
            #expect(response.response?.value(forHTTPHeaderField: "Connection")?.lowercased() == "close")
        }
        #expect(engine.connectionCounts.opened == 3)
        #expect(proxy.records.count == 3)
        try await proxy.shutdown()
        try await server.shutdown()
    }

    @Test func requestsThroughAProxyAndDirectDoNotShareConnections() async throws {
        let server = try await LupineTestServer.start()
        let proxy = try await LupineTestProxy.start(kind: .socks5)
        let engine = ConnectionEngine()
        let direct = Session(transport: engine)
        let configuration = URLSessionConfiguration.af.default
        configuration.connectionProxyDictionary = ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": proxy.port]
        let proxied = Session(transport: engine, configuration: configuration)
        for _ in 0..<2 {
            #expect(await direct.performsNormalRequest(on: server))
            #expect(await proxied.performsNormalRequest(on: server))
        }
        #expect(server.acceptedConnections == 2)
        #expect(proxy.records.count == 1)
        #expect(engine.connectionCounts.opened == 2)
        try await proxy.shutdown()
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
