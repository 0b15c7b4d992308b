import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a Request needs from the Session that owns it.
public protocol RequestDelegate: AnyObject, Sendable {
    /// The configuration used for cURL descriptions and default headers.
    var sessionConfiguration: URLSessionConfiguration { get }
    /// `Session.startRequestsImmediately`.
    var startImmediately: Bool { get }
    /// The request asks to start its setup.
    func readyToPerform(request: Request)
    /// The request finished; the owner forgets it.
    func cleanup(after request: Request)
    /// Asks the retriers; the result is delivered on the owner's root queue.
    func retryResult(for request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void)
    /// Schedules a retry, optionally delayed.
    func retryRequest(_ request: Request, withDelay timeDelay: TimeInterval?)
}
