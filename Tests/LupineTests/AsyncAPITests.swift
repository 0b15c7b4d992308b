import Foundation
import Lupine
import LupineTestServer
import Testing

/// `serializing...`, `DataTask` and the request streams.
@Suite struct AsyncAPITests {
    struct Slideshow: Decodable, Sendable {
        struct Show: Decodable, Sendable { let title: String; let author: String }
        let slideshow: Show
    }

    @Test func serializingDecodableDeliversValueResultAndResponse() async throws {
        let server = try await testServer()
        let task = AF.request(server.url("/json")).serializingDecodable(Slideshow.self)
        let value = try await task.value
        #expect(value.slideshow.author == "Yours Truly")
        let result = await task.result
        #expect((try? result.get())?.slideshow.title == "Sample Slide Show")
        let response = await task.response
        #expect(response.response?.statusCode == 200)
        #expect(response.serializationDuration >= 0)
    }

    @Test func valueThrowsTheAFError() async throws {
        let server = try await testServer()
        do {
            _ = try await AF.request(server.url("/status/500")).validate().serializingData().value
            Issue.record("a 500 with validate() must throw")
        } catch let error as AFError {
            #expect(error.responseCode == 500)
        }
    }

    @Test func serializingStringUsesTheResponseCharset() async throws {
        let server = try await testServer()
        let latin1 = try await AF.request(server.url("/latin1")).serializingString().value
        #expect(latin1 == "café")
    }

    @Test func cancellingTheAwaitingTaskCancelsTheRequest() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/delay/10"))
        let awaiting = Task { await request.serializingData().response }
        try await Task.sleep(nanoseconds: 200_000_000)
        awaiting.cancel()
        let response = await awaiting.value
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(request.isCancelled)
    }

    @Test func withoutAutomaticCancellationTheRequestOutlivesTheAwaitingTask() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/delay/0.5"))
        let dataTask = request.serializingData(automaticallyCancelling: false)
        let awaiting = Task { await dataTask.response }
        awaiting.cancel()
        let response = await dataTask.response
        #expect(response.response?.statusCode == 200)
        #expect(!request.isCancelled)
    }

    @Test func dataTaskCancelCancelsTheRequest() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/delay/10"))
        let dataTask = request.serializingString()
        try await Task.sleep(nanoseconds: 100_000_000)
        dataTask.cancel()
        let result = await dataTask.result
        #expect(result.failure?.isExplicitlyCancelledError == true)
    }

    @Test func serializingFromAnAlreadyCancelledTaskCancelsAtOnce() async throws {
        let server = try await testServer()
        let path = "/anything/precancelled-\(UUID().uuidString)"
        let outcome = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await AF.request(server.url(path)).serializingData().response
        }
        let response = await outcome.value
        #expect(response.error?.isExplicitlyCancelledError == true)
    }

    @Test func downloadProgressStreamIsMonotonicAndEndsAtTheBodySize() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/bytes/1048576?seed=3"))
        // A `StreamOf` installs its handler when iteration begins (as in Alamofire): the iterator
        // is made before the request starts, or a fast body could end before the handler is there.
        var progress = request.downloadProgress().makeAsyncIterator()
        let task = request.serializingData()
        var completed: [Int64] = []
        var total: Int64 = 0
        while let value = await progress.next() {
            completed.append(value.completedUnitCount)
            total = value.totalUnitCount
        }
        let data = try await task.value
        #expect(data.count == 1_048_576)
        #expect(completed == completed.sorted())
        #expect(completed.last == 1_048_576)
        #expect(total == 1_048_576)
    }

    @Test func urlRequestsAndCURLDescriptionStreamsSeeEachRequest() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let request = session.request(server.url("/get"), headers: ["X-Trace": "1"])
        // Iteration installs the handlers: begun before the request starts.
        var urlRequests = request.urlRequests().makeAsyncIterator()
        var curls = request.cURLDescriptions().makeAsyncIterator()
        let response = request.serializingData()
        request.resume()
        _ = await response.response
        var lastRequest: URLRequest?
        while let next = await urlRequests.next() { lastRequest = next }
        var lastCURL: String?
        while let next = await curls.next() { lastCURL = next }
        #expect(lastRequest?.url?.path == "/get")
        #expect(lastCURL?.contains("-H \"X-Trace: 1\"") == true)
    }

    @Test func streamOpenedAfterFinishStillDeliversTheLastRequest() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/get"))
        _ = await request.serializingData().response
        let seen = await Array(request.urlRequests())
        #expect(seen.map(\.url?.path) == ["/get"])
    }

    @Test func httpResponsesStreamDeliversTheFinalResponse() async throws {
        let server = try await testServer()
        let session = Session(startRequestsImmediately: false)
        let request = session.request(server.url("/redirect/1"))
        // Iteration installs the handler: begun before the request starts.
        var responses = request.httpResponses().makeAsyncIterator()
        let response = request.serializingData()
        request.resume()
        _ = await response.response
        var statusCodes: [Int] = []
        while let next = await responses.next() { statusCodes.append(next.statusCode) }
        #expect(statusCodes == [200])
    }

    @Test func asyncOnHTTPResponseCanCancelBeforeTheBodyIsRead() async throws {
        let server = try await testServer()
        let request = AF.request(server.url("/bytes/1048576"))
            .onHTTPResponse { response async -> Request.ResponseDisposition in
                response.statusCode == 200 ? .cancel : .allow
            }
        let response = await request.serializingData().response
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect((response.data?.count ?? 0) < 1_048_576)
    }
}

extension Result {
    var failure: Failure? {
        if case let .failure(error) = self { return error }
        return nil
    }
}
