import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Lupine
import LupineTestServer

/// An interceptor that sends a request's first attempt to `server`'s /status/503 and retries it
/// once: the second attempt goes to the request's own URL.
func firstAttemptFailsInterceptor(on server: LupineTestServer) -> Interceptor {
    let attempts = Locked(0)
    let adapter = Adapter { request, _, completion in
        var request = request
        if attempts.increment() == 1 { request.url = URL(string: server.url("/status/503")) }
        completion(.success(request))
    }
    let retrier = Retrier { request, _, _, completion in
        completion(request.retryCount == 0 ? .retry : .doNotRetry)
    }
    return Interceptor(adapter: adapter, retrier: retrier)
}
