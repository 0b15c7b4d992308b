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
        configuration.timeoutIntervalForResource = 2
        let retrier = Retrier { request, _, _, completion in completion(request.retryCount == 0 ? .retry : .doNotRetry) }
        let session = Session(configuration: configuration)
        // Each attempt takes 1.2 s: both fit, because every attempt has its own deadline (one
        // deadline for both would end at 2 s). The margin absorbs a loaded test machine.
        let request = session.request(server.url("/delay/1.2"), interceptor: retrier)
            .validate { _, _, _ in .failure(AFError.explicitlyCancelled) }
        let response = await request.serializingData().response
        #expect(request.retryCount == 1)
        #expect(response.error?.sessionTaskURLErrorCode == nil)
    }
}
