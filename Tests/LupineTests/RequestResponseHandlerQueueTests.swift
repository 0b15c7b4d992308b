import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import NIOConcurrencyHelpers
import Testing

/// A real `DataRequest` with several response handlers, driven by `ScriptedEnvironment`: the
/// order the handlers run and complete in, across a retry one of them asks for.
@Suite(.timeLimit(.minutes(1)))
struct RequestResponseHandlerQueueTests {
    private struct Item: Decodable, Sendable {
        let id: Int
    }

    private static let address = "https://api.example.test/items"

    private static func response(_ text: String) -> [ScriptedStep] {
        [.head(200, [HTTPHeader(name: "Content-Length", value: "\(text.utf8.count)")]), .body(Data(text.utf8)), .complete(nil)]
    }

    /// A data request that waits for `resume()`, so that every handler is queued before the
    /// first response arrives.
    private static func waitingRequest(_ url: URL, in environment: ScriptedEnvironment) -> DataRequest {
        let context = RequestContext(underlyingQueue: environment.rootQueue,
                                     serializationQueue: DispatchQueue(label: "lupine.tests.serialization", target: environment.rootQueue),
                                     eventMonitor: nil, interceptor: nil, environment: environment, shouldAutomaticallyResume: false,
                                     defaultQueue: environment.rootQueue, defaults: environment.defaults)
        return DataRequest(convertible: URLRequest(url: url), context: context)
    }

    @Test func serializerThatAsksForARetryRunsEveryHandlerAgainOnTheNewResponse() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [Self.response("oops"), Self.response(#"{"id":1}"#)],
                                              retryAnswers: [.retry])
        let request = Self.waitingRequest(url, in: environment)
        let strings = NIOLockedValueBox<[String]>([])

        request.responseString(queue: environment.rootQueue) { response in
            strings.withLockedValue { $0.append(response.value ?? "failure") }
        }
        let task = request.serializingDecodable(Item.self)
        request.resume()
        let item = await task.response
        await environment.drain()

        #expect(item.value?.id == 1)
        #expect(item.data == Data(#"{"id":1}"#.utf8))
        // The closure handler ran on both responses; its completion from before the retry was
        // dropped, so it is called once, with the response the awaited handler got too.
        #expect(strings.withLockedValue { $0 } == [#"{"id":1}"#])
        #expect(request.retryCount == 1)
        #expect(environment.recorded.attempts == 2)
        #expect(environment.recorded.retryQuestions.count == 1)
        #expect(environment.recorded.finished == 1)
        #expect(request.state == .finished)
    }

    @Test func awaitedHandlersAloneTakeTheEndOfBothAttemptsAcrossARetry() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [Self.response("oops"), Self.response(#"{"id":2}"#)],
                                              retryAnswers: [.retry])
        let request = Self.waitingRequest(url, in: environment)

        let itemTask = request.serializingDecodable(Item.self)
        let stringTask = request.serializingString()
        request.resume()
        let item = await itemTask.response
        let string = await stringTask.response
        await environment.drain()

        #expect(item.value?.id == 2)
        #expect(string.value == #"{"id":2}"#)
        #expect(request.retryCount == 1)
        #expect(environment.recorded.attempts == 2)
        #expect(environment.recorded.finished == 1)
        #expect(environment.recorded.callsOffTheRootQueue.isEmpty)
        #expect(request.state == .finished)
    }

    @Test func handlerAddedAfterTheRequestFinishedRunsAloneOnTheStoredResponse() async throws {
        let url = try #require(URL(string: Self.address))
        let environment = ScriptedEnvironment(exchanges: [Self.response("first")])
        let request = environment.dataRequest(url)

        let first = await request.serializingString().response
        await environment.drain()
        let finishes = environment.recorded.finished
        let late = await request.serializingString().response
        await environment.drain()

        #expect(first.value == "first")
        #expect(late.value == "first")
        #expect(environment.recorded.attempts == 1)
        #expect(environment.recorded.sent.count == 1)
        // As in Alamofire, the request is let go again each time its handlers drain.
        #expect(environment.recorded.finished == finishes + 1)
        #expect(request.state == .finished)
    }
}
