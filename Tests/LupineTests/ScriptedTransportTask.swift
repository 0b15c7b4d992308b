import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import NIOConcurrencyHelpers

/// One thing a scripted exchange does, in order.
enum ScriptedStep: Sendable {
    /// The response head arrives.
    case head(Int, [HTTPHeader] = [])
    /// A part of the response body arrives.
    case body(Data)
    /// The exchange ends: complete with nil, or failed with the error.
    case complete(URLError?)
    /// The test acts on the request at this point of the exchange (cancels it, say).
    case perform(@Sendable (Request) -> Void)
}

/// A `TransportTask` that plays scripted steps into the `TransportEvents` it is given, on a serial
/// queue of its own, as a transport's thread would: the request sent (its body read whole, as the
/// wire would carry it, and reported to `bodySent`), then the steps in order.
///
/// It keeps the transport's contract: events never overlap, reading paused from inside an event
/// takes effect before the next one, and every exchange ends in exactly one completion; a
/// cancelled one ends with `URLError(.cancelled)` and plays nothing more.
final class ScriptedTransportTask: TransportTask {
    private struct Playback {
        var next = 0
        var isPaused = false
        var hasEnded = false
    }

    private let steps: [ScriptedStep]
    private let events: any TransportEvents
    private let request: Request
    private let body: TransportRequestBody?
    private let bodySent: @Sendable (Data?) -> Void
    private let queue = DispatchQueue(label: "lupine.tests.scriptedTransport")
    private let playback = NIOLockedValueBox(Playback())

    /// - Parameters:
    ///   - body: The request body the transport sends.
    ///   - bodySent: Gets the bytes of `body` as sent (nil for none, or for a stream, which is not
    ///     read), before the request is reported sent.
    init(steps: [ScriptedStep], events: any TransportEvents, request: Request,
         body: TransportRequestBody? = nil, bodySent: @escaping @Sendable (Data?) -> Void = { _ in }) {
        self.steps = steps
        self.events = events
        self.request = request
        self.body = body
        self.bodySent = bodySent
    }

    /// Starts playing, on the task's queue.
    func start() {
        queue.async {
            let sent = self.sendBody()
            self.bodySent(sent)
            self.events.transportDidSendRequest(self)
            self.play()
        }
    }

    /// Reads the body as the transport would send it, reporting the bytes sent; nil when there is
    /// none or it is a stream. A file that cannot be read is sent as no bytes.
    private func sendBody() -> Data? {
        let sent: Data
        switch body {
        case nil, .stream?:
            return nil
        case let .data(data)?:
            sent = data
        case let .file(url)?:
            sent = (try? Data(contentsOf: url)) ?? Data()
        }
        let count = Int64(sent.count)
        events.transportDidSendBodyBytes(self, totalBytesSent: count, totalBytesExpectedToSend: count)
        return sent
    }

    func cancel() {
        queue.async {
            let ends = self.playback.withLockedValue { playback -> Bool in
                defer { playback.hasEnded = true }
                return !playback.hasEnded
            }
            if ends { self.events.transportDidComplete(self, error: URLError(.cancelled)) }
        }
    }

    func pauseReading() {
        playback.withLockedValue { $0.isPaused = true }
    }

    func resumeReading() {
        playback.withLockedValue { $0.isPaused = false }
        queue.async { self.play() }
    }

    /// Plays steps until the script ends, reading is paused, or the exchange ended.
    private func play() {
        while let step = takeNextStep() {
            switch step {
            case let .head(statusCode, headerFields):
                events.transportDidReceive(self, head: TransportResponseHead(statusCode: statusCode, headerFields: headerFields))
            case let .body(data):
                events.transportDidReceive(self, bodyPart: data)
            case let .complete(error):
                events.transportDidComplete(self, error: error)
            case let .perform(action):
                action(request)
                // What the action queued here (a cancel) comes before the rest of the script.
                queue.async { self.play() }
                return
            }
        }
    }

    private func takeNextStep() -> ScriptedStep? {
        playback.withLockedValue { playback -> ScriptedStep? in
            guard !playback.hasEnded, !playback.isPaused, playback.next < steps.count else { return nil }
            let step = steps[playback.next]
            playback.next += 1
            if case .complete = step { playback.hasEnded = true }
            return step
        }
    }
}
