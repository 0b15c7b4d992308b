import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// An event costs nothing for a monitor that does not implement it: once a monitor type is seen
/// keeping the default of an event, the Session stops sending it that event, and a request builds
/// no closure for an event no monitor implements. Events a monitor implements keep arriving.
@Suite struct MonitorEventCostTests {
    /// Implements `requestDidFinish` and `request(_:didReceiveResponse:)` only.
    final class FinishAndResponseMonitor: EventMonitor, @unchecked Sendable {
        let queue = DispatchQueue(label: "test.finishAndResponseMonitor")
        let finished = Locked(0)
        let responses = Locked(0)

        func requestDidFinish(_ request: Request) { finished.increment() }
        func request(_ request: Request, didReceiveResponse response: HTTPURLResponse) { responses.increment() }
    }

    @Test func eventsAMonitorKeepsTheDefaultOfStopAfterTheFirstRequest() async throws {
        let server = try await testServer()
        let monitor = FinishAndResponseMonitor()
        let session = Session(eventMonitors: [monitor])
        for _ in 0..<3 {
            _ = await session.request(server.url("/get")).serializingData().response
        }
        #expect(await waitUntil { monitor.finished.current == 3 })

        // Implemented: wanted on every request.
        #expect(session.eventMonitor.wants(.didFinish))
        #expect(session.eventMonitor.wants(.didReceiveResponse))
        // Kept as defaults: seen once, then no longer sent.
        #expect(!session.eventMonitor.wants(.didSendURLRequest))
        #expect(!session.eventMonitor.wants(.didCreateURLRequest))
        #expect(!session.eventMonitor.wants(.didCompleteAttempt))
        #expect(!session.eventMonitor.wants(.didParseSerializedDataResponse))
        #expect(monitor.responses.current == 3)
    }

    @Test func aNewSessionKnowsWhatAMonitorTypeAlreadyKeptAsDefault() async throws {
        let server = try await testServer()
        let first = FinishAndResponseMonitor()
        let firstSession = Session(eventMonitors: [first])
        _ = await firstSession.request(server.url("/get")).serializingData().response
        // Events reach a monitor in order: once it has finished, it has seen the others.
        #expect(await waitUntil { first.finished.current == 1 })
        #expect(first.responses.current == 1)
        let monitor = FinishAndResponseMonitor()
        let session = Session(eventMonitors: [monitor])
        #expect(!session.eventMonitor.wants(.didSendURLRequest))
        #expect(session.eventMonitor.wants(.didReceiveResponse))
        _ = await session.request(server.url("/get")).serializingData().response
        #expect(await waitUntil { monitor.finished.current == 1 })
        #expect(monitor.responses.current == 1)
    }

    @Test func theDefaultMonitorOnlyReceivesTheEventsItPostsNotificationsFor() {
        let session = Session()
        #expect(session.eventMonitor.wants(.didResume))
        #expect(session.eventMonitor.wants(.didFinish))
        #expect(!session.eventMonitor.wants(.didReceiveResponse))
        #expect(!session.eventMonitor.wants(.didCreateInitialURLRequest))
        #expect(!session.eventMonitor.wants(.didParseSerializedDataResponse))
    }

    @Test func aMonitorAddedToOneRequestReceivesWhatItImplements() async throws {
        let server = try await testServer()
        let monitor = FinishAndResponseMonitor()
        let session = Session()
        _ = await session.request(server.url("/get")).eventMonitor(monitor).serializingData().response
        #expect(await waitUntil { monitor.finished.current == 1 })
        #expect(monitor.responses.current == 1)
    }
}
