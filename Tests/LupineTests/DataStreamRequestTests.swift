import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// One line of `/stream/N`.
private struct StreamLine: Decodable, Sendable {
    let id: Int
    let url: String
}

private struct HandlerFailure: Error {}

private typealias StreamEvent<Success: Sendable, Failure: Error & Sendable> = DataStreamRequest.Stream<Success, Failure>

/// Registers a handler with `register` and returns every event it got, once `.complete` arrives.
/// `onStream` runs for each `.stream` event (it may throw, or sleep to be a slow consumer).
private func events<Success: Sendable, Failure: Error & Sendable>(
    _ register: (@escaping DataStreamRequest.Handler<Success, Failure>) -> Void,
    onStream: @escaping @Sendable (StreamEvent<Success, Failure>) throws -> Void = { _ in }
) async -> [StreamEvent<Success, Failure>] {
    let recorded = Locked<[StreamEvent<Success, Failure>]>([])
    return await withCheckedContinuation { continuation in
        register { stream in
            recorded.withValue { $0.append(stream) }
            if stream.completion != nil {
                continuation.resume(returning: recorded.current)
                return
            }
            try onStream(stream)
        }
    }
}

/// `handler`, noting in `completed` when the completion event reaches it.
private func stampingCompletion<Success: Sendable, Failure: Error & Sendable>(
    in completed: Locked<Date?>, _ handler: @escaping DataStreamRequest.Handler<Success, Failure>
) -> DataStreamRequest.Handler<Success, Failure> {
    { stream in
        if stream.completion != nil { completed.withValue { $0 = Date() } }
        try handler(stream)
    }
}

/// Seconds from `start` to `end`; infinite when either never happened.
private func secondsBetween(_ start: Locked<Date?>, _ end: Locked<Date?>) -> TimeInterval {
    guard let start = start.current, let end = end.current else { return .infinity }
    return end.timeIntervalSince(start)
}

/// Records what `request(_:didParseStream:)` reports, as strings.
private final class ParsedStreamMonitor: EventMonitor, @unchecked Sendable {
    let queue = DispatchQueue(label: "test.parsedStreamMonitor")
    let parsed = Locked<[String]>([])

    func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
        let text = (try? result.get()).map { "\($0)" } ?? "failure"
        parsed.withValue { $0.append(text) }
    }
}

/// The lines of the concatenated chunks.
private func lines(of chunks: [Data]) -> [Substring] {
    String(decoding: chunks.reduce(Data(), +), as: UTF8.self).split(separator: "\n")
}

@Suite struct DataStreamRequestTests {
    @Test func streamDeliversEveryLineThenOneCompletion() async throws {
        let server = try await testServer()
        let request = AF.streamRequest(server.url("/stream/20"))
        let received = await events { request.responseStream(stream: $0) }
        #expect(received.last?.completion != nil)
        #expect(received.dropLast().allSatisfy { $0.completion == nil })
        let chunks = received.compactMap(\.value)
        let decoded = try lines(of: chunks).map { try JSONDecoder().decode(StreamLine.self, from: Data($0.utf8)) }
        #expect(decoded.map(\.id) == Array(0..<20))
        let completion = try #require(received.last?.completion)
        #expect(completion.error == nil)
        #expect(completion.response?.statusCode == 200)
        #expect(completion.request?.url?.path == "/stream/20")
        #expect(request.downloadProgress.completedUnitCount == Int64(chunks.reduce(0) { $0 + $1.count }))
    }

    @Test func stringAndDecodableHandlersSerializeEachChunk() async throws {
        let server = try await testServer()
        let strings = await events { AF.streamRequest(server.url("/stream/5")).responseStreamString(stream: $0) }
        #expect(strings.compactMap(\.value).joined().split(separator: "\n").count == 5)

        let decodables: [StreamEvent<StreamLine, AFError>] = await events {
            AF.streamRequest(server.url("/stream/1")).responseStreamDecodable(of: StreamLine.self, stream: $0)
        }
        #expect(decodables.compactMap(\.value).map(\.id) == [0], "\(decodables.map { ($0.event, $0.value as Any) })")
        #expect(decodables.last?.completion?.error == nil)
    }

    @Test func stringHandlersReportEachStringToTheMonitors() async throws {
        let server = try await testServer()
        let monitor = ParsedStreamMonitor()
        let session = Session(eventMonitors: [monitor])
        let received = await events { session.streamRequest(server.url("/stream/4")).responseStreamString(stream: $0) }
        let strings = received.compactMap(\.value)
        #expect(!strings.isEmpty)
        #expect(await waitUntil { monitor.parsed.current == strings }, "\(monitor.parsed.current) vs \(strings)")

        let asyncMonitor = ParsedStreamMonitor()
        let asyncSession = Session(eventMonitors: [asyncMonitor])
        let streamed = await Array(asyncSession.streamRequest(server.url("/stream/4")).streamTask().streamingStrings())
        let asyncStrings = streamed.compactMap(\.value)
        #expect(!asyncStrings.isEmpty)
        #expect(await waitUntil { asyncMonitor.parsed.current == asyncStrings })
    }

    @Test func encodableParametersOverloadEncodesIntoTheQuery() async throws {
        let server = try await testServer()
        let received = await events {
            AF.streamRequest(server.url("/get"), parameters: ["name": "lupine"]).responseStream(stream: $0)
        }
        let echo = try JSONDecoder().decode(HTTPBinResponse.self, from: received.compactMap(\.value).reduce(Data(), +))
        #expect(echo.args["name"] == .string("lupine"))
    }

    @Test func eachHandlerGetsItsCompletionAfterItsOwnChunks() async throws {
        let server = try await testServer()
        let request = AF.streamRequest(server.url("/stream/10"), shouldAutomaticallyResume: false)
        let slowQueue = DispatchQueue(label: "test.slowHandler")
        let fast = Locked<[String]>([])
        let slow = Locked<[String]>([])
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let remaining = Locked(2)
            let record: @Sendable (Locked<[String]>, StreamEvent<Data, Never>) -> Void = { log, stream in
                log.withValue { $0.append(stream.completion == nil ? "chunk" : "complete") }
                if stream.completion != nil, remaining.withValue({ $0 -= 1; return $0 }) == 0 { continuation.resume() }
            }
            request.responseStream { record(fast, $0) }
            request.responseStream(on: slowQueue) { stream in
                if stream.completion == nil { Thread.sleep(forTimeInterval: 0.05) }
                record(slow, stream)
            }
            request.resume()
        }
        for log in [fast.current, slow.current] {
            #expect(log.last == "complete")
            #expect(log.filter { $0 == "complete" }.count == 1)
            #expect(log.count >= 2)
        }
    }

    @Test func validationFailureIsTheCompletionErrorAndIsReported() async throws {
        let server = try await testServer()
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "test.monitor"))
        let validations = Locked<[Request.ValidationResult]>([])
        monitor.requestDidValidateRequestResponseWithResult = { _, _, _, result in validations.withValue { $0.append(result) } }
        let session = Session(eventMonitors: [monitor])
        let received = await events { session.streamRequest(server.url("/status/404")).validate().responseStream(stream: $0) }
        let error = try #require(received.last?.completion?.error)
        #expect(error.isResponseValidationError)
        #expect(error.responseCode == 404)
        #expect(await waitUntil { validations.current.count == 1 })
    }

    @Test func throwingHandlerCancelsAndRecordsItsError() async throws {
        let server = try await testServer()
        let request = AF.streamRequest(server.url("/drip?numbytes=200&duration=4"))
        // Timed from the first chunk: on a busy machine the request may first wait for one of the
        // shared Session's connections, which says nothing about how fast the cancel is. Timed to
        // the completion's arrival, not to the test's resumption: other tests block the
        // cooperative pool's threads on purpose, which delays that by seconds.
        let firstChunk = Locked<Date?>(nil)
        let completed = Locked<Date?>(nil)
        let received = await events({ request.responseStream(stream: stampingCompletion(in: completed, $0)) }, onStream: { _ in
            firstChunk.withValue { $0 = $0 ?? Date() }
            throw HandlerFailure()
        })
        #expect(secondsBetween(firstChunk, completed) < 3)
        #expect(request.isCancelled)
        let error = try #require(received.last?.completion?.error)
        guard case let .responseSerializationFailed(reason: .customSerializationFailed(error: underlying)) = error else {
            Issue.record("unexpected error \(error)")
            return
        }
        #expect(underlying is HandlerFailure)
    }

    @Test func serializerFailureCancelsOnlyWhenAskedTo() async throws {
        let server = try await testServer()
        let cancelling = AF.streamRequest(server.url("/drip?numbytes=200&duration=4"), automaticallyCancelOnStreamError: true)
        let failed: [StreamEvent<StreamLine, AFError>] = await events {
            cancelling.responseStreamDecodable(of: StreamLine.self, stream: $0)
        }
        #expect(failed.first?.error?.isResponseSerializationError == true)
        #expect(failed.last?.completion?.error?.isExplicitlyCancelledError == true)
        #expect(cancelling.isCancelled)

        let tolerant = AF.streamRequest(server.url("/bytes/300"))
        let tolerated: [StreamEvent<StreamLine, AFError>] = await events {
            tolerant.responseStream(using: .decodable(of: StreamLine.self), stream: $0)
        }
        #expect(tolerated.dropLast().allSatisfy { $0.error?.isResponseSerializationError == true })
        #expect(tolerated.last?.completion?.error == nil)
        #expect(!tolerant.isCancelled)
    }

    @Test func tokenCancelsFromInsideTheHandler() async throws {
        let server = try await testServer()
        let request = AF.streamRequest(server.url("/drip?numbytes=200&duration=4"))
        // Timed from the first chunk (see throwingHandlerCancelsAndRecordsItsError).
        let firstChunk = Locked<Date?>(nil)
        let completed = Locked<Date?>(nil)
        let received = await events({ request.responseStream(stream: stampingCompletion(in: completed, $0)) }, onStream: { stream in
            firstChunk.withValue { $0 = $0 ?? Date() }
            stream.cancel()
        })
        #expect(secondsBetween(firstChunk, completed) < 3)
        #expect(received.last?.completion?.error?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
    }

    @Test func onHTTPResponseSeesTheHeadBeforeAnyChunk() async throws {
        let server = try await testServer()
        let order = Locked<[String]>([])
        let queue = DispatchQueue(label: "test.order")
        let request = AF.streamRequest(server.url("/stream/3"))
            .onHTTPResponse(on: queue) { response in order.withValue { $0.append("head \(response.statusCode)") } }
        _ = await events { request.responseStream(on: queue, stream: $0) }
        #expect(order.current == ["head 200"])
    }

    /// Each chunk shares the buffer it was read into. A caller that keeps the chunks of a drip
    /// (small reads) keeps its connection's read buffers busy; the next response on that
    /// connection, written by the server at once, still arrives as one chunk. With 64-byte reads it
    /// arrived in pieces, and a JSON line reached its decoder as two halves, two failures.
    @Test func bodyWrittenAtOnceIsOneChunkWhileTheCallerKeepsEarlierChunks() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.httpMaximumConnectionsPerHost = 1
        let session = Session(configuration: configuration)
        let drip = session.streamRequest(server.url("/drip?numbytes=2000&duration=0.4"))
        let dripped = await events { drip.responseStream(stream: $0) }
        let keptChunks = dripped.compactMap(\.value)
        #expect(keptChunks.reduce(0) { $0 + $1.count } == 2000)

        let document = session.streamRequest(server.url("/json"))
        let received = await events { document.responseStream(stream: $0) }
        let chunks = received.compactMap(\.value)
        #expect(chunks.count == 1, "chunk sizes \(chunks.map(\.count))")
        #expect((try? JSONSerialization.jsonObject(with: chunks.reduce(Data(), +))) != nil)
        #expect(received.last?.completion?.error == nil)
        withExtendedLifetime(keptChunks) {}
    }

    // MARK: Async

    @Test func streamingDataYieldsEveryChunkThenCompletes() async throws {
        let server = try await testServer()
        let task = AF.streamRequest(server.url("/stream/20")).streamTask()
        var chunks: [Data] = []
        var completions = 0
        for await stream in task.streamingData() {
            if let data = stream.value { chunks.append(data) }
            if stream.completion != nil { completions += 1 }
        }
        #expect(completions == 1)
        #expect(lines(of: chunks).count == 20)

        let decodables = await Array(AF.streamRequest(server.url("/stream/1")).streamTask().streamingDecodables(StreamLine.self))
        #expect(decodables.compactMap(\.value).map(\.id) == [0], "\(decodables.map { ($0.event, $0.value as Any) })")
    }

    @Test func breakingOutOfTheLoopCancelsTheRequest() async throws {
        let server = try await testServer()
        let request = AF.streamRequest(server.url("/drip?numbytes=500&duration=10"))
        for await stream in request.streamTask().streamingStrings() where stream.value != nil {
            break
        }
        #expect(await waitUntil { request.isCancelled })

        let kept = AF.streamRequest(server.url("/drip?numbytes=20&duration=0.5"))
        for await stream in kept.streamTask().streamingData(automaticallyCancelling: false) where stream.value != nil {
            break
        }
        #expect(await waitUntil { kept.isFinished })
        #expect(!kept.isCancelled)
    }
}
