import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import NIOCore
import Testing

/// Timeouts as URLSession applies them: `timeoutInterval` (or the configuration's
/// `timeoutIntervalForRequest`) is the longest quiet period, `timeoutIntervalForResource` the
/// longest whole transfer; both fail the request with `URLError(.timedOut)`. The engine also
/// bounds the TCP connect, the TLS handshake and the wait for a pooled connection.
///
/// The engine's timers run on a `ManualEngineClock`: each test moves time forward once the
/// request has reached the phase under test, so no test waits for a timeout to pass.
@Suite struct TimeoutTests {
    // MARK: The idle gap

    @Test func stalledServerFailsWithTimedOutAfterRequestTimeoutInterval() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let task = session.request(server.url("/fault/stall"), requestModifier: { $0.timeoutInterval = 2 }).serializingData()
        #expect(await waitUntil { clock.requestsSent == 1 })
        clock.advance(by: .seconds(1))
        clock.advance(by: .seconds(1))
        let response = await task.response

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(response.response == nil)
        #expect(await session.performsNormalRequest(on: server))
        try await server.shutdown()
    }

    @Test func quietPeriodShorterThanTheTimeoutDoesNotFail() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let request = session.request(server.url("/fault/stall"), requestModifier: { $0.timeoutInterval = 2 })
        let task = request.serializingData()
        #expect(await waitUntil { clock.requestsSent == 1 })
        clock.advance(by: .milliseconds(1900))
        // The idle timer is still armed: nothing fired.
        #expect(clock.pendingTimers(dueWithin: .milliseconds(100)) >= 1)
        #expect(request.error == nil)
        request.cancel()
        #expect(await task.response.error?.isExplicitlyCancelledError == true)
        try await server.shutdown()
    }

    @Test func serverStallingAfterResponseHeadFailsWithTimedOut() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let request = session.request(server.url("/fault/stall-body"), requestModifier: { $0.timeoutInterval = 2 })
        let task = request.serializingData()
        #expect(await waitUntil { request.downloadProgress.completedUnitCount > 0 })
        clock.advance(by: .seconds(2))
        let response = await task.response

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(response.response?.statusCode == 200)
        #expect(await session.performsNormalRequest(on: server))
        try await server.shutdown()
    }

    @Test func configurationRequestTimeoutAppliesWhenRequestSetsNone() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 3
        let session = Session.onManualClock(clock, configuration: configuration)
        let task = session.request(server.url("/fault/stall")).serializingData()
        #expect(await waitUntil { clock.requestsSent == 1 })
        clock.advance(by: .seconds(3))
        let response = await task.response

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        try await server.shutdown()
    }

    @Test func responseDelayedBeyondTimeoutIntervalFailsWithTimedOut() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let task = session.request(server.url("/delay/10"), requestModifier: { $0.timeoutInterval = 2 }).serializingData()
        #expect(await waitUntil { clock.requestsSent == 1 })
        clock.advance(by: .seconds(2))

        #expect(await task.response.error?.sessionTaskURLErrorCode == .timedOut)
        try await server.shutdown()
    }

    @Test func responseDelayedWithinTimeoutIntervalSucceeds() async throws {
        let server = try await testServer()
        let session = Session.onManualClock(ManualEngineClock())
        let response = await session.request(server.url("/delay/0.2"), requestModifier: { $0.timeoutInterval = 5 })
            .serializingDecodable(HTTPBinResponse.self).response
        withExtendedLifetime(session) {}

        #expect(response.error == nil)
        #expect(response.value?.method == "GET")
    }

    @Test func slowButSteadyBodyWithinIdleTimeoutSucceeds() async throws {
        let server = try await testServer()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        // Eight bytes; after each one the clock moves 0.6 s: 4.8 s in all with a 1 s idle timeout,
        // no gap near it.
        let request = session.request(server.url("/drip?numbytes=8&duration=0.8"), requestModifier: { $0.timeoutInterval = 1 })
        let task = request.serializingData()
        var seen: Int64 = 0
        while seen < 8 {
            let before = seen
            guard await waitUntil({ request.downloadProgress.completedUnitCount > before || request.isFinished }) else { break }
            if request.isFinished { break }
            seen = request.downloadProgress.completedUnitCount
            clock.advance(by: .milliseconds(600))
        }
        let response = await task.response

        #expect(response.error == nil)
        #expect(response.data?.count == 8)
        #expect(response.response?.statusCode == 200)
    }

    /// A body its consumer has paused is not a quiet server: the idle clock restarts on resume.
    @Test func suspendedRequestIsNotTimedOutWhileItsBodyIsPaused() async throws {
        let server = try await testServer()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let request = session.request(server.url("/drip?numbytes=10&duration=1"), requestModifier: { $0.timeoutInterval = 2 })
        // Suspended while the response handler holds the body, so the body is paused from its
        // head on whatever the load: suspending once the test saw the head left a window of the
        // drip's 1 s in which a slow test task found the body already complete.
        let suspendedAtHead = Locked(false)
        request.onHTTPResponse(on: .global()) { [weak request] _, completion in
            request?.suspend()
            suspendedAtHead.withValue { $0 = request != nil }
            completion(.allow)
        }
        let task = request.serializingData()
        #expect(await waitUntil { suspendedAtHead.current })
        clock.advance(by: .seconds(10))
        // The idle check ran, found the body paused and armed itself again.
        #expect(await clock.waitForTimers(dueWithin: .seconds(2)))
        #expect(request.isSuspended)
        #expect(request.error == nil)
        request.resume()
        let response = await task.response

        #expect(response.error == nil)
        #expect(response.data?.count == 10)
    }

    // MARK: The resource deadline

    @Test func resourceTimeoutEndsTransferThatKeepsSendingBytes() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForResource = 3
        let session = Session.onManualClock(clock, configuration: configuration)
        // One byte every 100 ms for 30 s: never idle.
        let request = session.request(server.url("/drip?numbytes=300&duration=30"))
        let task = request.serializingData()
        #expect(await waitUntil { request.downloadProgress.completedUnitCount > 2 })
        clock.advance(by: .seconds(3))
        let response = await task.response

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(response.response?.statusCode == 200)
        #expect(await session.performsNormalRequest(on: server))
        try await server.shutdown()
    }

    // MARK: Connecting, handshakes and the pool

    @Test func serverThatNeverAnswersTheTLSHandshakeFailsWithTimedOut() async throws {
        let silent = try await LupineSilentServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock, serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": DisabledTrustEvaluator()]))
        let task = session.request("https://127.0.0.1:\(silent.port)/get", requestModifier: { $0.timeoutInterval = 2 })
            .serializingData()
        #expect(await waitUntil { silent.acceptedConnections == 1 })
        clock.advance(by: .seconds(2))
        let response = await task.response

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        try await silent.shutdown()
    }

    @Test func tlsHandshakeHasItsOwnDeadline() async throws {
        let silent = try await LupineSilentServer.start()
        let clock = ManualEngineClock()
        // A long request timeout: only the handshake deadline (the connect timeout) can end it.
        let session = Session.onManualClock(clock) { $0.connectTimeout = 5 }
        let task = session.request("https://127.0.0.1:\(silent.port)/get", requestModifier: { $0.timeoutInterval = 600 })
            .serializingData()
        #expect(await waitUntil { silent.acceptedConnections == 1 })
        #expect(await clock.waitForTimers(dueWithin: .seconds(5)))
        clock.advance(by: .seconds(5))
        let response = await task.response

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        try await silent.shutdown()
    }

    @Test func plainServerThatAcceptsAndStaysSilentFailsWithTimedOut() async throws {
        let silent = try await LupineSilentServer.start()
        let clock = ManualEngineClock()
        let session = Session.onManualClock(clock)
        let task = session.request("http://127.0.0.1:\(silent.port)/get", requestModifier: { $0.timeoutInterval = 2 })
            .serializingData()
        #expect(await waitUntil { clock.requestsSent == 1 })
        clock.advance(by: .seconds(2))

        #expect(await task.response.error?.sessionTaskURLErrorCode == .timedOut)
        try await silent.shutdown()
    }

    @Test func requestWaitingForAPooledConnectionFailsWithTimedOut() async throws {
        let server = try await LupineTestServer.start()
        let clock = ManualEngineClock()
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = 1
        let session = Session.onManualClock(clock, configuration: configuration)
        // The only connection is taken by a request the server never answers.
        let blocker = session.request(server.url("/fault/stall"), requestModifier: { $0.timeoutInterval = 600 })
        let blockerTask = blocker.serializingData()
        #expect(await waitUntil { clock.requestsSent == 1 })
        let waiting = session.request(server.url("/get"), requestModifier: { $0.timeoutInterval = 2 }).serializingData()
        #expect(await clock.waitForTimers(dueWithin: .seconds(2)))
        clock.advance(by: .seconds(2))
        let response = await waiting.response

        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
        #expect(server.hits(for: "/get") == 0)
        blocker.cancel()
        _ = await blockerTask.response
        try await server.shutdown()
    }
}
