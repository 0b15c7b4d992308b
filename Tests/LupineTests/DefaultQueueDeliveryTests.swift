import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// Where a closure request's end and its handlers run when the handlers keep the default queue:
/// the validators, the serializer and the monitors' events on the root queue, each handler on the
/// Session's queue with the root queue free, in the order the caller added them.
@Suite struct DefaultQueueDeliveryTests {
    /// Where one step of a request ran: on the root queue, on the Session's default queue.
    struct Place: Equatable, CustomStringConvertible {
        let step: String
        let onRootQueue: Bool
        let onDefaultQueue: Bool

        var description: String { "\(step) root: \(onRootQueue) default: \(onDefaultQueue)" }
    }

    /// Marks a Session's root queue and default queue, so that a closure can tell which it runs on.
    final class QueueMarks: Sendable {
        let rootKey = DispatchSpecificKey<Int>()
        let defaultKey = DispatchSpecificKey<Int>()

        init(_ session: Session) {
            session.rootQueue.setSpecific(key: rootKey, value: 1)
            session.callbackQueue.setSpecific(key: defaultKey, value: 1)
        }

        func place(_ step: String) -> Place {
            Place(step: step, onRootQueue: DispatchQueue.getSpecific(key: rootKey) != nil,
                  onDefaultQueue: DispatchQueue.getSpecific(key: defaultKey) != nil)
        }
    }

    /// A serializer that notes where it runs.
    struct PlaceNotingSerializer: ResponseSerializer {
        let marks: QueueMarks
        let places: Locked<[Place]>

        func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Int {
            places.withValue { $0.append(marks.place("serializer")) }
            if let error { throw error }
            return data?.count ?? 0
        }
    }

    @Test func validatorsSerializerAndMonitorsRunOnTheRootQueueAndHandlersOnTheDefaultQueueAfterIt() async throws {
        let server = try await testServer()
        let monitor = ClosureEventMonitor()
        let session = Session(eventMonitors: [monitor])
        let marks = QueueMarks(session)
        let places = Locked<[Place]>([])
        monitor.requestDidFinish = { _ in places.withValue { $0.append(marks.place("monitor")) } }
        // Several in a row: the first finds nothing awake; the others follow a handler's thread.
        for _ in 0..<10 {
            places.withValue { $0.removeAll() }
            await withCheckedContinuation { continuation in
                session.request(server.url("/bytes/64"))
                    .validate { _, _, _ in
                        places.withValue { $0.append(marks.place("validator")) }
                        return .success(())
                    }
                    .response(responseSerializer: PlaceNotingSerializer(marks: marks, places: places)) { _ in
                        places.withValue { $0.append(marks.place("first handler")) }
                    }
                    .responseData { _ in
                        places.withValue { $0.append(marks.place("second handler")) }
                        continuation.resume()
                    }
            }
            #expect(await waitUntil { places.current.count == 5 })
            #expect(places.current == [
                Place(step: "validator", onRootQueue: true, onDefaultQueue: false),
                Place(step: "monitor", onRootQueue: true, onDefaultQueue: false),
                Place(step: "serializer", onRootQueue: true, onDefaultQueue: false),
                Place(step: "first handler", onRootQueue: false, onDefaultQueue: true),
                Place(step: "second handler", onRootQueue: false, onDefaultQueue: true),
            ], "\(places.current)")
        }
        withExtendedLifetime(session) {}
    }

    /// A handler on the default queue that waits, blocking, for another request of its Session
    /// (answered on a queue of the caller's) is answered: the root queue is not held while the
    /// handler runs.
    @Test func handlerOnTheDefaultQueueWaitingForAnotherRequestOfItsSessionIsAnswered() async throws {
        let server = try await testServer()
        let session = Session()
        for _ in 0..<5 {
            let answered = await withCheckedContinuation { continuation in
                session.request(server.url("/bytes/64")).validate().responseData { _ in
                    let done = DispatchSemaphore(value: 0)
                    session.request(server.url("/bytes/32")).validate().responseData(queue: .global()) { _ in done.signal() }
                    continuation.resume(returning: done.wait(timeout: .now() + 10) == .success)
                }
            }
            #expect(answered)
        }
        withExtendedLifetime(session) {}
    }

    /// Download progress and handlers on the default queue arrive in order: the progress of the
    /// body first, then the handlers in the order they were added.
    @Test func progressThenHandlersArriveInOrderOnTheDefaultQueue() async throws {
        let server = try await testServer()
        let session = Session()
        for _ in 0..<5 {
            let events = await withCheckedContinuation { continuation in
                let events = Locked<[String]>([])
                session.request(server.url("/bytes/64"))
                    .downloadProgress { _ in events.withValue { $0.append("progress") } }
                    .responseData { _ in events.withValue { $0.append("first") } }
                    .response { _ in
                        events.withValue { $0.append("second") }
                        continuation.resume(returning: events.current)
                    }
            }
            #expect(events == ["progress", "first", "second"])
        }
        withExtendedLifetime(session) {}
    }
}
