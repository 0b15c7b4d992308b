import Foundation
import Lupine
import LupineTestServer
import Testing

/// A `requestModifier` shapes the URLRequest of every attempt, for every request kind: a timeout
/// it sets applies, and it runs again when the request is retried.
@Suite struct RequestModifierTests {
    /// Asks `RetryPolicy` and counts how often it was asked.
    final class CountingRetryPolicy: RequestInterceptor {
        let policy: RetryPolicy
        let retryCalls = Locked(0)

        init(_ policy: RetryPolicy) { self.policy = policy }

        func retry(_ request: Request, for session: Session, dueTo error: any Error,
                   completion: @escaping @Sendable (RetryResult) -> Void) {
            retryCalls.increment()
            policy.retry(request, for: session, dueTo: error, completion: completion)
        }
    }

    enum Kind: CaseIterable { case data, upload, download, stream }

    /// Makes a request of `kind` to `/delay/1` whose modifier sets a 1 ms timeout, and returns the
    /// URLError of its outcome.
    static func timedOutError(_ kind: Kind, session: Session, modifications: Locked<Int>) async throws -> URLError? {
        let server = try await testServer()
        let url = server.url("/delay/1")
        let modifier: Session.RequestModifier = { request in
            request.timeoutInterval = 0.001
            modifications.increment()
        }
        let error = Locked<AFError?>(nil)
        let done = Locked(false)
        let record: @Sendable (AFError?) -> Void = { failure in
            error.withValue { $0 = failure }
            done.withValue { $0 = true }
        }
        switch kind {
        case .data:
            session.request(url, requestModifier: modifier).response { record($0.error) }
        case .upload:
            session.upload(Data("data".utf8), to: url, method: .post, requestModifier: modifier).response { record($0.error) }
        case .download:
            session.download(url, requestModifier: modifier).response { response in
                if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
                record(response.error)
            }
        case .stream:
            session.streamRequest(url, requestModifier: modifier).responseStream { stream in
                guard case let .complete(completion) = stream.event else { return }
                record(completion.error)
            }
        }
        _ = await waitUntil { done.current }
        return error.current?.underlyingError as? URLError
    }

    @Test(arguments: Kind.allCases)
    func aModifiersTimeoutApplies(_ kind: Kind) async throws {
        let modifications = Locked(0)
        let error = try await Self.timedOutError(kind, session: Session(), modifications: modifications)
        #expect(error?.code == .timedOut)
        #expect(modifications.current == 1)
    }

    @Test(arguments: Kind.allCases)
    func theModifierRunsAgainForARetry(_ kind: Kind) async throws {
        let policy = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0, retryableHTTPMethods: [.get, .post])
        let retrier = CountingRetryPolicy(policy)
        let modifications = Locked(0)
        let error = try await Self.timedOutError(kind, session: Session(interceptor: retrier), modifications: modifications)
        #expect(error?.code == .timedOut)
        #expect(modifications.current == 2)
        #expect(retrier.retryCalls.current == 2)
    }
}
