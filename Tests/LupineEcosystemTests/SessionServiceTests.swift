import Foundation
import Lupine
import LupineServiceLifecycle
import LupineTestServer
import ServiceLifecycle
import ServiceLifecycleTestKit
import Testing

/// `SessionService` shuts its Session down with the service group.
@Suite struct SessionServiceTests {
    @Test func aGracefulShutdownLetsTheRequestInFlightFinishThenRefusesNewOnes() async throws {
        let server = try await testServer()
        let session = Session()
        let service = SessionService(session: session, gracePeriod: .seconds(30))
        let sent = Locked(false)
        let monitor = ClosureEventMonitor()
        monitor.requestDidSendURLRequest = { _, _ in sent.withValue { $0 = true } }

        try await testGracefulShutdown { trigger in
            let running = Task { try await service.run() }
            let inFlight = session.request(server.url("/delay/0.3")).eventMonitor(monitor).serializingData()
            #expect(await waitUntil { sent.current })
            #expect(!session.isShutDown)

            trigger.triggerGracefulShutdown()
            try await running.value
            #expect(session.isShutDown)
            #expect(await inFlight.response.response?.statusCode == 200)
        }
        let refused = await session.request(server.url("/get")).serializingData().response
        #expect(refused.error?.isSessionInvalidatedError == true)
    }

    @Test func cancellingTheServiceCancelsTheRequestsAtOnce() async throws {
        let server = try await testServer()
        let session = Session()
        let service = SessionService(session: session, gracePeriod: .seconds(60))
        try await testGracefulShutdown { _ in
            let inFlight = session.request(server.url("/delay/30")).serializingData()
            let running = Task { try await service.run() }
            try await Task.sleep(nanoseconds: 50_000_000)
            running.cancel()
            try await running.value
            #expect(session.isShutDown)
            #expect(await inFlight.response.error?.isExplicitlyCancelledError == true)
        }
    }
}
