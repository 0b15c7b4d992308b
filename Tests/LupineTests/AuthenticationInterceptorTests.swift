import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import LupineTestServer
import Testing

/// AuthenticationInterceptor against LupineTestServer's `/token` endpoints, which accept only the
/// latest token issued for a key; each test has its own key.
@Suite struct AuthenticationInterceptorTests {
    typealias TokenInterceptor = AuthenticationInterceptor<TokenAuthenticator>

    /// What a request to the protected endpoint ended with.
    struct Outcome: Sendable {
        let response: DataResponse<HTTPBinResponse, AFError>
        let retryCount: Int

        var sentToken: String? { response.value?.header("Authorization") }
    }

    /// Sends `count` requests to the protected endpoint at once.
    func sendConcurrently(_ count: Int, to authenticator: TokenAuthenticator, with interceptor: TokenInterceptor) async -> [Outcome] {
        await withTaskGroup(of: Outcome.self) { group in
            for _ in 0..<count {
                group.addTask { await send(to: authenticator, with: interceptor) }
            }
            var outcomes: [Outcome] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
    }

    func send(to authenticator: TokenAuthenticator, with interceptor: any RequestInterceptor) async -> Outcome {
        let request = AF.request(authenticator.protectedURL, interceptor: interceptor).validate()
        let response = await request.serializingDecodable(HTTPBinResponse.self).response
        return Outcome(response: response, retryCount: request.retryCount)
    }

    /// The failure of the request's attempt under the `.requestRetryFailed` wrappers: a serializer
    /// passes the request's error on and asks the retriers again, as Alamofire's does, so a
    /// refusal can wrap the request's own `.requestRetryFailed`.
    static func attemptFailure(_ error: any Error) -> AFError? {
        guard case let .requestRetryFailed(_, originalError)? = error as? AFError else { return error as? AFError }
        return attemptFailure(originalError)
    }

    /// The retry decision of `interceptor` for `request`.
    func retryResult(of interceptor: TokenInterceptor, for request: Request, error: AFError) async -> RetryResult {
        await withCheckedContinuation { continuation in
            interceptor.retry(request, for: AF, dueTo: error) { continuation.resume(returning: $0) }
        }
    }

    @Test func credentialIsAppliedToEveryRequest() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer())
        let token = try await authenticator.issueToken()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: token)
        let outcomes = await sendConcurrently(5, to: authenticator, with: interceptor)
        #expect(outcomes.allSatisfy { $0.response.error == nil && $0.retryCount == 0 })
        #expect(outcomes.map(\.sentToken) == Array(repeating: "Bearer \(token.value)", count: 5))
        #expect(authenticator.refreshes.current == 0)
        #expect(try await authenticator.issuedCount() == 1)
    }

    @Test func credentialThatRequiresRefreshIsRefreshedBeforeSending() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer())
        let interceptor = AuthenticationInterceptor(authenticator: authenticator,
                                                    credential: BearerToken(value: "expired", requiresRefresh: true))
        let outcome = await send(to: authenticator, with: interceptor)
        #expect(outcome.response.error == nil)
        #expect(outcome.retryCount == 0)
        #expect(outcome.sentToken == "Bearer \(authenticator.key)-1")
        #expect(interceptor.credential?.value == "\(authenticator.key)-1")
        #expect(authenticator.refreshes.current == 1)
        #expect(try await authenticator.issuedCount() == 1)
    }

    @Test func twentyRequestsRejectedWithAnExpiredTokenShareOneRefresh() async throws {
        // The refresh takes a moment, so most rejections arrive while it runs and wait for it.
        let authenticator = TokenAuthenticator(server: try await testServer(), refreshDelay: 0.2)
        let expired = try await authenticator.issueToken()
        _ = try await authenticator.issueToken()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: expired)
        let outcomes = await sendConcurrently(20, to: authenticator, with: interceptor)
        #expect(outcomes.allSatisfy { $0.response.error == nil })
        // A request a loaded machine starts after the refresh ended is sent with the new token at
        // once (retryCount 0); none is retried twice.
        #expect(outcomes.allSatisfy { $0.retryCount <= 1 })
        #expect(outcomes.contains { $0.retryCount == 1 })
        #expect(outcomes.allSatisfy { $0.sentToken == "Bearer \(authenticator.key)-3" })
        #expect(authenticator.refreshes.current == 1)
        #expect(try await authenticator.issuedCount() == 3)
    }

    @Test func twentyRequestsWithACredentialThatRequiresRefreshShareOneRefresh() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer(), refreshDelay: 0.2)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator,
                                                    credential: BearerToken(value: "expired", requiresRefresh: true))
        let outcomes = await sendConcurrently(20, to: authenticator, with: interceptor)
        #expect(outcomes.allSatisfy { $0.response.error == nil && $0.retryCount == 0 })
        #expect(outcomes.allSatisfy { $0.sentToken == "Bearer \(authenticator.key)-1" })
        #expect(authenticator.refreshes.current == 1)
        #expect(try await authenticator.issuedCount() == 1)
    }

    @Test func requestSentWithAnOldCredentialIsRetriedWithoutANewRefresh() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer())
        let first = try await authenticator.issueToken()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: first)
        // The late request is authenticated with the first token, then held until the refresh is over.
        let held = Locked<(@Sendable () -> Void)?>(nil)
        let attempts = Locked(0)
        let gate = Adapter { urlRequest, _, completion in
            guard attempts.increment() == 1 else { return completion(.success(urlRequest)) }
            held.withValue { $0 = { completion(.success(urlRequest)) } }
        }
        let late = AF.request(authenticator.protectedURL,
                              interceptor: Interceptor(adapters: [interceptor, gate], retriers: [interceptor])).validate()
        let lateTask = late.serializingDecodable(HTTPBinResponse.self)
        #expect(await waitUntil { held.current != nil })
        // The server moves on; a request with the first token is rejected and refreshes it.
        _ = try await authenticator.issueToken()
        let refreshing = await send(to: authenticator, with: interceptor)
        #expect(refreshing.response.error == nil && refreshing.retryCount == 1)
        #expect(refreshing.sentToken == "Bearer \(authenticator.key)-3")

        held.current?()
        let lateResponse = await lateTask.response
        #expect(lateResponse.error == nil)
        #expect(late.retryCount == 1)
        #expect(late.performedRequests.map { $0.value(forHTTPHeaderField: "Authorization") }
            == ["Bearer \(first.value)", "Bearer \(authenticator.key)-3"])
        #expect(authenticator.refreshes.current == 1)
        #expect(try await authenticator.issuedCount() == 3)
    }

    @Test func failedRefreshFailsEveryWaitingRequestWithItsErrorAndDoesNotLoop() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer(), refreshDelay: 0.2)
        authenticator.refreshFails.withValue { $0 = true }
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: BearerToken(value: "rejected"))
        let outcomes = await sendConcurrently(5, to: authenticator, with: interceptor)
        #expect(authenticator.refreshes.current == 1)
        // A request made after the failure starts a new round: its rejection refreshes again.
        let later = await send(to: authenticator, with: interceptor)
        for outcome in outcomes + [later] {
            guard case let .requestRetryFailed(retryError, originalError)? = outcome.response.error else {
                Issue.record("expected requestRetryFailed, got \(String(describing: outcome.response.error))")
                continue
            }
            #expect((retryError as? AFError)?.responseCode == 503)
            #expect(Self.attemptFailure(originalError)?.responseCode == 401)
            #expect(outcome.retryCount == 0)
        }
        #expect(authenticator.refreshes.current == 2)
        #expect(try await authenticator.issuedCount() == 0)
    }

    @Test func missingCredentialFailsAdaptationAndRetry() async throws {
        let server = try await testServer()
        let authenticator = TokenAuthenticator(server: server)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator)
        let outcome = await send(to: authenticator, with: interceptor)
        guard case let .requestAdaptationFailed(error)? = outcome.response.error else {
            Issue.record("expected requestAdaptationFailed, got \(String(describing: outcome.response.error))")
            return
        }
        #expect(error as? AuthenticationError == .missingCredential)
        #expect(outcome.response.response == nil)

        let rejected = AF.request(authenticator.protectedURL).validate()
        let response = await rejected.serializingData().response
        let result = try await retryResult(of: interceptor, for: rejected, error: #require(response.error))
        #expect(result.summary == "doNotRetryWithError(\(AuthenticationError.missingCredential))")
        #expect(authenticator.refreshes.current == 0)
    }

    @Test func failureThatIsNotAnAuthenticationFailureIsNotRetried() async throws {
        let server = try await testServer()
        let authenticator = TokenAuthenticator(server: server)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: BearerToken(value: "any"))
        let request = AF.request(server.url("/status/500"), interceptor: interceptor).validate()
        let response = await request.serializingData().response
        #expect(response.error?.responseCode == 500)
        #expect(request.retryCount == 0)
        #expect(authenticator.refreshes.current == 0)
    }

    @Test func refreshesBeyondTheWindowFailWithExcessiveRefresh() async throws {
        // Each request starts with an expired credential, so each refreshes first.
        let authenticator = TokenAuthenticator(server: try await testServer())
        let clock = ManualUptime()
        let expired = BearerToken(value: "expired", requiresRefresh: true)
        let interceptor = TokenInterceptor(authenticator: authenticator,
                                           credential: expired,
                                           refreshWindow: TokenInterceptor.RefreshWindow(interval: 30, maximumAttempts: 2),
                                           uptime: { clock.now })
        #expect(await send(to: authenticator, with: interceptor).response.error == nil)
        clock.set(1)
        interceptor.credential = expired
        #expect(await send(to: authenticator, with: interceptor).response.error == nil)
        // Two refreshes within the last 30 s, at 0 and 1: a third is refused, even at 30.
        clock.set(30)
        interceptor.credential = expired
        let refused = await send(to: authenticator, with: interceptor)
        guard case let .requestAdaptationFailed(error)? = refused.response.error else {
            Issue.record("expected requestAdaptationFailed, got \(String(describing: refused.response.error))")
            return
        }
        #expect(error as? AuthenticationError == .excessiveRefresh)
        #expect(authenticator.refreshes.current == 2)
        // At 30.5 the refresh at 0 has left the window.
        clock.set(30.5)
        interceptor.credential = expired
        let allowed = await send(to: authenticator, with: interceptor)
        #expect(allowed.response.error == nil)
        #expect(allowed.sentToken == "Bearer \(authenticator.key)-3")
        #expect(try await authenticator.issuedCount() == 3)
    }

    @Test func serverRejectingEveryRefreshedTokenEndsWithExcessiveRefresh() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer())
        let interceptor = AuthenticationInterceptor(authenticator: authenticator,
                                                    credential: BearerToken(value: "rejected"),
                                                    refreshWindow: TokenInterceptor.RefreshWindow(interval: 30, maximumAttempts: 3))
        // Another key's endpoint: none of this key's tokens is ever accepted there.
        let elsewhere = authenticator.server.url("/token/protected?key=never-issued-\(UUID().uuidString)")
        let request = AF.request(elsewhere, interceptor: interceptor).validate()
        let response = await request.serializingData().response
        guard case let .requestRetryFailed(retryError, originalError)? = response.error else {
            Issue.record("expected requestRetryFailed, got \(String(describing: response.error))")
            return
        }
        #expect(retryError as? AuthenticationError == .excessiveRefresh)
        #expect(Self.attemptFailure(originalError)?.responseCode == 401)
        #expect(request.retryCount == 3)
        #expect(authenticator.refreshes.current == 3)
    }

    @Test func settingTheCredentialResetsTheRefreshState() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer())
        authenticator.refreshFails.withValue { $0 = true }
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: BearerToken(value: "rejected"))
        #expect(await send(to: authenticator, with: interceptor).response.error?.isRequestRetryError == true)
        #expect(authenticator.refreshes.current == 1)

        authenticator.refreshFails.withValue { $0 = false }
        interceptor.credential = BearerToken(value: "also-rejected")
        let outcome = await send(to: authenticator, with: interceptor)
        #expect(outcome.response.error == nil)
        #expect(outcome.retryCount == 1)
        #expect(outcome.sentToken == "Bearer \(authenticator.key)-1")
        #expect(authenticator.refreshes.current == 2)
    }

    @Test func settingTheCredentialDuringARefreshReleasesWaitingRequestsAndIgnoresTheRefresh() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer())
        authenticator.holdsRefreshes.withValue { $0 = true }
        let interceptor = AuthenticationInterceptor(authenticator: authenticator,
                                                    credential: BearerToken(value: "expired", requiresRefresh: true))
        let waiting = Task { await sendConcurrently(3, to: authenticator, with: interceptor) }
        #expect(await waitUntil { authenticator.heldRefreshes.current.count == 1 })

        let token = try await authenticator.issueToken()
        interceptor.credential = token
        let outcomes = await waiting.value
        #expect(outcomes.allSatisfy { $0.response.error == nil && $0.sentToken == "Bearer \(token.value)" })

        // The abandoned refresh ends late: its credential is not taken.
        authenticator.heldRefreshes.current.forEach { $0(.success(BearerToken(value: "from-abandoned-refresh"))) }
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(interceptor.credential?.value == token.value)
        #expect(authenticator.refreshes.current == 1)
    }

    @Test func refreshCompletedTwiceCountsOnce() async throws {
        let authenticator = TokenAuthenticator(server: try await testServer())
        authenticator.holdsRefreshes.withValue { $0 = true }
        let interceptor = AuthenticationInterceptor(authenticator: authenticator,
                                                    credential: BearerToken(value: "expired", requiresRefresh: true))
        let waiting = Task { await send(to: authenticator, with: interceptor) }
        #expect(await waitUntil { authenticator.heldRefreshes.current.count == 1 })
        let token = try await authenticator.issueToken()
        let completion = try #require(authenticator.heldRefreshes.current.first)
        completion(.success(token))
        completion(.success(BearerToken(value: "second-call")))
        let outcome = await waiting.value
        #expect(outcome.response.error == nil && outcome.sentToken == "Bearer \(token.value)")
        try await Task.sleep(nanoseconds: 50_000_000)
        #expect(interceptor.credential?.value == token.value)
    }

    @Test func stateMachineStartsOneRefreshForEveryRetryOfTheSameCredential() {
        var state = TokenInterceptor.State(credential: BearerToken(value: "a"), limit: nil)
        var refreshIDs: [Int] = []
        for _ in 0..<20 {
            guard case let .wait(followUp) = state.retry({ _ in }, generation: 0, now: 0) else {
                Issue.record("a retry of the current credential must wait for the refresh")
                return
            }
            if case let .refresh(_, id)? = followUp { refreshIDs.append(id) }
        }
        #expect(refreshIDs == [1])
        let settlement = state.refreshDidEnd(id: 1, with: .success(BearerToken(value: "b")))
        #expect(settlement?.retries.count == 20)
        #expect(state.generation == 1 && state.credential?.value == "b" && !state.isRefreshing)
        // A retry of a request sent with "a" (generation 0) is answered at once.
        guard case let .answer(result) = state.retry({ _ in }, generation: 0, now: 0) else {
            Issue.record("a retry of an older credential must be answered at once")
            return
        }
        #expect(result.summary == "retry")
        #expect(state.refreshDidEnd(id: 1, with: .success(BearerToken(value: "c"))) == nil)
    }
}
