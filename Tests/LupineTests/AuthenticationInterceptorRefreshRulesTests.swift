import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// AuthenticationInterceptor's rules after a failed or excessive refresh, as Alamofire 5.12's own
/// tests state them, against `/status/N` (401 rejects, 200 accepts whatever the credential).
@Suite struct AuthenticationInterceptorRefreshRulesTests {
    struct Credential: AuthenticationCredential, Sendable {
        var accessToken = "a0"
        var requiresRefresh = false
    }

    enum RefreshFailure: Error {
        case network
    }

    /// Counts what the interceptor asks; refreshes give `a1`, `a2`... or `result`, after 10 ms, or
    /// wait for `releaseRefreshes()` while `holdsRefreshes` is set (a refresh asked for after that
    /// call is not held: a test whose wait for it timed out on a busy machine fails, not hangs).
    final class CountingAuthenticator: Authenticator, @unchecked Sendable {
        let applies = Locked(0)
        let refreshes = Locked(0)
        let failureChecks = Locked(0)
        let credentialChecks = Locked(0)
        let result: Result<Credential, RefreshFailure>?
        let holdsRefreshes: Bool
        let held = Locked<[@Sendable () -> Void]>([])
        /// Set by `releaseRefreshes()`; read and written under `held`'s lock.
        private let released = Locked(false)

        init(result: Result<Credential, RefreshFailure>? = nil, holdsRefreshes: Bool = false) {
            self.result = result
            self.holdsRefreshes = holdsRefreshes
        }

        func apply(_ credential: Credential, to urlRequest: inout URLRequest) {
            _ = applies.increment()
            urlRequest.headers.add(.authorization(credential.accessToken))
        }

        func refresh(_ credential: Credential, for session: Session,
                     completion: @escaping @Sendable (Result<Credential, any Error>) -> Void) {
            let count = refreshes.increment()
            let outcome: Result<Credential, any Error> = result.map { $0.mapError { $0 as any Error } }
                ?? .success(Credential(accessToken: "a\(count)"))
            let isHeld = holdsRefreshes && held.withValue { held in
                guard !released.current else { return false }
                held.append { completion(outcome) }
                return true
            }
            guard !isHeld else { return }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) { completion(outcome) }
        }

        func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse,
                        failDueToAuthenticationError error: any Error) -> Bool {
            _ = failureChecks.increment()
            return response.statusCode == 401
        }

        func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool {
            _ = credentialChecks.increment()
            return urlRequest.headers["Authorization"] == credential.accessToken
        }

        func releaseRefreshes() {
            let waiting = held.withValue { held in
                released.withValue { $0 = true }
                defer { held.removeAll() }
                return held
            }
            waiting.forEach { $0() }
        }
    }

    /// Sets the path of each attempt in turn: the first attempt's, then the retry's.
    final class PathAdapter: RequestAdapter, @unchecked Sendable {
        private let paths: Locked<[String]>

        init(_ paths: [String]) {
            self.paths = Locked(paths)
        }

        func adapt(_ urlRequest: URLRequest, for session: Session,
                   completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void) {
            var request = urlRequest
            let path = paths.withValue { $0.isEmpty ? nil : $0.removeFirst() }
            if let path, let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
                components.path = path
                request.url = components.url
            }
            completion(.success(request))
        }
    }

    struct Outcome {
        let response: AFDataResponse<Data?>
        let retryCount: Int
    }

    static func send(_ url: String, _ interceptor: any RequestInterceptor, on session: Session) async -> Outcome {
        let request = session.request(url, interceptor: interceptor).validate()
        let response = await withCheckedContinuation { continuation in
            request.response { continuation.resume(returning: $0) }
        }
        return Outcome(response: response, retryCount: request.retryCount)
    }

    static func underlying(_ error: AFError?) -> (any Error)? {
        switch error {
        case let .requestRetryFailed(retryError, _)?: retryError
        case let .requestAdaptationFailed(adaptError)?: adaptError
        default: nil
        }
    }

    // MARK: After a failed refresh

    @Test func aNewRequestCanTriggerANewRefreshAfterAFailedRefresh() async throws {
        let server = try await testServer()
        let session = Session()
        let authenticator = CountingAuthenticator(result: .failure(.network))
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Credential())

        let first = await Self.send(server.url("/status/401"), interceptor, on: session)
        #expect(first.response.error?.isRequestRetryError == true)
        #expect(authenticator.refreshes.current == 1)

        let second = await Self.send(server.url("/status/401"), interceptor, on: session)
        #expect(authenticator.applies.current == 2)
        #expect(authenticator.refreshes.current == 2)
        #expect(authenticator.failureChecks.current == 2)
        #expect(authenticator.credentialChecks.current == 2)
        #expect(second.response.error?.isRequestRetryError == true)
        #expect(Self.underlying(second.response.error) as? RefreshFailure == .network)
        #expect(second.retryCount == 0)
    }

    @Test func aRequestInFlightDuringAFailedRefreshGetsItsErrorWithoutRefreshing() {
        // The state machine alone: the failure decides the requests of its round.
        var state = AuthenticationInterceptor<CountingAuthenticator>.State(credential: Credential(), limit: nil)
        guard case .wait(.refresh(_, let id)?) = state.retry({ _ in }, generation: 0, now: 0) else {
            Issue.record("the first rejection must start a refresh")
            return
        }
        _ = state.refreshDidEnd(id: id, with: .failure(RefreshFailure.network))
        guard case let .answer(result) = state.retry({ _ in }, generation: 0, now: 0) else {
            Issue.record("a late rejection must be answered at once")
            return
        }
        #expect(result.summary == "doNotRetryWithError(\(RefreshFailure.network))")
    }

    @Test func excessiveRefreshTimesSurviveANewRequestClearingTheFailure() async throws {
        let server = try await testServer()
        let session = Session()
        let authenticator = CountingAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Credential(),
                                                    refreshWindow: .init(interval: 30, maximumAttempts: 1))
        let firstAttempts = PathAdapter(["/status/401", "/status/200"])
        let first = await Self.send(server.url("/get"), Interceptor(adapters: [firstAttempts, interceptor], retriers: [interceptor]),
                                    on: session)
        #expect(first.response.error == nil)

        for _ in 0..<2 {
            let refused = await Self.send(server.url("/status/401"), interceptor, on: session)
            #expect(refused.response.error?.isRequestRetryError == true)
            #expect(Self.underlying(refused.response.error) as? AuthenticationError == .excessiveRefresh)
        }
        #expect(authenticator.refreshes.current == 1)
    }

    // MARK: Excessive refresh on the adapt path

    @Test func excessiveRefreshOnTheAdaptPathFailsWithoutCredentials() async throws {
        let server = try await testServer()
        let session = Session()
        let authenticator = CountingAuthenticator(result: .success(Credential(accessToken: "a1", requiresRefresh: true)))
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Credential(requiresRefresh: true),
                                                    refreshWindow: .init(interval: 30, maximumAttempts: 1))

        let outcome = await Self.send(server.url("/status/200"), interceptor, on: session)

        #expect(outcome.response.request?.headers["Authorization"] == nil)
        #expect(outcome.response.error?.isRequestAdaptationError == true)
        #expect(Self.underlying(outcome.response.error) as? AuthenticationError == .excessiveRefresh)
        #expect(authenticator.applies.current == 0)
        #expect(authenticator.refreshes.current == 1)
        #expect(outcome.retryCount == 0)
    }

    @Test func everyAdaptationDeferredBehindThatRefreshFailsTheSameWay() async throws {
        let server = try await testServer()
        let session = Session()
        let authenticator = CountingAuthenticator(result: .success(Credential(accessToken: "a1", requiresRefresh: true)),
                                                  holdsRefreshes: true)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Credential(requiresRefresh: true),
                                                    refreshWindow: .init(interval: 30, maximumAttempts: 1))

        let outcomes = Task {
            await withTaskGroup(of: Outcome.self) { group in
                for _ in 0..<3 {
                    group.addTask { await Self.send(server.url("/status/200"), interceptor, on: session) }
                }
                return await Array(group)
            }
        }
        // All three wait behind the one refresh before it ends. The interceptor asks the
        // authenticator from its own queue, a moment after it starts counting the refresh as
        // running: released before it was asked for, the refresh would be held for good.
        #expect(await waitUntil { interceptor.isRefreshingWithWaiting(3) && authenticator.held.current.count == 1 })
        authenticator.releaseRefreshes()

        for outcome in await outcomes.value {
            #expect(outcome.response.request?.headers["Authorization"] == nil)
            #expect(outcome.response.error?.isRequestAdaptationError == true)
            #expect(Self.underlying(outcome.response.error) as? AuthenticationError == .excessiveRefresh)
            #expect(outcome.retryCount == 0)
        }
        #expect(authenticator.applies.current == 0)
        #expect(authenticator.refreshes.current == 1)
    }

    // MARK: Who waits for a refresh

    @Test func aNewRequestIsNotHeldBackByARefreshARejectionStarted() async throws {
        let server = try await testServer()
        let session = Session()
        let authenticator = CountingAuthenticator(holdsRefreshes: true)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Credential())

        let rejected = Task {
            await Self.send(server.url("/get"),
                            Interceptor(adapters: [PathAdapter(["/status/401", "/status/200"]), interceptor], retriers: [interceptor]),
                            on: session)
        }
        #expect(await waitUntil { authenticator.held.current.count == 1 })
        // The refresh is held: the new request goes out with the current credential meanwhile
        // (waited for with a time limit, so that a request held back fails the test, not hangs it).
        let otherDone = Locked(false)
        let otherTask = Task {
            defer { otherDone.withValue { $0 = true } }
            return await Self.send(server.url("/status/200"), interceptor, on: session)
        }
        #expect(await waitUntil { otherDone.current })
        authenticator.releaseRefreshes()
        let other = await otherTask.value
        #expect(other.response.error == nil)
        #expect(other.response.request?.headers["Authorization"] == "a0")

        let first = await rejected.value
        #expect(first.response.error == nil)
        #expect(first.retryCount == 1)
        #expect(first.response.request?.headers["Authorization"] == "a1")
        #expect(authenticator.applies.current == 3)
        #expect(authenticator.refreshes.current == 1)
    }

    @Test func aRefreshedCredentialIsAppliedByAdaptingTheWaitingRequestsAgain() async throws {
        let server = try await testServer()
        let session = Session()
        let authenticator = CountingAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: Credential(requiresRefresh: true))

        let outcome = await Self.send(server.url("/status/200"), interceptor, on: session)

        #expect(outcome.response.error == nil)
        #expect(outcome.response.request?.headers["Authorization"] == "a1")
        #expect(authenticator.applies.current == 1)
        #expect(authenticator.refreshes.current == 1)
    }
}

extension AuthenticationInterceptor {
    /// Whether a refresh runs with `count` adaptations waiting for it (for tests).
    func isRefreshingWithWaiting(_ count: Int) -> Bool {
        stateForTesting { $0.isRefreshing && $0.waitingAdaptCount == count }
    }
}
