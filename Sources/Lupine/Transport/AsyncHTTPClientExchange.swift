import AsyncHTTPClient
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOConcurrencyHelpers
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix

/// One exchange on AsyncHTTPClient: its response delegate, and the `TransportTask` handed to Session.
///
/// It converts the delegate's callbacks into `TransportEvents`, turns a paused read demand into an
/// unfulfilled future (which stops AsyncHTTPClient from reading the socket), and enforces the idle
/// timeout, which AsyncHTTPClient only offers client-wide.
final class AsyncHTTPClientExchange: HTTPClientResponseDelegate, TransportTask {
    typealias Response = Void

    private struct State {
        var task: HTTPClient.Task<Void>?
        /// The consumer asked to pause reading and has not resumed.
        var isPaused = false
        /// The future handed to AsyncHTTPClient while paused; fulfilled on resume.
        var pausedRead: EventLoopPromise<Void>?
        var cancellationCode: URLError.Code?
        var lastActivity = NIODeadline.now()
        var isCompleted = false
        var bytesSent: Int64 = 0
        var idleCheck: Scheduled<Void>?
    }

    private let request: TransportRequest
    private let events: any TransportEvents
    private let idleTimeout: TimeAmount
    private let expectedBodyLength: Int64?
    private let mutableState = NIOLockedValueBox(State())

    init(request: TransportRequest, events: any TransportEvents) {
        self.request = request
        self.events = events
        self.idleTimeout = .nanoseconds(Int64(max(request.idleTimeout, 0.001) * 1_000_000_000))
        self.expectedBodyLength = request.body?.knownLength
    }

    // MARK: Lifecycle

    func start(_ task: HTTPClient.Task<Void>) {
        let cancelNow = mutableState.withLockedValue { state -> Bool in
            state.task = task
            state.lastActivity = .now()
            return state.cancellationCode != nil
        }
        if cancelNow { task.cancel() }
        // Scheduling a timer and observing a future from off the event loop each wake the loop;
        // done together in one hop, a request costs one wake-up less.
        let eventLoop = task.eventLoop
        if eventLoop.inEventLoop {
            watch(task)
        } else {
            eventLoop.execute { self.watch(task) }
        }
    }

    /// Arms the idle timeout and waits for the end of `task` (on its event loop).
    private func watch(_ task: HTTPClient.Task<Void>) {
        scheduleIdleCheck(on: task.eventLoop, at: .now() + idleTimeout)
        task.futureResult.whenComplete { result in
            switch result {
            case .success: self.complete(error: nil)
            case let .failure(error): self.complete(error: error)
            }
        }
    }

    func failBeforeStart(_ error: any Error) {
        complete(error: error)
    }

    private func complete(error: (any Error)?) {
        let (alreadyCompleted, cancellationCode, pausedRead, idleCheck) = mutableState.withLockedValue { state in
            defer {
                state.isCompleted = true
                state.pausedRead = nil
                state.idleCheck = nil
            }
            return (state.isCompleted, state.cancellationCode, state.pausedRead, state.idleCheck)
        }
        guard !alreadyCompleted else { return }
        idleCheck?.cancel()
        pausedRead?.succeed()
        guard let error else {
            events.transportDidComplete(self, error: nil)
            return
        }
        let urlError: URLError
        if let cancellationCode {
            urlError = URLError(cancellationCode, userInfo: [
                NSURLErrorFailingURLErrorKey: request.url,
                NSLocalizedDescriptionKey: TransportErrorMapping.description(of: cancellationCode),
            ])
        } else {
            urlError = TransportErrorMapping.urlError(for: error, url: request.url)
        }
        events.transportDidComplete(self, error: urlError)
    }

    // MARK: TransportTask

    func cancel() {
        cancel(with: .cancelled)
    }

    private func cancel(with code: URLError.Code) {
        let (task, pausedRead) = mutableState.withLockedValue { state in
            if state.cancellationCode == nil, !state.isCompleted { state.cancellationCode = code }
            defer { state.pausedRead = nil }
            return (state.task, state.pausedRead)
        }
        task?.cancel()
        pausedRead?.succeed()
    }

    /// Takes effect when the current delegate callback returns, or at the next one: AsyncHTTPClient
    /// is held by the future that callback returns.
    func pauseReading() {
        mutableState.withLockedValue { $0.isPaused = true }
    }

    func resumeReading() {
        let pausedRead = mutableState.withLockedValue { state in
            defer { state.pausedRead = nil }
            state.isPaused = false
            state.lastActivity = .now()
            return state.pausedRead
        }
        pausedRead?.succeed()
    }

    // MARK: Idle timeout

    private func scheduleIdleCheck(on eventLoop: any EventLoop, at deadline: NIODeadline) {
        let scheduled = eventLoop.scheduleTask(deadline: deadline) { self.checkIdle(on: eventLoop) }
        let isCompleted = mutableState.withLockedValue { state in
            if !state.isCompleted { state.idleCheck = scheduled }
            return state.isCompleted
        }
        if isCompleted { scheduled.cancel() }
    }

    private func checkIdle(on eventLoop: any EventLoop) {
        let now = NIODeadline.now()
        let next: NIODeadline? = mutableState.withLockedValue { state in
            if state.isCompleted { return nil }
            // A body paused by its consumer is not a quiet server: the clock restarts on resume.
            if state.isPaused { return now + idleTimeout }
            let due = state.lastActivity + idleTimeout
            return due > now ? due : nil
        }
        if let next {
            scheduleIdleCheck(on: eventLoop, at: next)
        } else if !mutableState.withLockedValue({ $0.isCompleted }) {
            cancel(with: .timedOut)
        }
    }

    private func noteActivity() {
        mutableState.withLockedValue { $0.lastActivity = .now() }
    }

    // MARK: HTTPClientResponseDelegate

    func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
        let total = mutableState.withLockedValue { state in
            state.lastActivity = .now()
            state.bytesSent += Int64(part.readableBytes)
            return state.bytesSent
        }
        events.transportDidSendBodyBytes(self, totalBytesSent: total, totalBytesExpectedToSend: expectedBodyLength)
    }

    func didSendRequest(task: HTTPClient.Task<Void>) {
        noteActivity()
        events.transportDidSendRequest(self)
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        noteActivity()
        let responseHead = TransportResponseHead(
            statusCode: Int(head.status.code),
            httpVersion: "HTTP/\(head.version.major).\(head.version.minor)",
            headerFields: head.headers.map { HTTPHeader(name: $0.name, value: $0.value) }
        )
        events.transportDidReceive(self, head: responseHead)
        return readFuture(on: task.eventLoop)
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        noteActivity()
        // The Data shares the buffer's storage (kept alive by the Data) instead of copying it: the
        // consumer copies it once more into its own buffer or file at most.
        let bodyPart = buffer.getData(at: buffer.readerIndex, length: buffer.readableBytes, byteTransferStrategy: .noCopy) ?? Data()
        events.transportDidReceive(self, bodyPart: bodyPart)
        return readFuture(on: task.eventLoop)
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}

    /// What AsyncHTTPClient waits for before it reads on: nothing, or the resume of a pause.
    private func readFuture(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let isPaused = mutableState.withLockedValue { state in
            state.isPaused && !state.isCompleted && state.cancellationCode == nil
        }
        guard isPaused else { return eventLoop.makeSucceededVoidFuture() }
        let promise = eventLoop.makePromise(of: Void.self)
        let resumedMeanwhile = mutableState.withLockedValue { state -> Bool in
            guard state.isPaused, !state.isCompleted, state.cancellationCode == nil else { return true }
            state.pausedRead = promise
            return false
        }
        if resumedMeanwhile { promise.succeed() }
        return promise.futureResult
    }

    // MARK: Request body

    func makeClientBody(_ body: TransportRequestBody) -> HTTPClient.Body {
        switch body {
        case let .data(data):
            return .bytes(data)
        case let .file(url):
            let reader = FileChunkReader(url: url)
            return streamBody(length: body.knownLength) { try reader.next() }
        case let .stream(length, nextChunk):
            return streamBody(length: length, nextChunk: nextChunk)
        }
    }

    private func streamBody(length: Int64?, nextChunk: @escaping @Sendable () async throws -> Data?) -> HTTPClient.Body {
        .stream(contentLength: length) { writer in
            let promise = MultiThreadedEventLoopGroup.singleton.any().makePromise(of: Void.self)
            promise.completeWithTask {
                while let chunk = try await nextChunk() {
                    if chunk.isEmpty { continue }
                    try await writer.write(.byteBuffer(ByteBuffer(bytes: chunk))).get()
                }
            }
            return promise.futureResult
        }
    }
}
