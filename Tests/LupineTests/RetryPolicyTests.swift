import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// RetryPolicy and ConnectionLostRetryPolicy against a URLProtocol stub (as Alamofire users test
/// their retry code) that fails the first requests of a path and then answers; lost connections
/// against the test server's `/fail/N`, which closes or resets them. Sessions wait on a
/// ManualEngineClock that fires at once, so backoff delays are recorded instead of slept.
@Suite struct RetryPolicyTests {
    /// One per test (Swift Testing makes a suite instance per test), alive until the test ends:
    /// requests hold their Session weakly.
    let session = Session(configuration: .stubbed())
    let clock = ManualEngineClock(firesImmediately: true)
    /// The stubbed host of the test.
    let host = StubURLProtocol.host()

    init() { session.clock = clock }

    private static let ok = StubURLProtocol.Answer.respond(status: 200, headers: ["Content-Type": "text/plain"],
                                                            chunks: [Data("ok".utf8)])

    /// `path` fails `failures` times with `status`, then answers 200.
    private func stubFailures(_ path: String, _ failures: Int, status: Int = 503) {
        host.stub(path, Array(repeating: .respond(status: status), count: failures) + [Self.ok])
    }

    // MARK: Defaults

    @Test func defaultsAreAlamofiresDefaults() {
        #expect(RetryPolicy.defaultRetryLimit == 2)
        #expect(RetryPolicy.defaultExponentialBackoffBase == 2)
        #expect(RetryPolicy.defaultExponentialBackoffScale == 0.5)
        #expect(RetryPolicy.defaultRetryableHTTPMethods == [.delete, .get, .head, .options, .put, .trace])
        #expect(RetryPolicy.defaultRetryableHTTPStatusCodes == [408, 500, 502, 503, 504])
        let expectedCodes: Set<URLError.Code> = [
            .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected, .badServerResponse,
            .callIsActive, .cannotConnectToHost, .cannotFindHost, .cannotLoadFromNetwork, .dataNotAllowed,
            .dnsLookupFailed, .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete,
            .internationalRoamingOff, .networkConnectionLost, .notConnectedToInternet, .secureConnectionFailed,
            .serverCertificateHasBadDate, .serverCertificateNotYetValid, .timedOut,
        ]
        #expect(RetryPolicy.defaultRetryableURLErrorCodes == expectedCodes)
        #expect(Set(expectedCodes.map(\.rawValue)) == [
            -996, -997, -1011, -1019, -1004, -1003, -2000, -1020, -1006, -3006, -3007, -1018, -1005, -1009,
            -1200, -1201, -1204, -1001,
        ])

        let policy = RetryPolicy.retryPolicy
        #expect(policy.retryLimit == 2)
        #expect(policy.exponentialBackoffBase == 2)
        #expect(policy.exponentialBackoffScale == 0.5)
        #expect(policy.retryableHTTPMethods == RetryPolicy.defaultRetryableHTTPMethods)
        #expect(policy.retryableHTTPStatusCodes == RetryPolicy.defaultRetryableHTTPStatusCodes)
        #expect(policy.retryableURLErrorCodes == expectedCodes)
    }

    @Test func connectionLostRetryPolicyRetriesOnlyLostConnections() {
        let policy: ConnectionLostRetryPolicy = .connectionLostRetryPolicy(retryLimit: 5, retryableHTTPMethods: [.post])
        #expect(policy.retryLimit == 5)
        #expect(policy.exponentialBackoffBase == 2)
        #expect(policy.exponentialBackoffScale == 0.5)
        #expect(policy.retryableHTTPMethods == [.post])
        #expect(policy.retryableHTTPStatusCodes.isEmpty)
        #expect(policy.retryableURLErrorCodes == [.networkConnectionLost])
        #expect(ConnectionLostRetryPolicy().retryableHTTPMethods == RetryPolicy.defaultRetryableHTTPMethods)
    }

    @Test func backoffBaseBelowTwoIsRaisedToTwoInsteadOfTrapping() {
        #expect(RetryPolicy(exponentialBackoffBase: 0).exponentialBackoffBase == 2)
        #expect(RetryPolicy(exponentialBackoffBase: 1).exponentialBackoffBase == 2)
        #expect(RetryPolicy(exponentialBackoffBase: 3).exponentialBackoffBase == 3)
    }

    // MARK: Decisions on a finished request

    @Test func shouldRetryReadsTheURLErrorCodeDirectlyOrInsideAnAFError() async throws {
        let server = try await testServer()
        let request = session.request(server.url("/get"))
        _ = await request.serializingData().response
        let policy = RetryPolicy()
        #expect(policy.shouldRetry(request: request, dueTo: URLError(.timedOut)))
        #expect(policy.shouldRetry(request: request, dueTo: AFError.sessionTaskFailed(error: URLError(.networkConnectionLost))))
        #expect(!policy.shouldRetry(request: request, dueTo: URLError(.cancelled)))
        #expect(!policy.shouldRetry(request: request, dueTo: AFError.sessionTaskFailed(error: URLError(.badURL))))
        #expect(!policy.shouldRetry(request: request, dueTo: AFError.explicitlyCancelled))
        // 200 is not a retryable status, so only the error decides.
        #expect(!policy.shouldRetry(request: request, dueTo: AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: 200))))

        let decision = Locked<RetryResult?>(nil)
        policy.retry(request, for: Session.default, dueTo: URLError(.timedOut)) { result in decision.withValue { $0 = result } }
        #expect(decision.current.map(describe) == "delay 0.5")
    }

    // MARK: Retrying over the network

    @Test func retryPolicyRetriesIdempotentRequestAfter503UntilItSucceeds() async throws {
        let interceptor: any RequestInterceptor = .retryPolicy
        stubFailures("/flaky", 2)
        let request = session.request(host.url("/flaky"), interceptor: interceptor)
        let response = await request.validate().serializingString().response

        #expect(response.error == nil)
        #expect(response.value == "ok")
        #expect(request.retryCount == 2)
        #expect(clock.delays == [0.5, 1.0])
        #expect(host.hits("/flaky") == 3)
    }

    @Test func retryPolicyGivesUpAfterTheRetryLimitWithThe503() async throws {
        let interceptor: any RequestInterceptor = .retryPolicy
        stubFailures("/flaky", 3)
        let request = session.request(host.url("/flaky"), interceptor: interceptor)
        let response = await request.validate().serializingData().response

        #expect(response.error?.responseCode == 503)
        #expect(response.response?.statusCode == 503)
        #expect(request.retryCount == 2)
        #expect(clock.delays == [0.5, 1.0])
        #expect(host.hits("/flaky") == 3)
    }

    @Test func customBaseAndScaleGiveTheirOwnDelays() async throws {
        let policy = RetryPolicy(retryLimit: 3, exponentialBackoffBase: 3, exponentialBackoffScale: 0.25)
        stubFailures("/flaky", 3)
        let request = session.request(host.url("/flaky"), interceptor: policy)
        let response = await request.validate().serializingData().response

        #expect(response.error == nil)
        #expect(request.retryCount == 3)
        #expect(clock.delays == [0.25, 0.75, 2.25])
    }

    @Test func postIsNeverRetried() async throws {
        let interceptor: any RequestInterceptor = .retryPolicy
        stubFailures("/flaky", 1)
        let request = session.request(host.url("/flaky"), method: .post, interceptor: interceptor)
        let response = await request.validate().serializingData().response

        #expect(response.error?.responseCode == 503)
        #expect(request.retryCount == 0)
        #expect(clock.delays.isEmpty)
        #expect(host.hits("/flaky") == 1)
    }

    @Test func notFoundIsNotRetried() async throws {
        let interceptor: any RequestInterceptor = .retryPolicy
        stubFailures("/flaky", 1, status: 404)
        let request = session.request(host.url("/flaky"), interceptor: interceptor)
        let response = await request.validate().serializingData().response

        #expect(response.error?.responseCode == 404)
        #expect(request.retryCount == 0)
        #expect(clock.delays.isEmpty)
        #expect(host.hits("/flaky") == 1)
    }

    @Test(arguments: PolicyKind.allCases)
    func aURLErrorFromTheProtocolIsRetriedByItsCode(by kind: PolicyKind) async throws {
        let recorder = RecordingRetrier(kind.policy)
        host.stub("/lost", [.fail(URLError(.networkConnectionLost)), Self.ok])
        let request = session.request(host.url("/lost"), interceptor: recorder)
        let response = await request.validate().serializingData().response

        #expect(response.error == nil)
        #expect(recorder.errorCodes == [.networkConnectionLost])
        #expect(request.retryCount == 1)
        #expect(host.hits("/lost") == 2)
    }

    enum PolicyKind: String, CaseIterable, Sendable {
        case retryPolicy, connectionLostRetryPolicy

        var policy: RetryPolicy {
            switch self {
            case .retryPolicy: RetryPolicy.retryPolicy
            case .connectionLostRetryPolicy: ConnectionLostRetryPolicy.connectionLostRetryPolicy
            }
        }
    }

    @Test(arguments: PolicyKind.allCases, ["close", "reset"])
    func lostConnectionIsRetried(by kind: PolicyKind, mode: String) async throws {
        let server = try await testServer()
        let recorder = RecordingRetrier(kind.policy)
        let key = UUID().uuidString
        let request = session.request(server.url("/fail/1?key=\(key)&mode=\(mode)"), interceptor: recorder)
        let response = await request.validate().serializingData().response

        #expect(response.error == nil)
        #expect(recorder.errorCodes == [.networkConnectionLost])
        #expect(request.retryCount == 1)
        #expect(clock.delays == [0.5])
        #expect(server.failureRouteHits(forKey: key) == 2)
    }

    @Test func connectionLostRetryPolicyDoesNotRetryA503() async throws {
        let interceptor: any RequestInterceptor = .connectionLostRetryPolicy
        stubFailures("/flaky", 1)
        let request = session.request(host.url("/flaky"), interceptor: interceptor)
        let response = await request.validate().serializingData().response

        #expect(response.error?.responseCode == 503)
        #expect(request.retryCount == 0)
        #expect(clock.delays.isEmpty)
        #expect(host.hits("/flaky") == 1)
    }

    @Test func customRetryableStatusCodesReplaceTheDefaults() async throws {
        let policy: RetryPolicy = .retryPolicy(retryableHTTPStatusCodes: [429])
        stubFailures("/busy", 1, status: 429)
        let tooManyRequest = session.request(host.url("/busy"), interceptor: policy)
        let tooManyResponse = await tooManyRequest.validate().serializingData().response
        #expect(tooManyResponse.error == nil)
        #expect(tooManyRequest.retryCount == 1)
        #expect(host.hits("/busy") == 2)

        stubFailures("/flaky", 1)
        let unavailableRequest = session.request(host.url("/flaky"), interceptor: policy)
        let unavailableResponse = await unavailableRequest.validate().serializingData().response
        #expect(unavailableResponse.error?.responseCode == 503)
        #expect(unavailableRequest.retryCount == 0)
        #expect(host.hits("/flaky") == 1)
    }

    @Test func retryPolicyWorksInsideAnInterceptorWithAnAdapter() async throws {
        let adaptations = Locked(0)
        let adapter = Adapter { request, _, completion in
            var request = request
            request.setValue("attempt-\(adaptations.increment())", forHTTPHeaderField: "X-Attempt")
            completion(.success(request))
        }
        // Session-level this time: the policy is reached through the Session's own interceptor.
        let session = Session(configuration: .stubbed(), interceptor: Interceptor(adapter: adapter, retrier: RetryPolicy()))
        session.clock = clock
        stubFailures("/flaky", 1)
        let request = session.request(host.url("/flaky"))
        let response = await request.validate().serializingString().response
        withExtendedLifetime(session) {}

        #expect(response.error == nil)
        #expect(host.requests.map { $0.value(forHTTPHeaderField: "X-Attempt") } == ["attempt-1", "attempt-2"])
        #expect(adaptations.current == 2)
        #expect(request.retryCount == 1)
        #expect(clock.delays == [0.5])
    }

    /// Once per failed attempt, then once more by the serializer that passes the last failure on,
    /// as in Alamofire; the policy's answer to that last call is the same `.doNotRetry`.
    @Test func retrierIsAskedOncePerFailureAndAgainByTheSerializer() async throws {
        let recorder = RecordingRetrier(RetryPolicy())
        stubFailures("/flaky", 5)
        let request = session.request(host.url("/flaky"), interceptor: recorder)
        let response = await request.validate().serializingData().response

        #expect(response.error?.responseCode == 503)
        #expect(recorder.decisions.map(\.retryCount) == [0, 1, 2, 2])
        #expect(recorder.decisions.map { describe($0.result) } == ["delay 0.5", "delay 1.0", "doNotRetry", "doNotRetry"])
        #expect(clock.delays == [0.5, 1.0])
        #expect(host.hits("/flaky") == 3)
    }
}

/// Wraps a retrier and records each question it is asked and the answer given.
private final class RecordingRetrier: RequestInterceptor {
    struct Decision {
        let retryCount: Int
        let error: any Error
        let result: RetryResult
    }

    private let wrapped: any RequestRetrier
    private let recorded = Locked<[Decision]>([])

    init(_ wrapped: any RequestRetrier) { self.wrapped = wrapped }

    var decisions: [Decision] { recorded.current }

    /// The URLError code inside each error the retrier was asked about.
    var errorCodes: [URLError.Code?] { decisions.map { ($0.error.asAFError?.underlyingError as? URLError)?.code } }

    func retry(_ request: Request, for session: Session, dueTo error: any Error, completion: @escaping @Sendable (RetryResult) -> Void) {
        let retryCount = request.retryCount
        wrapped.retry(request, for: session, dueTo: error) { result in
            self.recorded.withValue { $0.append(Decision(retryCount: retryCount, error: error, result: result)) }
            completion(result)
        }
    }
}

/// A comparable summary of a RetryResult.
private func describe(_ result: RetryResult) -> String {
    switch result {
    case .retry: "retry"
    case let .retryWithDelay(delay): "delay \(delay)"
    case .doNotRetry: "doNotRetry"
    case let .doNotRetryWithError(error): "doNotRetryWithError \(error)"
    }
}
