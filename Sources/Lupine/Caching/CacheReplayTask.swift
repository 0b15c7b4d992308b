import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers

/// Plays a stored response to a request's exchange as if the transport had received it: the head,
/// the body in one part, then completion, honouring pauses and `cancel()` like a transport.
///
/// Every step runs on one private serial queue, so events never overlap (the `Transport`
/// contract), and nothing is delivered before `start()` returns.
final class CacheReplayTask: TransportTask, @unchecked Sendable {
    private enum Step {
        case head, body, complete, done
    }

    private let stored: StoredResponse
    private let events: any TransportEvents
    private let queue = DispatchQueue(label: "lupine.cache.replay")
    // Touched only on `queue`.
    private var step = Step.head
    /// What the consumer asks for now (set from any thread, read before each step).
    private let wantsPause = NIOLockedValueBox(false)

    init(stored: StoredResponse, events: any TransportEvents) {
        self.stored = stored
        self.events = events
    }

    func start() {
        queue.async { self.advance() }
    }

    func cancel() {
        queue.async { self.complete(error: URLError(.cancelled)) }
    }

    func pauseReading() {
        wantsPause.withLockedValue { $0 = true }
    }

    func resumeReading() {
        wantsPause.withLockedValue { $0 = false }
        queue.async { self.advance() }
    }

    /// Plays the steps left while the consumer does not pause.
    private func advance() {
        while !wantsPause.withLockedValue({ $0 }) {
            switch step {
            case .head:
                step = .body
                events.transportDidReceive(self, head: stored.head())
            case .body:
                step = .complete
                if !stored.data.isEmpty { events.transportDidReceive(self, bodyPart: stored.data) }
            case .complete:
                complete(error: nil)
                return
            case .done:
                return
            }
        }
    }

    private func complete(error: URLError?) {
        guard step != .done else { return }
        step = .done
        events.transportDidComplete(self, error: error)
    }
}
