import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Graceful shutdown: a server that stops (SIGTERM, a rolling deploy) lets its outgoing requests
// finish instead of cutting them off, then closes its connections itself rather than leaving that
// to the release of the Session.
extension Session {
    /// Whether `shutdown(gracePeriod:)` was called: the Session takes no new request.
    public var isShutDown: Bool { shutdownState.isClosed }

    /// Shuts the Session down: stops taking requests, lets those in flight finish, cancels those
    /// still running after `gracePeriod`, then closes the transport's connections.
    ///
    /// From the moment it is called, every new request fails with
    /// `AFError.sessionInvalidated(error: nil)` without being sent. Requests already made go on,
    /// retries and redirects included, until they finish or `gracePeriod` has passed; those left
    /// then are cancelled (they fail with `AFError.explicitlyCancelled`). The method returns once
    /// every request has finished and the transport has shut down. Calling it again, or from
    /// several tasks, is harmless: each call returns when the Session is shut down.
    ///
    /// Cancelling the calling task cuts the grace period short: requests still running are
    /// cancelled at once.
    ///
    /// - Parameter gracePeriod: How long requests in flight may take to finish; 10 seconds by default.
    public func shutdown(gracePeriod: Duration = .seconds(10)) async {
        activeRequests.withLockedValue { _ in shutdownState.close() }
        if !hasNoActiveRequest {
            await waitForActiveRequests(atMost: gracePeriod)
        }
        if !hasNoActiveRequest {
            // Cancelled here, not through the root queue, so that every request has taken its
            // cancellation before the transport goes: each then fails as explicitly cancelled.
            for request in activeRequests.withLockedValue({ $0 }) { request.cancel() }
            // A cancelled request finishes as soon as its cancellation reaches the root queue and
            // the transport. This wait ignores the caller's cancellation (it runs in a task of its
            // own), so connections close after the requests have let go of them; the bound only
            // keeps a stuck handler from holding the shutdown.
            await Task { await self.waitForActiveRequests(atMost: .seconds(5)) }.value
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            transport.shutdown { continuation.resume() }
        }
    }

    /// True when no request is active: all were cleaned up after finishing.
    var hasNoActiveRequest: Bool {
        activeRequests.withLockedValue { $0.isEmpty }
    }

    /// Fails `request`, made after the shutdown began, without sending it.
    func rejectAfterShutdown(_ request: Request) {
        request.underlyingQueue.async { request.finish(error: .sessionInvalidated(error: nil)) }
    }

    /// Returns when the last active request is cleaned up, or after `duration`, or when the task
    /// is cancelled.
    private func waitForActiveRequests(atMost duration: Duration) async {
        let state = shutdownState
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await state.waitUntilDrained { [weak self] in self?.hasNoActiveRequest ?? true }
            }
            group.addTask {
                try? await Task.sleep(for: duration)
            }
            await group.next()
            group.cancelAll()
        }
    }
}
