import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `URLSessionTask` handed to callbacks whose Alamofire signature needs one (`RedirectHandler`,
/// `Redirector.modify`): it describes the current hop of a request, and its `cancel()`, `suspend()`
/// and `resume()` act on the Request. Lupine runs no URLSession, so there is no real task.
final class HopTask: URLSessionDataTask, @unchecked Sendable {
    private let hopRequest: URLRequest
    private let hopResponse: HTTPURLResponse?
    private weak var owner: Request?
    private let identifier: Int

    init(request: URLRequest, response: HTTPURLResponse?, owner: Request, identifier: Int) {
        self.hopRequest = request
        self.hopResponse = response
        self.owner = owner
        self.identifier = identifier
        super.init()
    }

    override var originalRequest: URLRequest? { owner?.performedRequests.last ?? hopRequest }
    override var currentRequest: URLRequest? { hopRequest }
    override var response: URLResponse? { hopResponse }
    override var taskIdentifier: Int { identifier }

    override var state: URLSessionTask.State {
        switch owner?.state {
        case .suspended?: .suspended
        case .cancelled?: .canceling
        case .finished?, nil: .completed
        default: .running
        }
    }

    override func cancel() { owner?.cancel() }
    override func suspend() { owner?.suspend() }
    override func resume() { owner?.resume() }
}
