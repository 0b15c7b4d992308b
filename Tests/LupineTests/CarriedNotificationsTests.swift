import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// The notifications of a request whose end an awaiting task runs are posted once the Session's
/// next root-queue work ends, or by a sweep when none comes (`CarriedEvents`). As in Alamofire,
/// where they are posted on the monitor's queue, a caller may get its value before them. What
/// must hold: every notification comes, once, in order across requests, with the request in its
/// final state, and the request is let go after.
@Suite struct CarriedNotificationsTests {
    private static let names = [Request.didResumeNotification, Request.didResumeTaskNotification,
                                Request.didCompleteTaskNotification, Request.didFinishNotification]

    /// Records the notifications about the requests `isObserved` accepts, in the order posted.
    private final class Recorder: Sendable {
        let posted = Locked<[(name: Notification.Name, request: ObjectIdentifier, isFinished: Bool)]>([])
        private let observers: Locked<[any NSObjectProtocol]> = Locked([])

        init(isObserved: @escaping @Sendable (Request) -> Bool) {
            let tokens = CarriedNotificationsTests.names.map { name in
                NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [posted] note in
                    guard let request = note.request, isObserved(request) else { return }
                    posted.withValue { $0.append((name, ObjectIdentifier(request), request.state == .finished)) }
                }
            }
            observers.withValue { $0 = tokens }
        }

        func stop() {
            observers.current.forEach { NotificationCenter.default.removeObserver($0) }
        }

        func names(of request: Request) -> [Notification.Name] {
            posted.current.filter { $0.request == ObjectIdentifier(request) }.map(\.name)
        }
    }

    /// The last request awaited, with nothing after it: its notifications still all come.
    @Test func theLastRequestsNotificationsComeWithoutAnotherRequest() async throws {
        let server = try await testServer()
        let session = Session()
        // The first request opens the connection, and may be slow enough that its end is not
        // carried; the second is the one whose notifications wait for the sweep.
        _ = await session.request(server.url("/get")).serializingData().response
        let request = session.request(server.url("/get"))
        let recorder = Recorder { $0 === request }
        defer { recorder.stop() }

        let response = await request.serializingData().response

        #expect(response.error == nil)
        #expect(await waitUntil(timeout: 10) { recorder.names(of: request).count == 4 })
        #expect(recorder.names(of: request) == Self.names)
        withExtendedLifetime(session) {}
    }

    /// Requests awaited one after the other: each one's notifications come once, in order, all
    /// before the next request's, and `didFinish` finds the request finished.
    @Test func notificationsOfRequestsAwaitedInTurnKeepTheirOrder() async throws {
        let server = try await testServer()
        let session = Session()
        let requests = Locked<[ObjectIdentifier]>([])
        let recorder = Recorder { requests.current.contains(ObjectIdentifier($0)) }
        defer { recorder.stop() }

        var kept: [DataRequest] = []
        for _ in 0..<5 {
            let request = session.request(server.url("/get"), shouldAutomaticallyResume: false)
            requests.withValue { $0.append(ObjectIdentifier(request)) }
            kept.append(request)
            request.resume()
            let response = await request.serializingData().response
            #expect(response.error == nil)
        }

        #expect(await waitUntil(timeout: 10) { recorder.posted.current.count == 20 })
        let posted = recorder.posted.current
        #expect(posted.map(\.request) == kept.flatMap { request in Array(repeating: ObjectIdentifier(request), count: 4) })
        #expect(posted.map(\.name) == Array(Array(repeating: Self.names, count: 5).joined()))
        let finishedWhenPosted = posted.filter { $0.name == Request.didFinishNotification }.map(\.isFinished)
        #expect(finishedWhenPosted == Array(repeating: true, count: 5))
        withExtendedLifetime(session) {}
    }

    /// The request kept for its notifications is let go once they are posted.
    @Test func aRequestKeptForItsNotificationsIsReleased() async throws {
        let server = try await testServer()
        let session = Session()
        _ = await session.request(server.url("/get")).serializingData().response
        let weakRequest: WeakReference<DataRequest>
        do {
            let request = session.request(server.url("/get"))
            weakRequest = WeakReference(request)
            _ = await request.serializingData().response
        }
        #expect(await waitUntil(timeout: 10) { weakRequest.isReleased })
        withExtendedLifetime(session) {}
    }

    /// Other monitors are not held: a monitor on the default queue has seen the request finish by
    /// the time the awaiting task has its value, as before.
    @Test func otherMonitorsAreToldAtOnce() async throws {
        let server = try await testServer()
        let finished = Locked(false)
        let monitor = ClosureEventMonitor()
        monitor.requestDidFinish = { _ in finished.withValue { $0 = true } }
        let session = Session(eventMonitors: [monitor])

        let response = await session.request(server.url("/get")).serializingData().response
        let hasFinished = finished.current

        #expect(response.error == nil)
        #expect(hasFinished)
        withExtendedLifetime(session) {}
    }
}
