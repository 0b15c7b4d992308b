import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Lupine
import Testing

/// Alamofire's queue contract with Lupine's shorter path (completion on the transport's thread):
/// a validator chained right after a response handler still applies. As with Alamofire, what
/// leaves the caller that time is the request's asynchronous start and the network's round trip;
/// a URLProtocol stub that answers at once can race a validator chained after the handler (chain
/// validators first there, as Alamofire's own tests do).
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
        let host = StubURLProtocol.host()
        host.stub("/ok", .respond(status: 200, chunks: [Data("body".utf8)]))
        let session = Session(configuration: .stubbed())
        for _ in 0..<20 {
            let outcome = await withCheckedContinuation { continuation in
                session.request(host.url("/ok"))
                    .validate(statusCode: [201])
                    .response { continuation.resume(returning: $0.error) }
            }
            #expect(outcome?.responseCode == 200, "\(String(describing: outcome))")
        }
    }
}
