import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
import NIOPosix

extension Session: RequestDelegate {
    /// The configuration requests read (cURL descriptions, default headers).
    public var sessionConfiguration: URLSessionConfiguration { configuration }

    /// `startRequestsImmediately`.
    public var startImmediately: Bool { startRequestsImmediately }

    /// Starts the setup of `request` (called on its first resume in lazy mode).
    public func readyToPerform(request: Request) {
        // No closure is made unless the setup has to be queued (one allocation per request).
        rootQueueRunner.run(self, request) { session, request in
            guard request.beginSetup() else { return }
            session.setUp(request)
        }
    }

    /// Forgets a finished request.
    public func cleanup(after request: Request) {
        let isLast = activeRequests.withLockedValue { requests -> Bool in
            requests.remove(request)
            return requests.isEmpty
        }
        if isLast, shutdownState.isClosed { shutdownState.didDrain() }
    }

    /// Asks the combined interceptor whether `request` is retried; the answer arrives on `rootQueue`.
    ///
    /// A retrier's `.doNotRetryWithError(e)` arrives as
    /// `.doNotRetryWithError(AFError.requestRetryFailed(retryError: e, originalError: error))`, the
    /// error the request then finishes with, as in Alamofire.
    public func retryResult(for request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void) {
        guard let retrier = combinedInterceptor(for: request) else {
            onRootQueue { completion(.doNotRetry) }
            return
        }
        inRequestContext(of: request) {
            ThreadContract.userCode("a request retrier")
            retrier.retry(request, for: self, dueTo: error) { result in
                self.rootQueue.async {
                    guard let retryError = result.error else {
                        completion(result)
                        return
                    }
                    completion(.doNotRetryWithError(AFError.requestRetryFailed(retryError: retryError, originalError: error)))
                }
            }
        }
    }

    /// Sends `request` again, after `timeDelay` seconds when given.
    public func retryRequest(_ request: Request, withDelay timeDelay: TimeInterval?) {
        rootQueue.async {
            guard request.scheduleRetry() else {
                request.finish()
                return
            }
            let retry: @Sendable () -> Void = {
                self.onRootQueue { request.beginRetry() }
            }
            if let timeDelay, timeDelay > 0 {
                let clock = self.clock
                // Any event loop keeps the timer; the retry itself runs on the root queue.
                _ = clock.schedule(on: MultiThreadedEventLoopGroup.singleton.next(), at: clock.now + .lupineSeconds(timeDelay)) {
                    self.rootQueue.async(execute: retry)
                }
            } else {
                retry()
            }
        }
    }
}
