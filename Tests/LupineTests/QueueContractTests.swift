import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// Alamofire's queue contract: a handler or a validator added right after the first response
/// handler still applies, whether the answer comes from the network, a URLProtocol stub that
/// answers at once or the HTTP cache.
@Suite struct QueueContractTests {
    @Test func validatorAddedRightAfterTheResponseHandlerAppliesOverTheNetwork() async throws {
        let server = try await testServer()
        for _ in 0..<20 {
            let outcome = await withCheckedContinuation { continuation in
                AF.request(server.url("/status/200"))
                    .response { continuation.resume(returning: $0.error) }
                    .validate(statusCode: [201])
            }
            #expect(outcome?.responseCode == 200, "\(String(describing: outcome))")
        }
    }

    @Test func validatorChainedBeforeTheHandlerAppliesToAStubThatAnswersAtOnce() async throws {
        try await expectValidatorAppliesToAStub { request, handler in
            request.validate(statusCode: [201]).response(completionHandler: handler)
        }
    }

    @Test func validatorAddedRightAfterTheResponseHandlerAppliesToAStub() async throws {
        try await expectValidatorAppliesToAStub { request, handler in
            request.response(completionHandler: handler).validate(statusCode: [201])
        }
    }

    /// Twenty requests to a URLProtocol stub that answers 200 at once, each chained by `chain`
    /// with a validator accepting only 201 and a handler: each fails that validation.
    private func expectValidatorAppliesToAStub(
        _ chain: (DataRequest, @escaping @Sendable (AFDataResponse<Data?>) -> Void) -> Void
    ) async throws {
        let host = StubURLProtocol.host()
        host.stub("/ok", .respond(status: 200, chunks: [Data("body".utf8)]))
        let session = Session(configuration: .stubbed())
        for _ in 0..<20 {
            let outcome = await withCheckedContinuation { continuation in
                chain(session.request(host.url("/ok"))) { continuation.resume(returning: $0.error) }
            }
            #expect(outcome?.responseCode == 200, "\(String(describing: outcome))")
        }
    }

    /// A caller whose thread the scheduler set aside inside the `response` call that scheduled the
    /// start, while the threads it woke answered (stood for here by the request's count of such
    /// callers, held for 50 ms): the start waits for it, and what it chains still applies.
    @Test func validatorChainedByACallerHeldUpInsideTheHandlerCallApplies() async throws {
        let host = StubURLProtocol.host()
        host.stub("/ok", .respond(status: 200, chunks: [Data("body".utf8)]))
        let session = Session(configuration: .stubbed())
        let outcome = await withCheckedContinuation { continuation in
            let request = session.request(host.url("/ok"))
            request.callersSchedulingStart.add(1, ordering: .sequentiallyConsistent)
            request.response { continuation.resume(returning: $0.error) }
            Thread.sleep(forTimeInterval: 0.05)
            request.validate(statusCode: [201])
            request.callersSchedulingStart.subtract(1, ordering: .sequentiallyConsistent)
        }
        #expect(outcome?.responseCode == 200, "\(String(describing: outcome))")
        #expect(host.hits("/ok") == 1)
    }

    /// The request does not wait for its caller to leave before it starts (it used to, on a
    /// timer, costing most closure requests two 250 µs rounds): it reaches the stub while the
    /// caller is still inside the handler call, and it is the answer's validation that waits, so
    /// the validator chained once the caller goes on still applies.
    @Test func requestStartsWhileItsCallerIsInsideAndItsValidationWaitsForTheCaller() async throws {
        let host = StubURLProtocol.host()
        host.stub("/ok", .respond(status: 200, chunks: [Data("body".utf8)]))
        let session = Session(configuration: .stubbed())
        let request = session.request(host.url("/ok"))
        let outcome = Locked<AFError??>(nil)
        request.callersSchedulingStart.add(1, ordering: .sequentiallyConsistent)
        request.response { response in outcome.withValue { $0 = .some(response.error) } }
        let startedWhileInside = await waitUntil(timeout: 10) { host.hits("/ok") == 1 }
        request.validate(statusCode: [201])
        request.callersSchedulingStart.subtract(1, ordering: .sequentiallyConsistent)
        #expect(startedWhileInside, "the request waited for its caller to leave before it started")
        #expect(await waitUntil { outcome.current != nil })
        let error = outcome.current ?? nil
        #expect(error?.responseCode == 200, "\(String(describing: error))")
    }

    @Test func secondHandlerAddedRightAfterTheFirstRunsOnTheSameOutcome() async throws {
        let server = try await testServer()
        let url = server.url("/cached/contract?Cache-Control=max-age%3D60")
        let session = HTTPCacheTests.session()
        // Once from the network, then from the cache: both paths keep the contract.
        for _ in 0..<2 {
            let (first, second) = await withCheckedContinuation { continuation in
                let seen = Locked<[Int?]>([])
                session.request(url)
                    .response { response in seen.withValue { $0.append(response.response?.statusCode) } }
                    .response { response in
                        let all = seen.withValue { $0 + [response.response?.statusCode] }
                        continuation.resume(returning: (all.first ?? nil, all.last ?? nil))
                    }
            }
            #expect(first == 200)
            #expect(second == 200)
        }
    }
}
