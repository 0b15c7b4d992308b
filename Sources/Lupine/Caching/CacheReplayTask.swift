import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plays a stored response to a request's exchange as if the transport had received it: the head,
/// the body in one part, then completion, honouring `.pause` and `cancel()` like a transport.
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
    private var isPaused = false
    /// `resumeReading()` calls that arrived before the `.pause` they answer was recorded.
    private var earlyResumes = 0

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

    func resumeReading() {
        queue.async {
            if self.isPaused {
                self.isPaused = false
                self.advance()
            } else {
                self.earlyResumes += 1
            }
        }
    }

    private func advance() {
        while !isPaused {
            let readiness: TransportReadiness
            switch step {
            case .head:
                step = .body
                readiness = events.transportDidReceive(self, head: stored.head())
            case .body:
                step = .complete
                readiness = stored.data.isEmpty ? .proceed : events.transportDidReceive(self, bodyPart: stored.data)
            case .complete:
                complete(error: nil)
                return
            case .done:
                return
            }
            if case .pause = readiness {
                if earlyResumes > 0 { earlyResumes -= 1 } else { isPaused = true }
            }
        }
    }

    private func complete(error: URLError?) {
        guard step != .done else { return }
        step = .done
        events.transportDidComplete(self, error: error)
    }
}
