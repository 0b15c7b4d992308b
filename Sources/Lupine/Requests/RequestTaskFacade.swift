import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a facade task reports at one moment: the attempt's values, live or frozen.
struct AttemptTaskView {
    var state: URLSessionTask.State
    var currentRequest: URLRequest?
    var response: HTTPURLResponse?
    var error: AFError?
    var bytesSent: Int64 = 0
    var bytesExpectedToSend: Int64 = 0
    var bytesReceived: Int64 = 0
    var bytesExpectedToReceive: Int64 = 0

    /// What a facade whose request is gone reports.
    static let released = AttemptTaskView(state: .completed)
}

/// The link from a facade task to its attempt: the request (weakly: the request keeps its
/// facades) and the attempt's number.
struct AttemptTaskHandle: @unchecked Sendable {
    private(set) weak var owner: Request?
    let number: Int
    let identifier: Int
    let originalRequest: URLRequest

    init(owner: Request, number: Int, identifier: Int, originalRequest: URLRequest) {
        self.owner = owner
        self.number = number
        self.identifier = identifier
        self.originalRequest = originalRequest
    }

    var view: AttemptTaskView { owner?.attemptTaskView(number) ?? .released }

    /// The task's `resume()`, `suspend()` and `cancel()` act on the request while the attempt runs,
    /// and do nothing once it completed, as a completed URLSessionTask ignores them.
    func drive(_ action: (Request) -> Void) {
        guard let owner, owner.attemptIsLive(number) else { return }
        action(owner)
    }
}

// The facades: a `URLSessionTask` for each attempt of a request, of the class URLSession would
// have made (a download task for a DownloadRequest, an upload task for an UploadRequest, a data
// task otherwise). Lupine runs no URLSession, so each reads its attempt through its handle and
// drives the request. The three classes differ only in their superclass.

/// The facade of an attempt of a DataRequest, DataStreamRequest or WebSocketRequest.
final class DataTaskFacade: URLSessionDataTask, @unchecked Sendable {
    let handle: AttemptTaskHandle

    init(handle: AttemptTaskHandle) {
        self.handle = handle
        super.init()
    }

    override var taskIdentifier: Int { handle.identifier }
    override var originalRequest: URLRequest? { handle.originalRequest }
    override var currentRequest: URLRequest? { handle.view.currentRequest }
    override var response: URLResponse? { handle.view.response }
    override var error: (any Error)? { handle.view.error }
    override var state: URLSessionTask.State { handle.view.state }
    override var countOfBytesSent: Int64 { handle.view.bytesSent }
    override var countOfBytesExpectedToSend: Int64 { handle.view.bytesExpectedToSend }
    override var countOfBytesReceived: Int64 { handle.view.bytesReceived }
    override var countOfBytesExpectedToReceive: Int64 { handle.view.bytesExpectedToReceive }
    override func resume() { handle.drive { $0.resume() } }
    override func suspend() { handle.drive { $0.suspend() } }
    override func cancel() { handle.drive { $0.cancel() } }
}

/// The facade of an attempt of an UploadRequest.
final class UploadTaskFacade: URLSessionUploadTask, @unchecked Sendable {
    let handle: AttemptTaskHandle

    init(handle: AttemptTaskHandle) {
        self.handle = handle
        super.init()
    }

    override var taskIdentifier: Int { handle.identifier }
    override var originalRequest: URLRequest? { handle.originalRequest }
    override var currentRequest: URLRequest? { handle.view.currentRequest }
    override var response: URLResponse? { handle.view.response }
    override var error: (any Error)? { handle.view.error }
    override var state: URLSessionTask.State { handle.view.state }
    override var countOfBytesSent: Int64 { handle.view.bytesSent }
    override var countOfBytesExpectedToSend: Int64 { handle.view.bytesExpectedToSend }
    override var countOfBytesReceived: Int64 { handle.view.bytesReceived }
    override var countOfBytesExpectedToReceive: Int64 { handle.view.bytesExpectedToReceive }
    override func resume() { handle.drive { $0.resume() } }
    override func suspend() { handle.drive { $0.suspend() } }
    override func cancel() { handle.drive { $0.cancel() } }
}

/// The facade of an attempt of a DownloadRequest.
final class DownloadTaskFacade: URLSessionDownloadTask, @unchecked Sendable {
    let handle: AttemptTaskHandle

    init(handle: AttemptTaskHandle) {
        self.handle = handle
        super.init()
    }

    override var taskIdentifier: Int { handle.identifier }
    override var originalRequest: URLRequest? { handle.originalRequest }
    override var currentRequest: URLRequest? { handle.view.currentRequest }
    override var response: URLResponse? { handle.view.response }
    override var error: (any Error)? { handle.view.error }
    override var state: URLSessionTask.State { handle.view.state }
    override var countOfBytesSent: Int64 { handle.view.bytesSent }
    override var countOfBytesExpectedToSend: Int64 { handle.view.bytesExpectedToSend }
    override var countOfBytesReceived: Int64 { handle.view.bytesReceived }
    override var countOfBytesExpectedToReceive: Int64 { handle.view.bytesExpectedToReceive }
    override func resume() { handle.drive { $0.resume() } }
    override func suspend() { handle.drive { $0.suspend() } }
    override func cancel() { handle.drive { $0.cancel() } }

    /// Cancels the download, producing resume data (see `DownloadRequest.cancel(byProducingResumeData:)`);
    /// with a completed attempt, `completionHandler` gets nil.
    override func cancel(byProducingResumeData completionHandler: @escaping (Data?) -> Void) {
        let handler = UncheckedResumeDataHandler(completionHandler)
        guard let download = handle.owner as? DownloadRequest, download.attemptIsLive(handle.number) else {
            handler.call(nil)
            return
        }
        download.cancel(byProducingResumeData: { handler.call($0) })
    }
}

/// URLSessionDownloadTask's resume data handler is not `@Sendable`; DownloadRequest calls it once,
/// from its own queue, as URLSession calls it from its delegate queue.
private struct UncheckedResumeDataHandler: @unchecked Sendable {
    let handler: (Data?) -> Void
    init(_ handler: @escaping (Data?) -> Void) { self.handler = handler }
    func call(_ data: Data?) { handler(data) }
}
