import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// What `lupine soak` found, one test per finding.
@Suite struct SoakRegressionTests {
    /// Waits (polling, up to 5 s) until `released()` is true.
    private static func eventually(_ released: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while !released() {
            guard ContinuousClock.now < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return true
    }

    /// A request whose connection failed while it waited in the pool was held, with its task and
    /// response, by the pool's wait timer until the timer fired (60 s by default): at a steady rate
    /// of refused connections, memory grew by about 5 KiB per request for a minute's worth of them.
    @Test func requestWhoseConnectionWasRefusedIsReleasedAtOnce() async throws {
        let refusing = try RefusingLoopbackPort()
        defer { refusing.close() }
        let session = Session()
        weak var released: DataRequest?
        do {
            let request = session.request(refusing.url("/get"))
            released = request
            let response = await request.serializingData().response
            #expect(response.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        }
        #expect(await Self.eventually { released == nil })
    }

    /// The same release when the exchange ends before `execute` returns, as a refused connection
    /// does when the event loop runs ahead of the caller on a loaded machine (1 run in 3 of the
    /// test above failed so): the request attached the ended exchange for its read demand after
    /// the fact, and the exchange, holding the request through its events, was never let go.
    @Test func requestWhoseExchangeEndsBeforeExecuteReturnsIsReleased() async throws {
        let session = Session(transport: FailingInsideExecuteTransport())
        weak var released: DataRequest?
        do {
            let request = session.request("http://127.0.0.1:9/get")
            released = request
            let response = await request.serializingData().response
            #expect(response.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        }
        #expect(await Self.eventually { released == nil })
    }

    /// A kept-alive connection that the server closed in the middle of a response was held by its
    /// idle timer, armed when it was last idle, until the timer fired (a minute by default): the
    /// connection, its channel and the channel's pooled receive buffers, which reads on a busy
    /// machine grow to 64 KiB. The soak's resumed downloads (each first closed mid-body) grew
    /// resident memory by about 5 KiB per operation so, 43 MiB in 9,000 operations under load.
    @Test func connectionClosedDuringAnExchangeIsNotHeldByItsIdleTimer() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        var configuration = ConnectionEngine.Configuration()
        configuration.clock = clock
        let engine = ConnectionEngine(configuration: configuration)
        let session = Session(transport: engine)
        // The first exchange leaves the connection idle in the pool, its idle timer armed.
        #expect(await session.performsNormalRequest(on: server))
        #expect(await clock.waitForTimers(dueWithin: .lupineSeconds(configuration.idleConnectionTimeout)))
        // The second reuses it, and the server closes it mid-body.
        let response = await session.request(server.url("/fault/close-mid-body")).serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .networkConnectionLost)
        #expect(await waitUntil { engine.connectionCounts == ConnectionCounts(open: 0, opened: 1, closed: 1) })

        // No connection is left to time out: no timer may still hold the closed one.
        #expect(await Self.eventually { clock.pendingTimers(dueWithin: .hours(1)) == 0 })
        await session.shutdown()
        try await server.shutdown()
    }

    /// Many concurrent requests over one HTTP/2 connection: each one ends with its response, on
    /// that one connection.
    ///
    /// The engine once closed each stream's channel as soon as its response ended, a moment before
    /// swift-nio-http2 closed the stream itself, which sent RST_STREAM(CANCEL) for every request.
    /// swift-nio-http2's server, like others, drops a connection after 200 resets in 30 s: about
    /// one request in ten then failed with networkConnectionLost, and the pool opened 3 to 11
    /// connections for 300 requests.
    @Test func concurrentRequestsOverHTTP2AllSucceed() async throws {
        let identity = try LupineTestServerTLS(certificateChainFile: TLSFixture.path("chain.pem"),
                                               privateKeyFile: TLSFixture.path("leaf-key.pem"))
        let server = try await LupineHTTP2TestServer.start(tls: identity)
        let evaluator = SharedTrustEvaluator(TestCATrustEvaluator(anchors: [try TLSFixture.certificate("ca.der")]))
        let session = Session(serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": evaluator]))
        let total = 300
        let outcomes = await withTaskGroup(of: String.self) { group in
            var next = 0
            var outcomes: [String: Int] = [:]
            func add() {
                let url = server.url("/get?i=\(next)")
                next += 1
                group.addTask {
                    let response = await session.request(url, requestModifier: { $0.timeoutInterval = 3 }).validate()
                        .serializingData().response
                    return response.error.map { "\($0.sessionTaskURLErrorCode.map { "\($0.rawValue)" } ?? "\($0)")" } ?? "ok"
                }
            }
            for _ in 0..<32 { add() }
            while let outcome = await group.next() {
                outcomes[outcome, default: 0] += 1
                if next < total { add() }
            }
            return outcomes
        }
        await session.shutdown()
        try await server.shutdown()

        #expect(outcomes == ["ok": total])
        #expect(server.acceptedConnections == 1)
    }
}

/// Fails every exchange with `cannotConnectToHost` from inside `execute`, before it returns (the
/// transport contract allows events before `execute` returns). Its task holds the events it
/// reports to, as the engine's exchange does.
private final class FailingInsideExecuteTransport: Transport {
    private final class FailedTask: TransportTask {
        let events: any TransportEvents

        init(events: any TransportEvents) {
            self.events = events
        }

        func cancel() {}
        func pauseReading() {}
        func resumeReading() {}
    }

    func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask {
        let task = FailedTask(events: events)
        events.transportDidComplete(task, error: URLError(.cannotConnectToHost))
        return task
    }

    func shutdown(completion: @escaping @Sendable () -> Void) {
        completion()
    }
}
