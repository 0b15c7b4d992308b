import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer
import Testing

/// The body of `/get`, decoded.
private struct Echo: Decodable, Sendable {
    let url: String
}

/// What Alamofire's ConcurrencyTests assert about `serializing...`, the tasks and the streams,
/// checked over loopback.
@Suite struct AsyncAPIAlamofireParityTests {
    /// Held for the whole test, as Alamofire's `stored(Session())`: a Session that goes away
    /// fails its requests with `sessionDeinitialized`.
    private let session = Session()

    // MARK: DataTask

    @Test func serializingResponseUsingTheDataSerializer() async throws {
        let server = try await testServer()
        let value = try await session.request(server.url("/get")).serializingResponse(using: .data).value
        #expect(!value.isEmpty)
    }

    @Test func serializingDataStringAndDecodableValues() async throws {
        let server = try await testServer()
        #expect(try await session.request(server.url("/get")).serializingData().value.isEmpty == false)
        #expect(try await session.request(server.url("/get")).serializingString().value.isEmpty == false)
        #expect(try await session.request(server.url("/get")).serializingDecodable(Echo.self).value.url.hasSuffix("/get"))
        #expect(await session.request(server.url("/get")).serializingDecodable(Echo.self).result.failure == nil)
    }

    @Test func a500WithABodyUnderTheRetryPolicySerializesItsBody() async throws {
        let server = try await testServer()
        // A 500 with a body (`/status/500` has none, and an empty 500 fails to serialize).
        let request = session.request(server.url("/drip?numbytes=4&duration=0&code=500"), interceptor: .retryPolicy)
        let value = try await request.serializingResponse(using: .data).value
        // Without validation the 500 serializes without an error, so the retrier is not asked.
        #expect(request.retryCount == 0)

        // An empty 500 fails to serialize: that error is retried up to the limit.
        let empty = session.request(server.url("/status/500"), interceptor: .retryPolicy)
        let response = await empty.serializingResponse(using: .data).response
        #expect(empty.retryCount == Int(RetryPolicy.defaultRetryLimit))
        #expect(response.error?.isResponseSerializationError == true)
        #expect(request.response?.statusCode == 500)
        #expect(value.count == 4)
    }

    @Test func concurrentDataTasksAllSucceed() async throws {
        let server = try await testServer()
        async let first = session.request(server.url("/get")).serializingDecodable(Echo.self).response
        async let second = session.request(server.url("/get")).serializingDecodable(Echo.self).response
        async let third = session.request(server.url("/get")).serializingDecodable(Echo.self).response
        let responses = await [first, second, third]
        #expect(responses.allSatisfy { $0.error == nil })
    }

    /// Alamofire issue 3978: two DataTasks of one request, cancelled at once, must each resume
    /// their awaiter exactly once.
    @Test func twoDataTasksOfOneRequestCanBeCancelledConcurrently() async throws {
        let server = try await testServer()
        for _ in 0..<50 {
            let request = session.request(server.url("/get"))
            let first = Task { await request.serializingDecodable(Echo.self).response }
            let second = Task { await request.serializingDecodable(Echo.self).response }
            async let firstResponse = first.value
            async let secondResponse = second.value
            async let firstCancel: Void = Task { @Sendable in first.cancel() }.value
            async let secondCancel: Void = Task { @Sendable in second.cancel() }.value
            // Every await ends: no continuation is lost or resumed twice.
            _ = await (firstResponse, secondResponse, firstCancel, secondCancel)
        }
    }

    @Test func cancellingADataTaskAtOnceCancelsTheRequest() async throws {
        let server = try await testServer()
        let request = session.request(server.url("/get"))
        let task = request.serializingDecodable(Echo.self)
        task.cancel()
        let response = await task.response
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
    }

    @Test func aCancelledTaskCancelsTheDataRequestItAwaits() async throws {
        let server = try await testServer()
        let request = session.request(server.url("/get"))
        let task = Task { await request.serializingDecodable(Echo.self).result }
        task.cancel()
        let result = await task.value
        #expect(result.failure?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
    }

    @Test func aCancelledTaskLeavesTheDataRequestAloneWithoutAutomaticCancellation() async throws {
        let server = try await testServer()
        let request = session.request(server.url("/get"))
        let task = Task { await request.serializingDecodable(Echo.self, automaticallyCancelling: false).result }
        task.cancel()
        let result = await task.value
        #expect(!request.isCancelled)
        #expect(result.failure == nil)
    }

    @Test func aCancelledTaskGroupCancelsTheDataRequestItsChildAwaits() async throws {
        let server = try await testServer()
        let request = session.request(server.url("/get"))
        let task = Task {
            await withTaskGroup(of: Result<Echo, AFError>.self) { group in
                group.addTask { await request.serializingDecodable(Echo.self).result }
                return await group.next()
            }
        }
        task.cancel()
        let result = await task.value
        #expect(result?.failure?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
    }

    @Test func aCancelledTaskGroupLeavesTheDataRequestAloneWithoutAutomaticCancellation() async throws {
        let server = try await testServer()
        let request = session.request(server.url("/get"))
        let task = Task {
            await withTaskGroup(of: Result<Echo, AFError>.self) { group in
                group.addTask { await request.serializingDecodable(Echo.self, automaticallyCancelling: false).result }
                return await group.next()
            }
        }
        task.cancel()
        let result = await task.value
        #expect(!request.isCancelled)
        #expect(result?.failure == nil)
    }

    // MARK: DownloadTask

    @Test func downloadTasksSerializeEveryKindOfValue() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        func download() -> DownloadRequest {
            let file = scratch.file(UUID().uuidString)
            return session.download(server.url("/get"), to: { _, _ in (file, []) })
        }
        #expect(try await download().serializingDownload(using: .data).value.isEmpty == false)
        #expect(try await download().serializingData().value.isEmpty == false)
        #expect(try await download().serializingString().value.isEmpty == false)
        #expect(try await download().serializingDecodable(Echo.self).value.url.hasSuffix("/get"))
        #expect(await download().serializingDecodable(Echo.self).result.failure == nil)
        let fileURL = try await download().serializingDownloadedFileURL().value
        #expect(FileManager.default.fileExists(atPath: fileURL.path))
    }

    @Test func concurrentDownloadTasksAllSucceed() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let destination: DownloadRequest.Destination = { _, _ in (scratch.file(UUID().uuidString), []) }
        async let first = session.download(server.url("/get"), to: destination).serializingDecodable(Echo.self).response
        async let second = session.download(server.url("/get"), to: destination).serializingDecodable(Echo.self).response
        async let third = session.download(server.url("/get"), to: destination).serializingDecodable(Echo.self).response
        let responses = await [first, second, third]
        #expect(responses.allSatisfy { $0.error == nil })
    }

    @Test func cancellingADownloadTaskAtOnceCancelsTheRequest() async throws {
        let server = try await testServer()
        let request = session.download(server.url("/get"))
        let task = request.serializingDecodable(Echo.self)
        task.cancel()
        let response = await task.response
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
        #expect(response.fileURL == nil)
    }

    @Test func aCancelledTaskCancelsTheDownloadRequestItAwaits() async throws {
        let server = try await testServer()
        let request = session.download(server.url("/get"))
        let task = Task { await request.serializingDecodable(Echo.self).result }
        task.cancel()
        let result = await task.value
        #expect(result.failure?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
    }

    @Test func aCancelledTaskLeavesTheDownloadRequestAloneWithoutAutomaticCancellation() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("body.json")
        let request = session.download(server.url("/get"), to: { _, _ in (file, []) })
        let task = Task { await request.serializingDecodable(Echo.self, automaticallyCancelling: false).result }
        task.cancel()
        let result = await task.value
        #expect(!request.isCancelled)
        #expect(result.failure == nil)
    }

    @Test func aCancelledTaskGroupCancelsTheDownloadRequestItsChildAwaits() async throws {
        let server = try await testServer()
        let request = session.download(server.url("/get"))
        let task = Task {
            await withTaskGroup(of: Result<Echo, AFError>.self) { group in
                group.addTask { await request.serializingDecodable(Echo.self).result }
                return await group.next()
            }
        }
        task.cancel()
        let result = await task.value
        #expect(result?.failure?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
    }

    @Test func aCancelledTaskGroupLeavesTheDownloadRequestAloneWithoutAutomaticCancellation() async throws {
        let server = try await testServer()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let file = scratch.file("body.json")
        let request = session.download(server.url("/get"), to: { _, _ in (file, []) })
        let task = Task {
            await withTaskGroup(of: Result<Echo, AFError>.self) { group in
                group.addTask { await request.serializingDecodable(Echo.self, automaticallyCancelling: false).result }
                return await group.next()
            }
        }
        task.cancel()
        let result = await task.value
        #expect(!request.isCancelled)
        #expect(result?.failure == nil)
    }

    // MARK: DataStreamTask

    /// `/drip` sends one byte at a time, far apart: each is a chunk of its own.
    private static func drip(_ server: LupineTestServer, bytes: Int, seconds: Double) -> String {
        server.url("/drip?numbytes=\(bytes)&duration=\(seconds)")
    }

    @Test func streamingDataAndStringsYieldEachChunk() async throws {
        let server = try await testServer()
        var datas: [Data] = []
        for await data in session.streamRequest(Self.drip(server, bytes: 2, seconds: 0.4)).streamTask().streamingData().compactMap(\.value) {
            datas.append(data)
        }
        var strings: [String] = []
        for await string in session.streamRequest(Self.drip(server, bytes: 2, seconds: 0.4)).streamTask().streamingStrings().compactMap(\.value) {
            strings.append(string)
        }
        #expect(datas.count == 2)
        #expect(strings.count == 2)
    }

    @Test func streamingDecodablesYieldEachValue() async throws {
        let server = try await testServer()
        let task = session.streamRequest(server.url("/get")).streamTask()
        var values: [Echo] = []
        for await value in task.streamingResponses(serializedUsing: DecodableStreamSerializer<Echo>()).compactMap(\.value) {
            values.append(value)
        }
        #expect(values.count == 1)
    }

    @Test func aStreamTaskCancelledFromTheLoopYieldsNothingMore() async throws {
        let server = try await testServer()
        // Chunks six seconds apart: a chunk that arrived before `cancel()` is still delivered (as
        // in Alamofire), and the second must not arrive while the loop gets to cancelling.
        let request = session.streamRequest(Self.drip(server, bytes: 10, seconds: 60))
        let task = request.streamTask()
        var datas: [Data] = []
        for await data in task.streamingData().compactMap(\.value) {
            datas.append(data)
            if datas.count == 1 { task.cancel() }
        }
        #expect(request.isCancelled)
        #expect(datas.count == 1)
    }

    @Test func breakingOutOfTheStreamCancelsTheRequestAtOnce() async throws {
        let server = try await testServer()
        let request = session.streamRequest(Self.drip(server, bytes: 10, seconds: 5))
        var datas: [Data] = []
        for await data in request.streamTask().streamingData().compactMap(\.value) {
            datas.append(data)
            if datas.count == 1 { break }
        }
        #expect(request.isCancelled)
        #expect(datas.count == 1)
    }

    @Test func aCancelledTaskCancelsTheStreamItIterates() async throws {
        let server = try await testServer()
        let request = session.streamRequest(Self.drip(server, bytes: 10, seconds: 5))
        let task = Task<[Data], Never> {
            var datas: [Data] = []
            for await data in request.streamTask().streamingData().compactMap(\.value) {
                datas.append(data)
            }
            return datas
        }
        task.cancel()
        let datas = await task.value
        #expect(request.isCancelled)
        #expect(datas.isEmpty)
    }

    @Test func aSecondStreamCancelsAfterTheFirstTurnedAutomaticCancellationOff() async throws {
        let server = try await testServer()
        let request = session.streamRequest(Self.drip(server, bytes: 10, seconds: 5))
        let task = Task<[Data], Never> {
            var datas: [Data] = []
            let streamTask = request.streamTask()
            for await data in streamTask.streamingData(automaticallyCancelling: false).compactMap(\.value) {
                datas.append(data)
                break
            }
            for await data in streamTask.streamingData().compactMap(\.value) {
                datas.append(data)
                break
            }
            return datas
        }
        let datas = await task.value
        #expect(request.isCancelled)
        #expect(datas.count == 2)
    }

    @Test func asyncOnHTTPResponseRunsAndAllowsTheStream() async throws {
        let server = try await testServer()
        let observed = Locked(0)
        let allowed = Locked(0)
        let observing = session.streamRequest(Self.drip(server, bytes: 2, seconds: 0.4))
            .onHTTPResponse { _ in observed.withValue { $0 += 1 } }
            .streamTask()
        let allowing = session.streamRequest(Self.drip(server, bytes: 2, seconds: 0.4))
            .onHTTPResponse { _ async -> Request.ResponseDisposition in
                allowed.withValue { $0 += 1 }
                return .allow
            }
            .streamTask()
        let observedDatas = await Array(observing.streamingData().compactMap(\.value))
        let allowedDatas = await Array(allowing.streamingData().compactMap(\.value))
        #expect(observed.current == 1)
        #expect(allowed.current == 1)
        #expect(observedDatas.count == 2)
        #expect(allowedDatas.count == 2)
    }

    @Test func asyncOnHTTPResponseCanCancelTheStreamBeforeAnyData() async throws {
        let server = try await testServer()
        let request = session.streamRequest(Self.drip(server, bytes: 2, seconds: 0.4))
            .onHTTPResponse { _ async -> Request.ResponseDisposition in .cancel }
        var chunks = 0
        var completion: DataStreamRequest.Completion?
        for await stream in request.streamTask().streamingResponses(serializedUsing: .passthrough) {
            switch stream.event {
            case .stream: chunks += 1
            case let .complete(value): completion = value
            }
        }
        #expect(chunks == 0)
        #expect(completion?.response?.statusCode == 200)
        #expect(request.isCancelled)
        #expect(request.error?.isExplicitlyCancelledError == true)
    }

    // MARK: Request streams

    @Test func eventStreamsCollectedAlongsideTheResponse() async throws {
        let server = try await testServer()
        // The streams begin iterating in child tasks, as in Alamofire's test; the response waits
        // a little so that their handlers are surely in place before it arrives.
        let request = session.request(server.url("/delay/0.2"))
        let httpResponsesStream = request.httpResponses()
        let uploadProgressStream = request.uploadProgress()
        let downloadProgressStream = request.downloadProgress()
        let requestsStream = request.urlRequests()
        let tasksStream = request.urlSessionTasks()
        let descriptionsStream = request.cURLDescriptions()
        async let httpResponses = Array(httpResponsesStream)
        async let uploadProgress = Array(uploadProgressStream)
        async let downloadProgress = Array(downloadProgressStream)
        async let requests = Array(requestsStream)
        async let tasks = Array(tasksStream)
        async let descriptions = Array(descriptionsStream)
        async let response = request.serializingDecodable(Echo.self).response

        let values = await (httpResponses, uploadProgress, downloadProgress, requests, tasks, descriptions, response)
        #expect(values.0.count == 1)
        #expect(values.1.isEmpty)
        #expect(values.2.last?.isFinished == true)
        #expect(values.3.last != nil)
        #expect(values.4.last != nil)
        #expect(values.5.last != nil)
        #expect(values.6.error == nil)
    }

    /// As Alamofire's `onURLRequestCreation`, `onURLSessionTaskCreation` and `cURLDescription`
    /// handlers, a stream begun after the request finished gets the last value at once.
    @Test func streamsBegunAfterTheRequestFinishedGetItsLastValues() async throws {
        let server = try await testServer()
        let request = session.request(server.url("/get"))
        _ = await request.serializingData().response
        let requests = await Array(request.urlRequests())
        let tasks = await Array(request.urlSessionTasks())
        let descriptions = await Array(request.cURLDescriptions())
        #expect(requests.count == 1)
        #expect(tasks.count == 1)
        #expect(descriptions.count == 1)
        #expect(await Array(request.httpResponses()).isEmpty)
    }

    /// As Alamofire's DataRequest, whose progress handler runs for received body bytes only: none
    /// before the first byte, none at all for an empty body.
    @Test func downloadProgressIsReportedForBodyBytesOnly() async throws {
        let server = try await testServer()
        let withBody = session.request(server.url("/bytes/2000"))
        let empty = session.request(server.url("/no-content"))
        let completed = Locked<[Int64]>([])
        let emptyReports = Locked(0)
        let queue = DispatchQueue(label: "test.progress")
        withBody.downloadProgress(queue: queue) { progress in completed.withValue { $0.append(progress.completedUnitCount) } }
        empty.downloadProgress(queue: queue) { _ in emptyReports.withValue { $0 += 1 } }
        _ = await withBody.serializingData().response
        _ = await empty.serializingData().response
        queue.sync {}
        #expect(!completed.current.isEmpty)
        #expect(completed.current.allSatisfy { $0 > 0 })
        #expect(completed.current.last == 2000)
        #expect(emptyReports.current == 0)
    }

    // MARK: WebSocketTask

    @Test func webSocketMessagesCanBeCollected() async throws {
        let server = try await testServer()
        let request = session.webSocketRequest(to: server.webSocketURL("/websocket/echo?messages=1&close-after=1"))
        let messages = await Array(request.webSocketTask().streamingMessages())
        #expect(messages.map(\.summary) == ["text:message 1"])
    }
}
