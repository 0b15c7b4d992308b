import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// The WebSocket opening handshake as an exchange of the engine: the same proxies (a `CONNECT`
/// tunnel through an HTTP proxy, SOCKS5), TLS with the trust evaluator, and deadlines as any
/// request; after the 101 the connection carries frames and no HTTP request.
@Suite struct WebSocketEngineTests {
    private static func configuration(through proxy: LupineTestProxy) -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.af.default
        configuration.connectionProxyDictionary = proxy.kind == .socks5
            ? ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": proxy.port]
            : ["HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": proxy.port,
               "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": proxy.port]
        return configuration
    }

    // MARK: Proxies

    @Test func wsGoesThroughTheConnectTunnelOfAnHTTPProxy() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start(connectPorts: nil)
        let session = Session(configuration: Self.configuration(through: proxy))
        let events = await webSocketEvents(of: session.webSocketRequest(to: server.webSocketURL("/websocket/echo?messages=1&close-after=1")))
        try await proxy.shutdown()

        #expect(events.map(\.summary) == ["connected(nil)", "text:message 1", "disconnected(1000,nil)", "completed(nil)"])
        #expect(proxy.records.map(\.method) == ["CONNECT"])
        #expect(proxy.records.first?.target == "127.0.0.1:\(server.port)")
    }

    /// A proxy that refuses `CONNECT` to the port (as squid does to any port but 443) refuses the
    /// WebSocket: it is not sent around the proxy.
    @Test func wsThroughAProxyRefusingTheTunnelFailsWithCannotConnectToHost() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start()
        let session = Session(configuration: Self.configuration(through: proxy))
        let events = await webSocketEvents(of: session.webSocketRequest(to: server.webSocketURL("/websocket/echo")))
        try await proxy.shutdown()

        #expect(events.count == 1)
        #expect(events.last?.completion?.error?.sessionTaskURLErrorCode == .cannotConnectToHost)
        #expect(proxy.records.map(\.status) == [403])
    }

    @Test func wsGoesThroughASOCKS5Proxy() async throws {
        let server = try await testServer()
        let proxy = try await LupineTestProxy.start(kind: .socks5)
        let session = Session(configuration: Self.configuration(through: proxy))
        let events = await webSocketEvents(of: session.webSocketRequest(to: server.webSocketURL("/websocket/echo?messages=1&close-after=1")))
        try await proxy.shutdown()

        #expect(events.map(\.summary) == ["connected(nil)", "text:message 1", "disconnected(1000,nil)", "completed(nil)"])
        #expect(proxy.records.map(\.target) == ["127.0.0.1:\(server.port)"])
    }

    @Test func wssWithATrustPolicyGoesThroughTheConnectTunnel() async throws {
        let server = try await TLSFixture.server()
        let proxy = try await LupineTestProxy.start(connectPorts: nil)
        let pinned = PinnedCertificatesTrustEvaluator(certificates: [try TLSFixture.certificate("ca.der")],
                                                      acceptSelfSignedCertificates: true)
        let session = trustingSession(pinned, configuration: Self.configuration(through: proxy))
        let url = "wss://127.0.0.1:\(server.port)/websocket/echo?messages=1&close-after=1"
        let trusted = await webSocketEvents(of: session.webSocketRequest(to: url))
        let rejectingSession = trustingSession(DefaultTrustEvaluator(), configuration: Self.configuration(through: proxy))
        let rejected = await webSocketEvents(of: rejectingSession.webSocketRequest(to: url))
        try await proxy.shutdown()
        try await server.shutdown()

        #expect(trusted.map(\.summary) == ["connected(nil)", "text:message 1", "disconnected(1000,nil)", "completed(nil)"])
        #expect(rejected.count == 1)
        #expect(rejected.last?.completion?.error?.isServerTrustEvaluationError == true)
        #expect(proxy.records.map(\.method) == ["CONNECT", "CONNECT"])
        withExtendedLifetime((session, rejectingSession)) {}
    }

    // MARK: Deadlines

    @Test func serverThatAcceptsAndNeverAnswersTheHandshakeFailsWithTimedOut() async throws {
        let silent = try await LupineSilentServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let request = session.webSocketRequest(to: "ws://127.0.0.1:\(silent.port)/websocket/echo",
                                               requestModifier: { $0.timeoutInterval = 2 })
        let events = Task { await webSocketEvents(of: request) }
        #expect(await waitUntil { clock.requestsSent == 1 })
        clock.advance(by: .seconds(2))
        let seen = await events.value
        try await silent.shutdown()

        #expect(seen.count == 1)
        #expect(seen.last?.completion?.error?.sessionTaskURLErrorCode == .timedOut)
    }

    @Test func wssServerThatStallsTheTLSHandshakeFailsWithTimedOut() async throws {
        let silent = try await LupineSilentServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock) { $0.connectTimeout = 5 }
        let request = session.webSocketRequest(to: "wss://127.0.0.1:\(silent.port)/websocket/echo",
                                               requestModifier: { $0.timeoutInterval = 600 })
        let events = Task { await webSocketEvents(of: request) }
        #expect(await waitUntil { silent.acceptedConnections == 1 })
        #expect(await clock.waitForTimers(dueWithin: .seconds(5)))
        clock.advance(by: .seconds(5))
        let seen = await events.value
        try await silent.shutdown()

        #expect(seen.last?.completion?.error?.sessionTaskURLErrorCode == .timedOut)
    }

    /// Once open, a socket has no idle deadline: quiet minutes are normal for a WebSocket.
    @Test func openSocketIsNotTimedOutByTheRequestTimeout() async throws {
        let server = try await testServer()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"), requestModifier: { $0.timeoutInterval = 2 })
        let events = await webSocketEvents(of: request) { event in
            switch event.kind {
            case .connected:
                // Timers due now run on the connection's event loop before the message is sent.
                clock.advance(by: .seconds(60))
                request.send(.string("still here")) { _ in }
            case .receivedMessage:
                request.close(sending: .normalClosure)
            default:
                break
            }
        }

        #expect(events.map(\.summary) == ["connected(nil)", "text:still here", "disconnected(1000,nil)", "completed(nil)"])
    }

    // MARK: The connection

    @Test func upgradedConnectionLeavesThePoolAndRequestsUseAnother() async throws {
        let server = try await LupineTestServer.start()
        let engine = ConnectionEngine()
        let session = Session(transport: engine)
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))
        let opened = Locked(false)
        let events = Task {
            await webSocketEvents(of: request) { event in
                if case .connected = event.kind { opened.withValue { $0 = true } }
            }
        }
        #expect(await waitUntil { opened.current })
        #expect(await session.performsNormalRequest(on: server))
        #expect(await session.performsNormalRequest(on: server))
        #expect(server.acceptedConnections == 2)
        request.close(sending: .normalClosure)
        #expect(await events.value.last?.completion?.error == nil)
        #expect(await waitUntil { engine.connectionCounts.closed == 1 })
        #expect(engine.connectionCounts.open == 1)
        try await server.shutdown()
    }

    @Test func refusedUpgradeDoesNotLeaveItsConnectionToTheNextRequest() async throws {
        let server = try await LupineTestServer.start()
        let session = Session()
        let refused = await webSocketEvents(of: session.webSocketRequest(to: server.webSocketURL("/websocket/echo?require-bearer=secret")))
        #expect(refused.last?.completion?.error?.responseCode == 401)
        #expect(await session.performsNormalRequest(on: server))
        #expect(server.acceptedConnections == 2)
        try await server.shutdown()
    }

    @Test func sessionShutdownCancelsAnOpenSocket() async throws {
        let server = try await testServer()
        let engine = ConnectionEngine()
        let session = Session(transport: engine)
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo"))
        let opened = Locked(false)
        let events = Task {
            await webSocketEvents(of: request) { event in
                if case .connected = event.kind { opened.withValue { $0 = true } }
            }
        }
        #expect(await waitUntil { opened.current })
        await withCheckedContinuation { continuation in engine.shutdown { continuation.resume() } }

        #expect(await events.value.last?.completion?.error?.sessionTaskURLErrorCode == .cancelled)
    }
}
