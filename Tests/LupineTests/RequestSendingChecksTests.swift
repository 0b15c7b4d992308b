import Foundation
import Lupine
import LupineTestServer
import Testing

/// What the Session checks and applies once per attempt, just before an exchange goes out.
@Suite struct RequestSendingChecksTests {
    @Test func resourceTimeoutCoversTheWholeRedirectChain() async throws {
        let server = try await testServer()
        // Two hops of 0.6 s each: each alone fits in the 1 s resource timeout, the chain does not.
        let inner = "/redirect-to?url=/get&delay=0.6".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForResource = 1
        let session = Session(configuration: configuration)
        let response = await session.request(server.url("/redirect-to?url=\(inner)&delay=0.6")).serializingData().response
        #expect(response.error?.sessionTaskURLErrorCode == .timedOut)
    }

    @Test func resourceTimeoutRestartsForARetry() async throws {
        let server = try await testServer()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForResource = 3
        let retrier = Retrier { request, _, _, completion in completion(request.retryCount < 3 ? .retry : .doNotRetry) }
        let session = Session(configuration: configuration)
        // Four attempts of 1 s each: all fit, because every attempt has its own deadline (one
        // deadline for all would end at 3 s, in the fourth). Each attempt has 2 s to spare, which
        // a loaded test machine needs: two attempts of 1.2 s against 2 s left it 0.8 s.
        let request = session.request(server.url("/delay/1"), interceptor: retrier)
            .validate { _, _, _ in .failure(AFError.explicitlyCancelled) }
        let response = await request.serializingData().response
        #expect(request.retryCount == 3)
        #expect(response.error?.sessionTaskURLErrorCode == nil, "\(String(describing: response.error))")
    }
}
