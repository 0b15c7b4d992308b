import Foundation
@testable import Lupine
import LupineTestServer
import Testing

/// Adaptation and retries as the pipeline runs them (the interceptor family itself is tested
/// with its own issue).
@Suite struct InterceptionPipelineTests {
    struct AdapterFailure: Error {}

    @Test func adapterRewritesTheRequestAndBothRequestsAreRecorded() async throws {
        let server = try await testServer()
        let adapter = Adapter { request, _, completion in
            var request = request
            request.setValue("Bearer adapted", forHTTPHeaderField: "Authorization")
            completion(.success(request))
        }
        let request = AF.request(server.url("/headers"), interceptor: adapter)
        let echo = try await request.serializingDecodable([String: [String: String]].self).value
        #expect(echo["headers"]?["Authorization"] == "Bearer adapted")
        #expect(request.requests.count == 2)
        #expect(request.firstRequest?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test func failingAdapterGivesRequestAdaptationFailedAndSendsNothing() async throws {
        let server = try await testServer()
        let path = "/anything/adapt-fail-\(UUID().uuidString)"
        let adapter = Adapter { _, _, completion in completion(.failure(AdapterFailure())) }
        let response = await AF.request(server.url(path), interceptor: adapter).serializingData().response
        guard case let .requestAdaptationFailed(error)? = response.error else {
            Issue.record("expected requestAdaptationFailed, got \(String(describing: response.error))")
            return
        }
        #expect(error is AdapterFailure)
        #expect(server.hits(for: path) == 0)
    }

    @Test func sessionAdapterRunsBeforeRequestAdapter() async throws {
        let server = try await testServer()
        let order = Locked<[String]>([])
        let sessionAdapter = Adapter { request, _, completion in order.withValue { $0.append("session") }; completion(.success(request)) }
        let requestAdapter = Adapter { request, _, completion in order.withValue { $0.append("request") }; completion(.success(request)) }
        let session = Session(interceptor: sessionAdapter)
        _ = await session.request(server.url("/get"), interceptor: requestAdapter).serializingData().response
        #expect(order.current == ["session", "request"])
    }

    @Test func retrierRetriesOnceThenTheRequestSucceeds() async throws {
        let server = try await testServer()
        // The first attempt goes to a 503, the second to /get.
        let request = AF.request(server.url("/get"), interceptor: firstAttemptFailsInterceptor(on: server))
        let response = await request.validate().serializingData().response
        #expect(response.error == nil)
        #expect(request.retryCount == 1)
        #expect(response.timeline.retryCount == 1)
        #expect(request.requests.count == 4)
        #expect(request.performedRequests.map(\.url?.path) == ["/status/503", "/get"])
    }

    @Test func retryWithDelayWaitsBeforeTheNextAttempt() async throws {
        let server = try await testServer()
        let retrier = Retrier { request, _, _, completion in
            completion(request.retryCount == 0 ? .retryWithDelay(0.3) : .doNotRetry)
        }
        let started = Date()
        let request = AF.request(server.url("/status/500"), interceptor: retrier)
        let response = await request.validate().serializingData().response
        #expect(response.error?.responseCode == 500)
        #expect(request.retryCount == 1)
        #expect(Date().timeIntervalSince(started) >= 0.3)
    }

    @Test func retryDelayGoesThroughTheSessionsClock() async throws {
        let server = try await testServer()
        let clock = ManualEngineClock()
        let session = Session()
        session.clock = clock
        let retrier = Retrier { request, _, _, completion in
            completion(request.retryCount == 0 ? .retryWithDelay(3600) : .doNotRetry)
        }
        let request = session.request(server.url("/status/500"), interceptor: retrier)
        let task = request.validate().serializingData()
        #expect(await waitUntil { clock.delays == [3600] })
        #expect(request.retryCount == 0)
        clock.advance(by: .seconds(3600))
        let response = await task.response
        #expect(response.error?.responseCode == 500)
        #expect(request.retryCount == 1)
    }

    @Test func doNotRetryWithErrorCarriesBothErrors() async throws {
        struct GiveUp: Error {}
        let server = try await testServer()
        let retrier = Retrier { _, _, _, completion in completion(.doNotRetryWithError(GiveUp())) }
        let request = AF.request(server.url("/status/500"), interceptor: retrier).validate()
        let response = await request.serializingData().response
        guard case let .requestRetryFailed(retryError, originalError)? = request.error else {
            Issue.record("expected requestRetryFailed, got \(String(describing: request.error))")
            return
        }
        #expect(retryError is GiveUp)
        #expect((originalError as? AFError)?.responseCode == 500)
        // The serializer passes the request's error on and asks again, as Alamofire's does: the
        // response carries that second answer around the request's error.
        guard case let .requestRetryFailed(secondRetryError, passedOn)? = response.error else {
            Issue.record("expected requestRetryFailed, got \(String(describing: response.error))")
            return
        }
        #expect(secondRetryError is GiveUp)
        #expect((passedOn as? AFError)?.isRequestRetryError == true)
    }

    @Test func sessionRetryResultHandsOverTheErrorTheRequestFinishesWith() async throws {
        struct GiveUp: Error {}
        let server = try await testServer()
        let session = Session(interceptor: Retrier { _, _, _, completion in completion(.doNotRetryWithError(GiveUp())) })
        let request = session.request(server.url("/status/500"))
        let finished = await request.validate().serializingData().response
        let failure = try #require(finished.error)

        let answer: RetryResult = await withCheckedContinuation { continuation in
            session.retryResult(for: request, dueTo: failure) { continuation.resume(returning: $0) }
        }
        guard case let .doNotRetryWithError(error) = answer,
              case let .requestRetryFailed(retryError, originalError)? = error.asAFError else {
            Issue.record("expected requestRetryFailed inside the answer, got \(answer)")
            return
        }
        #expect(retryError is GiveUp)
        #expect((originalError as? AFError)?.isRequestRetryError == true)
    }

    @Test func cancelledRequestIsNeverRetried() async throws {
        let server = try await testServer()
        let asked = Locked(0)
        let retrier = Retrier { _, _, _, completion in asked.increment(); completion(.retry) }
        let request = AF.request(server.url("/delay/10"), interceptor: retrier)
        let task = request.serializingData()
        try await Task.sleep(nanoseconds: 200_000_000)
        request.cancel()
        let response = await task.response
        #expect(response.error?.isExplicitlyCancelledError == true)
        #expect(asked.current == 0)
        #expect(request.retryCount == 0)
    }

    @Test func serializationFailureAsksTheRetrierOnceAndRetries() async throws {
        struct Wanted: Decodable, Sendable { let slideshow: [String: String] }
        let server = try await testServer()
        let asked = Locked(0)
        let retrier = Retrier { request, _, _, completion in
            asked.increment()
            completion(request.retryCount == 0 ? .retry : .doNotRetry)
        }
        let request = AF.request(server.url("/get"), interceptor: retrier)
        let response = await request.serializingDecodable(Wanted.self).response
        #expect(response.error?.isResponseSerializationError == true)
        #expect(request.retryCount == 1)
        #expect(asked.current == 2)
    }

    /// As in Alamofire, a serializer that passes the request's failure on asks the retriers about it
    /// again (Alamofire's SessionTests count three retry calls for two failed attempts).
    @Test func requestFailurePassedOnBySerializationIsAskedAgain() async throws {
        let server = try await testServer()
        let asked = Locked(0)
        let retrier = Retrier { _, _, _, completion in asked.increment(); completion(.doNotRetry) }
        let response = await AF.request(server.url("/status/404"), interceptor: retrier).validate().serializingString().response
        #expect(response.error?.responseCode == 404)
        #expect(asked.current == 2)
    }
}

/// Progress must survive a retry whose response is empty: corelibs' Progress traps when a total
/// goes from non-zero back to 0.
@Suite struct ProgressResetTests {
    @Test func retryFromABodyToAnEmptyResponseKeepsTheProcessAlive() async throws {
        let server = try await testServer()
        let attempts = Locked(0)
        let adapter = Adapter { request, _, completion in
            var request = request
            request.url = URL(string: server.url(attempts.increment() == 1 ? "/bytes/100" : "/empty"))
            completion(.success(request))
        }
        let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
        let request = AF.request(server.url("/get"), interceptor: Interceptor(adapter: adapter, retrier: retrier))
            .validate { _, response, data in
                (data?.count ?? 0) == 100 ? .failure(AFError.explicitlyCancelled) : .success(())
            }
        let response = await request.serializingData(emptyResponseCodes: [200]).response
        #expect(response.error == nil)
        #expect(request.retryCount == 1)
        #expect(request.downloadProgress.totalUnitCount == 0)
    }
}
