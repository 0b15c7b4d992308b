import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// `Session.shutdown(gracePeriod:)`: refuse new requests, let running ones finish, cancel the
/// rest, close the transport.
@Suite struct SessionShutdownTests {
    @Test func requestsMadeAfterTheShutdownFailWithoutBeingSent() async throws {
        let server = try await testServer()
        let session = Session()
        #expect(!session.isShutDown)
        await session.shutdown()
        #expect(session.isShutDown)

        let path = "/anything/\(UUID().uuidString)"
        let response = await session.request(server.url(path)).serializingData().response
        guard case .sessionInvalidated(error: nil)? = response.error else {
            Issue.record("expected .sessionInvalidated(error: nil), got \(String(describing: response.error))")
            return
        }
        #expect(response.response == nil)
        #expect(server.hits(for: path) == 0)

        let download = await session.download(server.url(path)).serializingDownloadedFileURL().response
        #expect(download.error?.isSessionInvalidatedError == true)
    }

    @Test func aRequestWithAHandlerAddedLaterStillHearsOfTheShutdown() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        await session.shutdown()
        let request = session.request(server.url("/get"))
        try await Task.sleep(nanoseconds: 50_000_000)
        let response = await request.serializingData().response
        #expect(response.error?.isSessionInvalidatedError == true)
    }

    @Test func requestsInFlightFinishWithinTheGracePeriod() async throws {
        let server = try await testServer()
        let session = Session()
        let started = Locked(false)
        let monitor = ClosureEventMonitor()
        monitor.requestDidSendURLRequest = { _, _ in started.withValue { $0 = true } }
        let request = session.request(server.url("/delay/0.5")).eventMonitor(monitor)
        let task = request.serializingData()
        #expect(await waitUntil { started.current })

        await session.shutdown(gracePeriod: .seconds(30))
        let response = await task.response
        #expect(response.response?.statusCode == 200)
        #expect(response.error == nil)
    }

    @Test func requestsStillRunningAfterTheGracePeriodAreCancelled() async throws {
        let server = try await testServer()
        let session = Session()
        let started = Locked(false)
        let monitor = ClosureEventMonitor()
        monitor.requestDidSendURLRequest = { _, _ in started.withValue { $0 = true } }
        let task = session.request(server.url("/delay/30")).eventMonitor(monitor).serializingData()
        #expect(await waitUntil { started.current })

        await session.shutdown(gracePeriod: .milliseconds(100))
        let response = await task.response
        #expect(response.error?.isExplicitlyCancelledError == true, "\(String(describing: response.error))")
    }

    @Test func cancellingTheShutdownCancelsRequestsAtOnce() async throws {
        let server = try await testServer()
        let session = Session()
        let task = session.request(server.url("/delay/30")).serializingData()
        let shutdown = Task { await session.shutdown(gracePeriod: .seconds(60)) }
        #expect(await waitUntil { session.isShutDown })
        shutdown.cancel()
        await shutdown.value
        let response = await task.response
        #expect(response.error?.isExplicitlyCancelledError == true, "\(String(describing: response.error))")
    }

    @Test func theTransportIsShutDownOnceTheRequestsHaveFinished() async throws {
        let server = try await testServer()
        let carrier = Session()
        let transport = ShutdownRecordingTransport(base: carrier.transport)
        let session = Session(transport: transport)
        transport.observe(session)
        let task = session.request(server.url("/delay/0.2")).serializingData()
        try await Task.sleep(nanoseconds: 20_000_000)

        async let first: Void = session.shutdown()
        async let second: Void = session.shutdown()
        _ = await (first, second)
        #expect(transport.shutdownCount.current >= 1)
        #expect(transport.requestsRunningAtShutdown.current == [0])
        #expect(await task.response.response?.statusCode == 200)
        withExtendedLifetime(carrier) {}
    }
}

/// Forwards to a real transport, and records how often it is shut down and whether its Session
/// still had requests running at that moment.
final class ShutdownRecordingTransport: Transport {
    let base: any Transport
    let shutdownCount = Locked(0)
    let requestsRunningAtShutdown = Locked<[Int]>([])
    private let owner = Locked<Session?>(nil)

    init(base: any Transport) { self.base = base }

    /// The Session whose active requests are counted at shutdown (held until then).
    func observe(_ session: Session) { owner.withValue { $0 = session } }

    func execute(_ request: TransportRequest, events: any TransportEvents) -> any TransportTask {
        base.execute(request, events: events)
    }

    func shutdown(completion: @escaping @Sendable () -> Void) {
        let first = shutdownCount.withValue { count -> Bool in
            count += 1
            return count == 1
        }
        if first, let session = owner.withValue({ session in defer { session = nil }; return session }) {
            requestsRunningAtShutdown.withValue { $0.append(session.activeRequests.withLockedValue { $0.count }) }
        }
        base.shutdown(completion: completion)
    }
}
