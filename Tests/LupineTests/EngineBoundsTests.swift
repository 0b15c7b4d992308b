import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
@testable import Lupine
import LupineTestServer
import Testing

/// What the engine holds on to, and for how long: connects to a refusing host, idle pool entries,
/// and the connects and connections a shut-down engine still had.
@Suite struct EngineBoundsTests {
    /// Counts the connects the engine starts, from its debug log.
    private static func engine(logging store: LogStore, maximumConnectionsPerHost: Int = 6) -> ConnectionEngine {
        var logger = Logger(label: "test.lupine.engine") { _ in InMemoryLogHandler(store: store) }
        logger.logLevel = .debug
        return ConnectionEngine(configuration: .init(maximumConnectionsPerHost: maximumConnectionsPerHost, logger: logger))
    }

    private static func connects(in store: LogStore) -> Int {
        store.entries.filter { $0.message == "opening connection" }.count
    }

    /// A failed connect fails the requests waiting for it, instead of failing one and starting
    /// another connect for each of the others.
    @Test func requestsQueuedForARefusingHostFailTogetherAfterAFewConnects() async throws {
        let store = LogStore()
        let engine = Self.engine(logging: store)
        let session = Session(transport: engine)
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let url = refusing.url("/get")
        let codes = await withTaskGroup(of: URLError.Code?.self) { group in
            for _ in 0..<100 {
                group.addTask { await session.request(url).serializingData().response.error?.sessionTaskURLErrorCode }
            }
            return await group.reduce(into: [URLError.Code?]()) { $0.append($1) }
        }

        #expect(codes.count == 100)
        #expect(codes.allSatisfy { $0 == .cannotConnectToHost }, "\(Set(codes.map { "\(String(describing: $0))" }))")
        // The per-host limit at once, and a few rounds more for requests that came during a backoff:
        // not one connect per request.
        #expect(Self.connects(in: store) <= 20, "\(Self.connects(in: store)) connects")
    }

    @Test func connectsToARefusingHostBackOff() async throws {
        let store = LogStore()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock) { configuration in
            configuration.logger = Logger(label: "test.lupine.engine") { _ in InMemoryLogHandler(store: store) }
            configuration.logger.logLevel = .debug
        }
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let url = refusing.url("/get")
        let first = await session.request(url).serializingData().response
        #expect(first.error?.sessionTaskURLErrorCode == .cannotConnectToHost)

        // The next connect waits for the end of the backoff.
        let second = session.request(url).serializingData()
        #expect(await waitUntil { store.entries.contains { $0.message == "backing off after failed connects" } })
        #expect(Self.connects(in: store) == 1)
        clock.advance(by: .milliseconds(100))
        #expect(await second.response.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        #expect(Self.connects(in: store) == 2)
    }

    @Test func anOriginNoLongerUsedLeavesNoPoolEntry() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        var configuration = ConnectionEngine.Configuration(idleConnectionTimeout: 30)
        configuration.clock = clock
        let engine = ConnectionEngine(configuration: configuration)
        let session = Session(transport: engine)
        #expect(await session.performsNormalRequest(on: server))
        #expect(engine.poolEntryCount == 1)

        #expect(await clock.waitForTimers(dueWithin: .seconds(30)))
        clock.advance(by: .seconds(31))
        #expect(await waitUntil { engine.connectionCounts.open == 0 && engine.poolEntryCount == 0 })
        try await server.shutdown()
    }

    // MARK: Shutdown

    @Test func shutdownGivesUpConnectsUnderWayAndWaitsForThem() async throws {
        let silent = try await LupineFaultServer.start(FaultPlan(.connect, .silence))
        let engine = ConnectionEngine(configuration: .init(connectTimeout: 600))
        let session = Session(transport: engine)
        let request = session.request(silent.url("/never"))
        let task = request.serializingData()
        #expect(await waitUntil { request.task != nil })

        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }
        // Once shut down, nothing of the connect is left.
        let leaked = await ClientSockets.leaked(toPorts: [silent.port], beyond: [], excludingLocalPorts: silent.queuedClientPorts)
        #expect(leaked.isEmpty, "\(leaked.count) socket(s) left")
        #expect(await task.response.error?.sessionTaskURLErrorCode == .cancelled)
        try await silent.shutdown()
    }

    @Test func anEngineShutDownOpensNoDedicatedConnection() async throws {
        let server = try await LupineTestServer.start()
        let engine = ConnectionEngine()
        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }
        let session = Session(transport: engine)
        let socket = session.webSocketRequest(to: server.url("/websocket/echo").replacingOccurrences(of: "http", with: "ws"))
        let events = await webSocketEvents(of: socket)
        #expect(events.last?.completion?.error != nil)
        #expect(server.acceptedConnections == 0)
        try await server.shutdown()
    }
}
