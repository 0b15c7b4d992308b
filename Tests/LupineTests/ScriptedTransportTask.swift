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
    ///   - bodySent: Gets the bytes of `body` as sent (nil for none), before the request is
    ///     reported sent.
    init(steps: [ScriptedStep], events: any TransportEvents, request: Request,
         body: TransportRequestBody? = nil, bodySent: @escaping @Sendable (Data?) -> Void = { _ in }) {
        self.steps = steps
        self.events = events
        self.request = request
        self.body = body
        self.bodySent = bodySent
    }

    /// Starts playing, on the task's queue. A stream body is read first, in a Swift task, as the
    /// transport reads one: its chunks are asynchronous.
    func start() {
        let sent: @Sendable (Data?) -> Void = { data in
            self.queue.async {
                // A cancel that ended the exchange while the body was read: nothing more is played.
                guard !self.playback.withLockedValue({ $0.hasEnded }) else { return }
                self.reportSent(data)
                self.events.transportDidSendRequest(self)
                self.play()
            }
        }
        switch body {
        case nil:
            sent(nil)
        case let .data(data)?:
            sent(data)
        case let .file(url)?:
            // On the task's queue, as a transport reads a file off the caller's thread.
            queue.async { sent((try? Data(contentsOf: url)) ?? Data()) }
        case let .stream(_, nextChunk)?:
            Task {
                var read = Data()
                do {
                    while let chunk = try await nextChunk() { read.append(chunk) }
                } catch {
                    self.failSending(afterSending: read)
                    return
                }
                sent(read)
            }
        }
    }

    /// A stream body failed after `read`: the exchange ends as URLProtocolTransport ends it
    /// (`.cannotOpenFile`), and nothing of the script is played.
    private func failSending(afterSending read: Data) {
        queue.async {
            let ends = self.playback.withLockedValue { playback -> Bool in
                defer { playback.hasEnded = true }
                return !playback.hasEnded
            }
            guard ends else { return }
            self.bodySent(read)
            self.events.transportDidComplete(self, error: URLError(.cannotOpenFile))
        }
    }

    /// Reports `data` as the body sent, with its upload progress when there is one. A file that
    /// cannot be read is sent as no bytes.
    private func reportSent(_ data: Data?) {
        bodySent(data)
        guard let data else { return }
        let count = Int64(data.count)
        events.transportDidSendBodyBytes(self, totalBytesSent: count, totalBytesExpectedToSend: count)
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
